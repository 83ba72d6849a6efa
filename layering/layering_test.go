package layering_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "svc"

// gatewayInfrastructure are the gateway packages every resource package may use: the HTTP
// vocabulary, the authentication and idempotency middleware, the WebSocket transport, and the
// test and OpenAPI helpers. Every other package directly under gateway/ is a resource package.
var gatewayInfrastructure = []string{
	"svc/gateway/api", "svc/gateway/auth", "svc/gateway/idempotency", "svc/gateway/ws",
	"svc/gateway/gatewaytest", "svc/gateway/openapi", "svc/gateway/ratelimit",
}

// rule is one thing a package must not import.
type rule struct {
	name   string
	from   func(pkg string) bool
	banned func(pkg, imp string) bool
}

func under(prefix string) func(string) bool {
	return func(p string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
}

func anyUnder(prefixes ...string) func(string) bool {
	return func(p string) bool {
		for _, pre := range prefixes {
			if under(pre)(p) {
				return true
			}
		}
		return false
	}
}

// resource returns the gateway resource package p belongs to ("svc/gateway/onramps" for
// svc/gateway/onramps/...), or "" when p is not in one.
func resource(p string) string {
	rest, ok := strings.CutPrefix(p, "svc/gateway/")
	if !ok {
		return ""
	}
	top := "svc/gateway/" + strings.SplitN(rest, "/", 2)[0]
	if anyUnder(gatewayInfrastructure...)(top) {
		return ""
	}
	return top
}

var rules = []rule{
	{
		name:   "engine imports nothing of ours",
		from:   under("svc/engine"),
		banned: func(_, imp string) bool { return !under("svc/engine")(imp) },
	},
	{
		name:   "persistence knows no domain (engine only)",
		from:   under("svc/persistence"),
		banned: func(_, imp string) bool { return !anyUnder("svc/persistence", "svc/engine")(imp) },
	},
	{
		name:   "cluster transport knows the engine and persistence only",
		from:   under("svc/cluster"),
		banned: func(_, imp string) bool { return !anyUnder("svc/cluster", "svc/engine", "svc/persistence")(imp) },
	},
	{
		name:   "payments and identity never import the gateway or a command",
		from:   anyUnder("svc/payments", "svc/identity"),
		banned: func(_, imp string) bool { return anyUnder("svc/gateway", "svc/cmd", "svc/bench")(imp) },
	},
	{
		name: "identity is not payments, payments is not identity",
		from: anyUnder("svc/payments", "svc/identity"),
		banned: func(p, imp string) bool {
			return (under("svc/payments")(p) && under("svc/identity")(imp)) || (under("svc/identity")(p) && under("svc/payments")(imp))
		},
	},
	{
		name:   "the gateway never imports a command",
		from:   under("svc/gateway"),
		banned: func(_, imp string) bool { return anyUnder("svc/cmd", "svc/bench")(imp) },
	},
	{
		name: "a gateway resource package imports no sibling",
		// A test-helper package (…test) may assemble several resources for a test.
		from: func(p string) bool { return resource(p) != "" && !strings.HasSuffix(p, "test") },
		banned: func(p, imp string) bool {
			r := resource(imp)
			return r != "" && r != resource(p)
		},
	},
	{
		name:   "nothing imports a command's package",
		from:   func(string) bool { return true },
		banned: func(p, imp string) bool { return under("svc/cmd")(imp) && !under("svc/cmd")(p) },
	},
}

// TestLayering checks every package's (non-test) imports against the rules.
func TestLayering(t *testing.T) {
	graph := imports(t)
	if len(graph) < 20 {
		t.Fatalf("go list found only %d packages", len(graph))
	}
	for _, r := range rules {
		for pkg, imps := range graph {
			if !r.from(pkg) {
				continue
			}
			for _, imp := range imps {
				if under(module)(imp) && r.banned(pkg, imp) {
					t.Errorf("%s: %s imports %s", r.name, pkg, imp)
				}
			}
		}
	}
}

// TestResource pins what counts as a gateway resource package.
func TestResource(t *testing.T) {
	for pkg, want := range map[string]string{
		"svc/gateway/onramps":                  "svc/gateway/onramps",
		"svc/gateway/withdrawals/moneyouttest": "svc/gateway/withdrawals",
		"svc/gateway/api":                      "",
		"svc/gateway/auth/authtest":            "",
		"svc/gateway/openapi/client":           "",
		"svc/gateway":                          "",
		"svc/payments/onramps":                 "",
	} {
		if got := resource(pkg); got != want {
			t.Errorf("resource(%q) = %q, want %q", pkg, got, want)
		}
	}
}

// imports maps every package of the module to its imports, from `go list` at the module root.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 {
			graph[fields[0]] = fields[1:]
		}
	}
	return graph
}
