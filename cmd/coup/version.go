package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/coupharness/coup/verdict"
)

const versionUsage = `usage: coup version

Prints coup's version: the module version it was built at, or "devel"
with the commit it was built from (and "modified" when the work tree had
changes), and the Go release that built it. coup --version does the same.
`

func versionCmd(args []string) int {
	fs := newFlags("version")
	pos, code, ok := parseArgs(fs, versionUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(fs, versionUsage, "no arguments expected, got %q", pos[0])
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Println(versionString(info))
	return verdict.ExitOK
}

// versionString describes the build: "coup v1.2.0 (go1.26.8 linux/amd64)",
// or "coup devel 365da06a1b2c (2025-05-01T10:00:00Z, modified) (go1.26.8
// linux/amd64)" for a build of a work tree whose module has no version.
func versionString(info *debug.BuildInfo) string {
	goVersion := runtime.Version()
	v := "devel"
	if info != nil {
		goVersion = info.GoVersion
		if m := info.Main.Version; m != "" && m != "(devel)" {
			v = m
		} else {
			var rev, when string
			modified := false
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.time":
					when = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" {
				v += " " + rev
				switch {
				case when != "" && modified:
					v += fmt.Sprintf(" (%s, modified)", when)
				case when != "":
					v += fmt.Sprintf(" (%s)", when)
				case modified:
					v += " (modified)"
				}
			}
		}
	}
	return fmt.Sprintf("coup %s (%s %s/%s)", v, goVersion, runtime.GOOS, runtime.GOARCH)
}
