package redistest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/internal/loopback"
	"github.com/slotlimit/slotlimit/internal/skipnote"
)

// Certs are a certificate authority made for one test and a certificate
// for 127.0.0.1 that it signed, in PEM files for redis-server.
type Certs struct {
	CAFile   string // the authority's certificate
	CertFile string // the server's certificate
	KeyFile  string // the server's private key

	ca *x509.CertPool
}

// certLife is how long the certificates are valid, from an hour before
// they are made, so that a clock a little behind still accepts them.
const certLife = 24 * time.Hour

// MakeCerts makes a certificate authority and a server certificate for
// the IP address 127.0.0.1 that it signed, both with ECDSA P-256 keys, and
// writes them to dir as ca.crt, redis.crt and redis.key.
func MakeCerts(dir string) (*Certs, error) {
	notBefore := time.Now().Add(-time.Hour)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "redistest CA"},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(certLife),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    notBefore,
		NotAfter:     notBefore.Add(certLife),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}

	c := &Certs{
		CAFile:   filepath.Join(dir, "ca.crt"),
		CertFile: filepath.Join(dir, "redis.crt"),
		KeyFile:  filepath.Join(dir, "redis.key"),
		ca:       x509.NewCertPool(),
	}
	c.ca.AddCert(caCert)
	for _, f := range []struct {
		path, kind string
		der        []byte
	}{{c.CAFile, "CERTIFICATE", caDER}, {c.CertFile, "CERTIFICATE", der}, {c.KeyFile, "PRIVATE KEY", keyDER}} {
		data := pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der})
		if err := os.WriteFile(f.path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// serial returns a random certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// ClientConfig returns a TLS configuration for a client of a server with
// c's certificate: it trusts c's authority alone, and TLS 1.2 or later.
func (c *Certs) ClientConfig() *tls.Config {
	return &tls.Config{RootCAs: c.ca, MinVersion: tls.VersionTLS12}
}

// CertPool returns a pool holding c's authority alone, for a client's
// tls.Config.RootCAs.
func (c *Certs) CertPool() *x509.CertPool {
	return c.ca
}

// StartTLS runs redis-server as Start does, with extra configuration args,
// but listening only for TLS, with c's certificate, on a free loopback
// port (--port 0 --tls-port): Addr is the TLS port, and a client needs
// c.ClientConfig(). Clients need no certificate of their own. The error
// of a server that would not start, as one built without TLS, holds the
// end of its log.
func StartTLS(c *Certs, args ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoServer
	}
	dir, err := os.MkdirTemp("", "slotlimit-redis-tls-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, tls: c.ClientConfig(), args: append([]string{
		"--tls-cert-file", c.CertFile,
		"--tls-key-file", c.KeyFile,
		"--tls-ca-cert-file", c.CAFile,
		"--tls-auth-clients", "no",
	}, args...)}
	// A port found free can be taken before the server binds it; try a few.
	for range 5 {
		if s.Addr, err = loopback.FreeAddr(); err != nil {
			break
		}
		if err = s.run(bin); err == nil {
			return s, nil
		}
	}
	log := logTail(filepath.Join(dir, "redis.log"), 5)
	os.RemoveAll(dir)
	return nil, fmt.Errorf("redistest: could not start redis-server with TLS (built without TLS support?): %w\nend of its log:\n%s", err, log)
}

// logTail returns the last n lines of the file at path, or why it cannot.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(string(bytes.TrimSpace(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// StartTLSServer is StartServer for a server that listens only for TLS
// (see StartTLS), with certificates made in tb.TempDir(). It skips tb when
// the server cannot be started, as when redis-server is built without TLS,
// or fails it when SLOTLIMIT_REQUIRE_REDIS=1.
func StartTLSServer(tb testing.TB, args ...string) (*Server, *Certs) {
	tb.Helper()
	c, err := MakeCerts(tb.TempDir())
	if err != nil {
		tb.Fatalf("redistest: make certificates: %v", err)
	}
	s, err := StartTLS(c, args...)
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("real Redis with TLS required (%s=1) but unavailable: %v", RequireEnv, err)
		}
		skipnote.Skip(tb, "Redis with TLS", err, "install a redis-server built with TLS")
	}
	tb.Cleanup(s.Close)
	return s, c
}
