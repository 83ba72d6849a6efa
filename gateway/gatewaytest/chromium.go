package gatewaytest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Chromium finds the browser for the hosted-page tests, running the project's install
// script (.ci/chromium: Debian's chromium, as root) once when it is missing; it skips the
// test only when that cannot help. SVC_CHROMIUM names another binary. It is for tests of a
// package two levels below the repository root (gateway/<package>), where they run.
func Chromium(t testing.TB) string {
	t.Helper()
	find := func() string {
		for _, name := range []string{os.Getenv("SVC_CHROMIUM"), "chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
			if name == "" {
				continue
			}
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	out, _ := exec.Command("../../.ci/chromium").CombinedOutput()
	if p := find(); p != "" {
		return p
	}
	t.Skipf("no Chromium, and it could not be installed: %s", strings.TrimSpace(string(out)))
	return ""
}
