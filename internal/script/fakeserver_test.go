package script_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A fakeServer speaks just enough RESP2 for go-redis: it refuses HELLO (so
// go-redis stays on RESP2), answers OK to other commands, and answers each
// EVALSHA/EVAL with the next of its replies, raw RESP.
type fakeServer struct {
	ln      net.Listener
	mu      sync.Mutex
	replies []string
	evals   int
	conns   []net.Conn
	forever string // the reply once replies run out, if not empty
}

func startFakeServer(t *testing.T, replies ...string) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeServer{ln: ln, replies: replies}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeServer) serve(c net.Conn) {
	defer c.Close()
	rd := bufio.NewReader(c)
	for {
		args, err := readCommand(rd)
		if err != nil {
			return
		}
		reply := "+OK\r\n"
		switch strings.ToLower(args[0]) {
		case "hello":
			reply = "-ERR unknown command 'HELLO'\r\n"
		case "evalsha", "eval":
			f.mu.Lock()
			f.evals++
			if len(f.replies) > 0 {
				reply, f.replies = f.replies[0], f.replies[1:]
			} else if f.forever != "" {
				reply = f.forever
			} else {
				reply = ":0\r\n"
			}
			f.mu.Unlock()
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

func readCommand(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, fmt.Errorf("not an array: %q", line)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	args := make([]string, n)
	for i := range args {
		if _, err := rd.ReadString('\n'); err != nil { // $len
			return nil, err
		}
		arg, err := rd.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args[i] = strings.TrimSuffix(arg, "\r\n")
	}
	return args, nil
}
