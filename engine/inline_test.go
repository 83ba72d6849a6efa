package engine

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestProbeIsInlined asks the compiler (go build -gcflags=-m) whether orderIndex.probe,
// which sits exactly at the inlining budget (index.go), is still inlined at every call
// site in the package, and each caller's func literal into it. Otherwise each slot
// visited makes an indirect call on the place and cancel paths, and prefetchOrder's
// unlocked reads of the index, outside the function its go:norace covers, would be
// reported by the race detector. The build is cached after its first run.
func TestProbeIsInlined(t *testing.T) {
	gocmd, err := exec.LookPath("go") // go test puts its own GOROOT/bin first in PATH
	if err != nil {
		t.Skipf("no go command to ask the compiler: %v", err)
	}
	args := []string{"build", "-gcflags=-m"}
	if raceEnabled { // check the build that runs: with -race, as the tests are
		args = append(args, "-race")
	}
	out, err := exec.Command(gocmd, append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s .: %v\n%s", strings.Join(args, " "), err, out)
	}
	// Positions are file:line:col of the call's parenthesis, the file by its base name.
	line := regexp.MustCompile(`(?m)^(?:.*/)?([^/:\s]+\.go:\d+:\d+): inlining call to (\S+)$`)
	literal := regexp.MustCompile(`\.func\d+$`)
	probeAt, literalAt := map[string]bool{}, map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		switch callee := m[2]; {
		case callee == "(*orderIndex).probe":
			probeAt[m[1]] = true
		case literal.MatchString(callee):
			literalAt[m[1]] = true
		}
	}

	pkg, err := build.ImportDir(".", 0) // the files this build compiles
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	calls := 0
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "probe" {
				return true
			}
			calls++
			p := fset.Position(call.Lparen)
			at := fmt.Sprintf("%s:%d:%d", filepath.Base(p.Filename), p.Line, p.Column)
			if !probeAt[at] {
				t.Errorf("%s: probe is not inlined here (go build -gcflags=-m=2 says why)", at)
			} else if !literalAt[at] {
				t.Errorf("%s: probe is inlined, but not the func literal passed to it", at)
			}
			return true
		})
	}
	if calls == 0 {
		t.Fatal("no call of probe found in the package's files")
	}
}
