package slotlimitotel_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The package doc names every primitive the Observer serves: each type
// of the library whose Config takes an Observer, found in the library's
// sources beside this module, so that a package added there and left out
// here fails.
func TestPackageDocNamesEveryPrimitive(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " ")

	// The packages of the library whose Config has an Observer field.
	field := regexp.MustCompile(`(?m)^\s+Observer\s+observe\.Observer\s*$`)
	pkgName := regexp.MustCompile(`(?m)^package (\w+)$`)
	found := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "otel", "internal", "examples", "cmd", "bench", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Base(path) != "config.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := pkgName.FindSubmatch(src); m != nil && field.Match(src) {
			found[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The types of each package that report to it.
	types := map[string][]string{
		"slotlimit":  {"slotlimit.Limiter", "slotlimit.Counter"},
		"adaptive":   {"adaptive.Limiter"},
		"lock":       {"lock.Mutex"},
		"ratelimit":  {"ratelimit.Limiter"},
		"delayqueue": {"delayqueue.Queue"},
		"recent":     {"recent.List"},
		"redpacket":  {"redpacket.Store"},
	}
	if len(found) < len(types) {
		t.Fatalf("found the Observer field in %d packages only: %v", len(found), found)
	}
	for pkg := range found {
		names, ok := types[pkg]
		if !ok {
			t.Errorf("package %s takes an Observer, but this test does not know its types: add them, and name them in doc.go", pkg)
		}
		for _, name := range names {
			if !strings.Contains(text, name) {
				t.Errorf("the package doc does not name %s", name)
			}
		}
	}
}
