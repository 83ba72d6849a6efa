package identity

import "strings"

// Scope is a set of API-key permissions (a bit mask). A key holds one or more; bearer
// tokens hold all of them. Which route needs which scope is the gateway's table
// (gateway/auth).
type Scope uint8

// The scopes a key can be created with.
const (
	ScopeRead     Scope = 1 << iota // every GET: reads of any resource
	ScopeTrade                      // place and cancel orders, sandbox trading funds
	ScopePayments                   // customers, virtual accounts, onramps, commerce, webhooks, sandbox payment simulation
	ScopeWithdraw                   // money out: withdrawals, offramps, transfers, recipients
	AllScopes     = ScopeRead | ScopeTrade | ScopePayments | ScopeWithdraw
)

var scopeNames = []struct {
	s    Scope
	name string
}{{ScopeRead, "read"}, {ScopeTrade, "trade"}, {ScopePayments, "payments"}, {ScopeWithdraw, "withdraw"}}

// ScopeNames lists the scope names in their fixed order (read, trade, payments, withdraw).
func ScopeNames() []string {
	out := make([]string, len(scopeNames))
	for i, n := range scopeNames {
		out[i] = n.name
	}
	return out
}

// ParseScopes reads scope names; on an unknown name ok is false and bad names it.
func ParseScopes(names []string) (s Scope, bad string, ok bool) {
	for _, n := range names {
		found := false
		for _, sn := range scopeNames {
			if sn.name == n {
				s |= sn.s
				found = true
			}
		}
		if !found {
			return 0, n, false
		}
	}
	return s, "", true
}

// Names lists the scopes in s in the fixed order.
func (s Scope) Names() []string {
	out := []string{}
	for _, sn := range scopeNames {
		if s&sn.s != 0 {
			out = append(out, sn.name)
		}
	}
	return out
}

// String is the names joined with commas.
func (s Scope) String() string { return strings.Join(s.Names(), ",") }

// Has reports whether s holds every scope of need.
func (s Scope) Has(need Scope) bool { return s&need == need }
