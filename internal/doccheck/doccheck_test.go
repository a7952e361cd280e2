// Package doccheck_test checks the module's documentation: every complete
// program in a README builds against the module as it is, and no public
// doc speaks of things a user cannot act on.
package doccheck_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slotlimit/slotlimit/internal/waitqueue"
)

// root returns the module's root directory.
func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// docs returns the Markdown files users read: every README and docs/,
// but not the CHANGELOG, which is history, nor the benchmark module's.
func docs(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "bench") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") && name != "CHANGELOG.md" && name != "BENCHMARKS.md" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var goBlock = regexp.MustCompile("(?s)```go\n(package main\n.*?)```")

// ownModule reports whether file lies in a module of its own below dir,
// such as otel/: its programs need that module's requirements, and
// .ci/run builds them from a user's module outside the repository.
func ownModule(dir, file string) bool {
	for d := filepath.Dir(file); d != dir && strings.HasPrefix(d, dir); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return true
		}
	}
	return false
}

// Every README program that is a whole `package main` builds against the
// module as it is now.
func TestReadmeProgramsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	dir := root(t)
	n := 0
	for _, file := range docs(t, dir) {
		if ownModule(dir, file) {
			continue
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range goBlock.FindAllSubmatch(text, -1) {
			n++
			rel, _ := filepath.Rel(dir, file)
			tmp, err := os.MkdirTemp(dir, "_readme")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(tmp)
			if err := os.WriteFile(filepath.Join(tmp, "main.go"), m[1], 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("go", "vet", "./"+filepath.Base(tmp))
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s, program %d does not build: %v\n%s", rel, i+1, err, out)
			}
		}
	}
	if n == 0 {
		t.Fatal("found no README program")
	}
}

// No public doc names the design documents the project grew from, or an
// internal package, which a user can neither read nor import.
func TestDocsSpeakToUsers(t *testing.T) {
	dir := root(t)
	banned := regexp.MustCompile(`(?i)\bseeds?\b|design note|internal/|callerr`)
	for _, file := range docs(t, dir) {
		rel, _ := filepath.Rel(dir, file)
		if strings.HasPrefix(rel, "internal"+string(filepath.Separator)) {
			continue // written for those who work on the module
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(text, []byte("\n")) {
			if banned.Match(line) {
				t.Errorf("%s:%d: %s", rel, i+1, line)
			}
		}
	}
}

var citedTest = regexp.MustCompile("`((?:Test|Fuzz|Example|Benchmark)[A-Za-z0-9_]*)`")

// Every test a doc cites as keeping a promise exists.
func TestDocsCiteTestsThatExist(t *testing.T) {
	dir := root(t)
	defined := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Example|Benchmark)\w*)\(`).FindAllSubmatch(text, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range docs(t, dir) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, file)
		for _, m := range citedTest.FindAllSubmatch(text, -1) {
			if name := string(m[1]); !defined[name] {
				t.Errorf("%s cites %s, which no test file defines", rel, name)
			}
		}
	}
}

// A command built where a user builds it, with go build ./cmd/NAME at the
// root of the repository or go build in cmd/NAME, is ignored by git, so
// that it never shows in git status nor lands in a commit.
func TestBuiltCommandsAreIgnored(t *testing.T) {
	dir := root(t)
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--is-inside-work-tree").Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
		t.Skip("not a git work tree")
	}
	commands, err := filepath.Glob(filepath.Join(dir, "cmd", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(commands) == 0 {
		t.Fatal("found no command under cmd/")
	}
	for _, main := range commands {
		name := filepath.Base(filepath.Dir(main))
		for _, built := range []string{name, filepath.Join("cmd", name, name)} {
			err := exec.Command("git", "-C", dir, "check-ignore", "-q", "--no-index", built).Run()
			var exit *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &exit) && exit.ExitCode() == 1:
				t.Errorf("%s, which go build makes of cmd/%s, is not ignored: add /%s to .gitignore", built, name, filepath.ToSlash(built))
			default:
				t.Fatalf("git check-ignore %s: %v", built, err)
			}
		}
	}
}

// The README says how often a waiter sends a command while it waits: it
// tries again once a second to keep its place in the queue, a place
// lapses three seconds after the last try, and while its subscription to
// the notices is not yet confirmed it tries every 100 ms at most. Those
// figures are the ones the waiters use.
func TestReadmeWaiterFigures(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(text)), " ")
	for _, f := range []struct {
		phrase     string
		got, means time.Duration
	}{
		{"keeps its place in the queue by trying again once a second", waitqueue.EntryTTL / 3, time.Second},
		{"a place lapses three seconds after the last try", waitqueue.EntryTTL, 3 * time.Second},
		{"a waiter tries every 100 ms at most", waitqueue.MaxPoll, 100 * time.Millisecond},
	} {
		if !strings.Contains(readme, f.phrase) {
			t.Errorf("README.md no longer says %q", f.phrase)
		}
		if f.got != f.means {
			t.Errorf("README.md says %q, but the waiters use %v", f.phrase, f.got)
		}
	}
}

// The README of every library package, and of the otel module, opens with
// a complete program (a whole `package main`, which TestReadmeProgramsBuild
// or .ci/run builds), so that a user can start from it.
func TestPackageReadmesShowAProgram(t *testing.T) {
	dir := root(t)
	n := 0
	for _, file := range docs(t, dir) {
		if filepath.Base(file) != "README.md" {
			continue
		}
		pkg := filepath.Dir(file)
		rel, _ := filepath.Rel(dir, pkg)
		first := strings.Split(filepath.ToSlash(rel), "/")[0]
		if first == "internal" || first == "examples" || first == "cmd" {
			continue
		}
		sources, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		library := false
		for _, src := range sources {
			if strings.HasSuffix(src, "_test.go") {
				continue
			}
			text, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if m := regexp.MustCompile(`(?m)^package (\w+)`).FindSubmatch(text); m != nil && string(m[1]) != "main" {
				library = true
				break
			}
		}
		if !library {
			continue
		}
		n++
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !goBlock.Match(text) {
			t.Errorf("%s shows no complete program (a ```go block that begins with package main)", filepath.ToSlash(filepath.Join(rel, "README.md")))
		}
	}
	if n < 2 {
		t.Fatalf("found %d package READMEs", n)
	}
}

// otel/README.md's go.mod, which .ci/run builds in a module outside the
// repository, requires the library and otel at the version otel/go.mod
// requires of the library, and every OpenTelemetry module at the version
// otel/go.mod requires of go.opentelemetry.io/otel (the newest that builds
// on the library's floor Go); it says the library's go line, and replaces
// both modules, since otel's own replace does not reach a module that
// requires it.
func TestOtelReadmeModuleLines(t *testing.T) {
	dir := root(t)
	readme, err := os.ReadFile(filepath.Join(dir, "otel", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## A complete program\n.*?```\n(module .*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("otel/README.md's \"A complete program\" shows no go.mod")
	}
	userMod := string(m[1])
	required := func(gomod, path string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(path) + `\s+(v\S+)`).FindStringSubmatch(gomod)
		if m == nil {
			return ""
		}
		return m[1]
	}
	otelMod, err := os.ReadFile(filepath.Join(dir, "otel", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	rootMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	release := required(string(otelMod), "github.com/slotlimit/slotlimit")
	otelVersion := required(string(otelMod), "go.opentelemetry.io/otel")
	if release == "" || otelVersion == "" {
		t.Fatal("otel/go.mod requires no version of the library or of go.opentelemetry.io/otel")
	}
	for _, path := range []string{"github.com/slotlimit/slotlimit", "github.com/slotlimit/slotlimit/otel"} {
		if got := required(userMod, path); got != release {
			t.Errorf("otel/README.md's go.mod requires %s %q; otel/go.mod requires the library at %s", path, got, release)
		}
		if !regexp.MustCompile(`(?m)^\s*(?:replace\s+)?` + regexp.QuoteMeta(path) + `\s+=>`).MatchString(userMod) {
			t.Errorf("otel/README.md's go.mod does not replace %s", path)
		}
	}
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^\s*(go\.opentelemetry\.io/otel\S*)\s+(v\S+)`).FindAllStringSubmatch(userMod, -1) {
		n++
		if m[2] != otelVersion {
			t.Errorf("otel/README.md's go.mod requires %s %s; otel/go.mod requires OpenTelemetry %s", m[1], m[2], otelVersion)
		}
	}
	if n == 0 {
		t.Error("otel/README.md's go.mod requires no OpenTelemetry module")
	}
	goLine := regexp.MustCompile(`(?m)^go \S+`)
	if got, want := goLine.FindString(userMod), goLine.FindString(string(rootMod)); got != want {
		t.Errorf("otel/README.md's go.mod says %q; the library's says %q", got, want)
	}
}
