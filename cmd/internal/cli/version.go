package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version and commit are stamped by the Makefile:
//
//	go build -ldflags "-X svc/cmd/internal/cli.version=$(VERSION) -X svc/cmd/internal/cli.commit=$(COMMIT)"
//
// A plain `go build` leaves them empty; Version and Commit then fall back to what the Go
// toolchain recorded (the module version, vcs.revision when built with -buildvcs), else "dev"
// and "unknown".
var (
	version string
	commit  string
)

// Version is the build's version (git describe), or "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Commit is the build's commit hash, or "unknown".
func Commit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && dirty {
			rev += "-dirty"
		}
		if rev != "" {
			return rev
		}
	}
	return "unknown"
}

// VersionLine is what `--version` prints: "svcd v1.2.3 (commit abc123, go1.26.8)".
func VersionLine(program string) string {
	return fmt.Sprintf("%s %s (commit %s, %s)", program, Version(), Commit(), runtime.Version())
}
