package harness

import "runtime/debug"

// ModuleVersion returns the version of the module at path that this
// binary was built with, as "v0.9.4", or "unknown" when the build does not
// say: a report names the peers it measured.
func ModuleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, m := range info.Deps {
		if m.Path == path {
			if m.Replace != nil && m.Replace.Version != "" {
				return m.Replace.Version
			}
			return m.Version
		}
	}
	return "unknown"
}
