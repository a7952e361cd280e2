// Package layering_test checks how the module's library packages depend
// on one another and on the world: each primitive is built from the
// internal packages alone, imports no other primitive to share the house
// rules, and needs nothing beyond go-redis and the standard library.
package layering_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/slotlimit/slotlimit"

// wraps are the only library packages that import other library packages:
// httplimit is middleware around the types of slotlimit and ratelimit.
var wraps = map[string][]string{
	module + "/httplimit": {module, module + "/ratelimit"},
}

// vocabulary are the public packages that hold only types every package
// names in its API, as context does for the standard library: the
// Observer that each Config takes.
var vocabulary = []string{module + "/observe"}

type pkg struct {
	ImportPath string
	Imports    []string
}

// libraryPackages lists the module's library packages: not its commands,
// examples or internal test helpers, nor the benchmark module.
func libraryPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if strings.HasPrefix(rel, "internal") || strings.HasPrefix(rel, "cmd") || strings.HasPrefix(rel, "examples") {
			continue
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 8 {
		t.Fatalf("go list found %d library packages, want the 8 or more of the module", len(pkgs))
	}
	return pkgs
}

// No library package imports another to share the house rules: they
// share them through internal packages. httplimit alone imports the
// packages whose types it wraps.
func TestNoLibraryPackageImportsAnother(t *testing.T) {
	for _, p := range libraryPackages(t) {
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) || strings.HasPrefix(imp, module+"/internal/") || slices.Contains(vocabulary, imp) {
				continue
			}
			if !slices.Contains(wraps[p.ImportPath], imp) {
				t.Errorf("%s imports %s", p.ImportPath, imp)
			}
		}
	}
}

// The library's packages import go-redis and the standard library, and
// nothing else from outside the module.
func TestLibraryImportsOnlyGoRedis(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Standard}}", "std").Output()
	if err != nil {
		t.Fatalf("go list std: %v", err)
	}
	std := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		std[strings.Fields(line)[0]] = true
	}
	for _, p := range libraryPackages(t) {
		for _, imp := range p.Imports {
			if std[imp] || strings.HasPrefix(imp, module) || strings.HasPrefix(imp, "github.com/redis/go-redis/v9") {
				continue
			}
			t.Errorf("%s imports %s, from outside the module, go-redis and the standard library", p.ImportPath, imp)
		}
	}
}
