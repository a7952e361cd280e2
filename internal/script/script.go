// Package script runs Lua scripts on Redis: one call with EVALSHA and, on
// NOSCRIPT, EVAL; many calls in one pipeline, with the calls that met
// NOSCRIPT sent again by EVAL; and, with a Runner, writes that count only
// once replicas acknowledge them.
package script

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A Script is a Lua script, with its libraries spliced in. Its Run
// sends EVALSHA, and EVAL when the server answers NOSCRIPT, which also
// caches the script again, so a SCRIPT FLUSH or a restarted server needs
// no care from the caller. Run it through a Runner to write with replicas
// or in a pipeline.
type Script struct {
	*redis.Script
	src string
}

// A Lib is Lua source that scripts share. A script includes it by holding
// the line Include, where Lib's source then goes. A script puts that line
// where it first needs the library, so that a call that returns before
// the line does not pay for defining its helpers.
type Lib struct {
	Include string // a whole line, newline included, such as "-- #include lib.lua\n"
	Source  string
}

// New returns the Script of src with each of libs in place of its
// include line. It panics unless src holds each include line exactly
// once, a mistake in the source that New reports at once, since scripts
// are built when a package is initialized.
func New(src string, libs ...Lib) *Script {
	for _, lib := range libs {
		if strings.Count(src, lib.Include) != 1 {
			panic("script: a script must hold the include line " + strings.TrimSpace(lib.Include) + " exactly once")
		}
		src = strings.Replace(src, lib.Include, lib.Source, 1)
	}
	return &Script{Script: redis.NewScript(src), src: src}
}

// cmd returns the command that runs s with keys and args: EVALSHA, or
// with eval EVAL, which carries the source.
func (s *Script) cmd(ctx context.Context, eval bool, keys []string, args []any) *redis.Cmd {
	name, payload := "evalsha", s.Hash()
	if eval {
		name, payload = "eval", s.src
	}
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, name, payload, len(keys))
	for _, key := range keys {
		cmdArgs = append(cmdArgs, key)
	}
	cmdArgs = append(cmdArgs, args...)
	cmd := redis.NewCmd(ctx, cmdArgs...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	return cmd
}
