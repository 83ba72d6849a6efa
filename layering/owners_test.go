package layering_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// owners is every table's one writer: the package (directory under the module root) whose
// code alone may insert, update or delete its rows (issue 32). Another package changes the
// table through the owner's exported functions, in its own transaction. docs/architecture.md
// lists the same table.
var owners = map[string]string{
	// money in and out
	"deposits":                   "payments/deposits",
	"onramps":                    "payments/onramps",
	"offramps":                   "payments/offramps",
	"payouts":                    "payments/offramps",
	"withdrawals":                "payments/withdrawals",
	"transfers":                  "payments/transfers",
	"recipients":                 "payments/recipients",
	"rate_quotes":                "payments/rates",
	"merchant_balance_transfers": "payments/balance",
	"partner_events":             "payments/partners",
	"partner_refunds":            "payments/partners",
	// customers
	"customers":               "payments/customers",
	"customer_wallets":        "payments/customers",
	"crypto_funding_requests": "payments/customers",
	"kyc_verifications":       "payments/customers",
	// commerce
	"products":           "payments/products",
	"invoices":           "payments/invoices",
	"invoice_line_items": "payments/invoices",
	"invoice_counters":   "payments/invoices",
	"checkout_links":     "payments/checkout",
	"checkout_payments":  "payments/checkout",
	// books, events, delivery
	"ledger_accounts":     "payments/ledger",
	"ledger_transactions": "payments/ledger",
	"ledger_entries":      "payments/ledger",
	"treasury_intents":    "payments/ledger", // written with the system:fx posting (issue 27)
	"treasury_orders":     "payments/treasury",
	"treasury_funding":    "payments/treasury",
	"treasury_limits":     "payments/treasury",
	"events":              "payments/events",
	"webhook_endpoints":   "payments/webhooks",
	"webhook_logs":        "payments/webhooks",
	"idempotency_keys":    "payments/idempotency",
	"mail_outbox":         "payments/providers/mail",
	"audit_log":           "persistence/audit",
	// merchants and their access
	"merchants":      "identity",
	"merchant_kyc":   "identity",
	"one_time_codes": "identity",
	"refresh_tokens": "identity",
	"api_keys":       "identity",
	// the trading core's bookkeeping
	"engine_leases":        "persistence/lease",
	"projection_positions": "persistence/projection",
	"trading_orders":       "persistence/projection",
}

// notRun are string literals that spell a write but are never executed: the file and the
// table, and why.
var notRun = map[[2]string]string{
	{"cmd/svcd/lease.go", "engine_leases"}: "the statement svcd prints for the operator to restore an epoch by hand",
}

// writeSQL finds the table a SQL text inserts into, updates or deletes from.
var writeSQL = regexp.MustCompile(`(?is)\b(?:insert\s+into|delete\s+from)\s+([a-z_][a-z0-9_]*)|\bupdate\s+([a-z_][a-z0-9_]*)\s+(?:[a-z_][a-z0-9_]*\s+)?set\b`)

// write is one statement found in the sources.
type write struct {
	file, table string
	line        int
}

// writes lists every write statement in the module's non-test Go sources (tests and the
// migrations, which are SQL files, may write anything).
func writes(t *testing.T) []write {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..")
	var out []write
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range writeSQL.FindAllStringSubmatch(s, -1) {
				table := strings.ToLower(m[1] + m[2])
				out = append(out, write{file: filepath.ToSlash(rel), table: table, line: fset.Position(lit.Pos()).Line})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOneWriterPerTable fails when SQL that writes a table stands outside the table's
// owning package (owners), or when a table missing from owners is written by more than one
// package (a new table's first writer is its owner until the list names it).
func TestOneWriterPerTable(t *testing.T) {
	ws := writes(t)
	if len(ws) < 50 {
		t.Fatalf("found only %d write statements: is the walk reading the module?", len(ws))
	}
	unlisted := map[string]map[string]string{} // table -> package -> first place
	for _, w := range ws {
		if _, ok := notRun[[2]string{w.file, w.table}]; ok {
			continue
		}
		pkg := filepath.ToSlash(filepath.Dir(w.file))
		owner, ok := owners[w.table]
		switch {
		case !ok:
			if unlisted[w.table] == nil {
				unlisted[w.table] = map[string]string{}
			}
			if _, dup := unlisted[w.table][pkg]; !dup {
				unlisted[w.table][pkg] = fmt.Sprintf("%s:%d", w.file, w.line)
			}
		case pkg != owner:
			t.Errorf("%s:%d writes %s, which only %s may write: call an exported function of %s with the transaction instead",
				w.file, w.line, w.table, owner, owner)
		}
	}
	tables := make([]string, 0, len(unlisted))
	for table := range unlisted {
		tables = append(tables, table)
	}
	sort.Strings(tables)
	for _, table := range tables {
		if len(unlisted[table]) > 1 {
			t.Errorf("%s is written by %d packages (%v): give it one owner, listed in owners and docs/architecture.md",
				table, len(unlisted[table]), unlisted[table])
			continue
		}
		for pkg := range unlisted[table] {
			t.Logf("%s: written by %s only, not yet in owners", table, pkg)
		}
	}
}

// TestWriteSQL pins what counts as a write statement.
func TestWriteSQL(t *testing.T) {
	for _, c := range []struct {
		sql, table string
	}{
		{"insert into deposits (id) values ($1)", "deposits"},
		{"INSERT INTO onramps (id)", "onramps"},
		{"update payouts set status = $2", "payouts"},
		{"update ledger_accounts a set balance = a.balance + $1", "ledger_accounts"},
		{"\n\t\tdelete from idempotency_keys where", "idempotency_keys"},
		{"with x as (select 1) insert into events (id) select", "events"},
		{"select id from deposits where id = $1 for update", ""},
		{"update when the row changes", ""},
	} {
		m := writeSQL.FindStringSubmatch(c.sql)
		got := ""
		if m != nil {
			got = strings.ToLower(m[1] + m[2])
		}
		if got != c.table {
			t.Errorf("%q: table %q, want %q", c.sql, got, c.table)
		}
	}
}
