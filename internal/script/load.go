package script

import (
	"io/fs"
	"path"
	"regexp"
)

// includeLine matches a script's include line, "-- #include name.lua".
var includeLine = regexp.MustCompile(`(?m)^-- #include (\S+)\n`)

// Load returns the Script of the file name in fsys, a package's embedded
// scripts, with each include line replaced by the Lib of that name in
// libs or, failing that, by the file of that name beside it. It panics
// when a file is missing or an include line stands twice, a mistake in
// the source that Load reports at once, since scripts are loaded when a
// package is initialized.
func Load(fsys fs.FS, name string, libs ...Lib) *Script {
	src := read(fsys, name)
	given := make(map[string]bool, len(libs))
	for _, lib := range libs {
		given[lib.Include] = true
	}
	for _, m := range includeLine.FindAllStringSubmatch(src, -1) {
		if !given[m[0]] {
			libs = append(libs, Lib{Include: m[0], Source: read(fsys, path.Join(path.Dir(name), m[1]))})
			given[m[0]] = true
		}
	}
	return New(src, libs...)
}

func read(fsys fs.FS, name string) string {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		panic("script: " + err.Error())
	}
	return string(b)
}
