package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"svc/identity"
	"svc/payments/operator"
	"svc/persistence/postgres"
)

const merchantUsage = `usage: svc merchant SUBCOMMAND [flags]

  list                              newest merchants
  show ID|EMAIL                     one merchant with its settings and key counts
  set-rate-limit ID|EMAIL N|default requests per minute (default: the server's --rate-limit-default)
  suspend ID|EMAIL                  refuse every request and login of the merchant
  unsuspend ID|EMAIL                lift a suspension
  whitelist show ID|EMAIL           the merchant's IP whitelist (audited: who looked, and --why)
  whitelist clear --why TEXT ID|EMAIL
                                    switch the IP whitelist off and empty it: the way back in for
                                    a merchant locked out; the old whitelist is kept in the audit row
  kyc approve --why TEXT ID|EMAIL   approve the merchant's live KYC: its live keys and live routes
                                    work from the next request (until then 403 MERCHANT_KYC_REQUIRED)
  kyc reject --why TEXT ID|EMAIL    reject it: live answers 403 MERCHANT_KYC_REQUIRED again

Changes are audited (audit_log) and reach running servers at once (LISTEN/NOTIFY).
Flags (before or after the arguments): --database-url, --reason or --why (changes; required
for whitelist clear and kyc), --actor (default $USER@hostname), --limit (list).`

func runMerchant(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc merchant", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	reason := fs.String("reason", "", "why (kept in the audit log)")
	fs.StringVar(reason, "why", "", "the same as --reason")
	actor := fs.String("actor", operator.DefaultActor(env), "who (kept in the audit log)")
	limit := fs.Int("limit", 50, "rows for list")
	fs.Usage = func() { fmt.Fprintln(stderr, merchantUsage); fs.PrintDefaults() }
	if len(args) == 0 || isHelp(args[0]) {
		fs.Usage()
		return flag.ErrHelp
	}
	sub := args[0]
	switch sub {
	case "list", "show", "set-rate-limit", "suspend", "unsuspend", "whitelist", "kyc":
	default:
		fs.Usage()
		return fmt.Errorf("unknown merchant subcommand %q", sub)
	}
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if err := needDB(*db); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, *db, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := identity.NewStore(pool)
	need := func(n int) error {
		if len(rest) != n {
			fs.Usage()
			return fmt.Errorf("merchant %s: want %d argument(s), got %d", sub, n, len(rest))
		}
		return nil
	}
	switch sub {
	case "list":
		ms, err := st.ListMerchants(ctx, *limit)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tEMAIL\tBUSINESS\tVERIFIED\tSUSPENDED\tRATE/MIN\tCREATED")
		for _, m := range ms {
			fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%t\t%s\t%s\n", m.ID, m.Email, m.BusinessName, m.Verified, m.Suspended,
				rate(m.RateLimitPerMinute), m.CreatedAt.UTC().Format("2006-01-02 15:04"))
		}
		return w.Flush()
	case "show":
		if err := need(1); err != nil {
			return err
		}
		m, err := st.Merchant(ctx, rest[0])
		if err != nil {
			return err
		}
		keys, err := st.KeyCounts(ctx, m.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "id:              %s\nemail:           %s\nbusiness:        %s\nname:            %s %s\n", m.ID, m.Email, m.BusinessName, m.FirstName, m.LastName)
		fmt.Fprintf(stdout, "email verified:  %t\nsuspended:       %t\nrate limit:      %s per minute\n", m.EmailVerifiedAt != nil, m.Suspended, rate(m.RateLimitPerMinute))
		fmt.Fprintf(stdout, "ip whitelist:    enabled=%t required=%t ips=%v\n", m.Whitelist.Enabled, m.Whitelist.Required, m.Whitelist.IPs)
		kyc, err := st.KYCStatuses(ctx, m.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "kyc:             sandbox=%s live=%s\n", kyc[identity.Sandbox], kyc[identity.Live])
		fmt.Fprintf(stdout, "active keys:     sandbox=%d live=%d\ncreated:         %s\n", keys["sandbox"], keys["live"], m.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"))
		return nil
	case "set-rate-limit":
		if err := need(2); err != nil {
			return err
		}
		m, err := st.Merchant(ctx, rest[0])
		if err != nil {
			return err
		}
		var n *int
		if rest[1] != "default" {
			v, err := strconv.Atoi(rest[1])
			if err != nil || v < 1 || v > 10_000_000 {
				return errors.New("merchant set-rate-limit: N must be an integer from 1 to 10000000, or default")
			}
			n = &v
		}
		if err := st.SetRateLimit(ctx, m.ID, n, *actor, *reason); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: rate limit %s per minute\n", m.Email, rate(n))
		return nil
	case "whitelist":
		return merchantWhitelist(ctx, st, rest, *actor, *reason, stdout, fs.Usage)
	case "kyc":
		return merchantKYC(ctx, st, rest, *actor, *reason, stdout, fs.Usage)
	case "suspend", "unsuspend":
		if err := need(1); err != nil {
			return err
		}
		m, err := st.Merchant(ctx, rest[0])
		if err != nil {
			return err
		}
		if err := st.SetSuspended(ctx, m.ID, sub == "suspend", *actor, *reason); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %sed\n", m.Email, sub)
		return nil
	}
	fs.Usage()
	return fmt.Errorf("unknown merchant subcommand %q", sub)
}

// merchantWhitelist runs `merchant whitelist show|clear ID|EMAIL`.
func merchantWhitelist(ctx context.Context, st *identity.Store, args []string, actor, why string, stdout io.Writer, usage func()) error {
	if len(args) != 2 || (args[0] != "show" && args[0] != "clear") {
		usage()
		return errors.New("merchant whitelist: want show|clear ID|EMAIL")
	}
	if args[0] == "clear" && strings.TrimSpace(why) == "" {
		return errors.New("merchant whitelist clear: --why is required (it is kept in the audit log)")
	}
	m, err := st.Merchant(ctx, args[1])
	if err != nil {
		return err
	}
	var w identity.Whitelist
	if args[0] == "show" {
		w, err = st.ShowWhitelist(ctx, m.ID, actor, why)
	} else {
		w, err = st.ClearWhitelist(ctx, m.ID, actor, why)
	}
	if err != nil {
		return err
	}
	ips := make([]string, len(w.IPs))
	for i, p := range w.IPs {
		ips[i] = p.String()
	}
	list := strings.Join(ips, " ")
	if list == "" {
		list = "(none)"
	}
	if args[0] == "clear" {
		fmt.Fprintf(stdout, "%s: IP whitelist cleared (was enabled=%t required=%t ips=%s)\n", m.Email, w.Enabled, w.Required, list)
		return nil
	}
	fmt.Fprintf(stdout, "merchant:  %s (%s)\nenabled:   %t\nrequired:  %t\nips:       %s\n", m.Email, m.ID, w.Enabled, w.Required, list)
	return nil
}

// merchantKYC runs `merchant kyc approve|reject ID|EMAIL`: the operator's review of the
// merchant's live KYC, audited with --why.
func merchantKYC(ctx context.Context, st *identity.Store, args []string, actor, why string, stdout io.Writer, usage func()) error {
	if len(args) != 2 || (args[0] != "approve" && args[0] != "reject") {
		usage()
		return errors.New("merchant kyc: want approve|reject ID|EMAIL")
	}
	if strings.TrimSpace(why) == "" {
		return fmt.Errorf("merchant kyc %s: --why is required (it is kept in the audit log)", args[0])
	}
	m, err := st.Merchant(ctx, args[1])
	if err != nil {
		return err
	}
	before, err := st.ReviewKYC(ctx, m.ID, args[0] == "approve", actor, why)
	if err != nil {
		return err
	}
	after := identity.KYCApproved
	if args[0] == "reject" {
		after = identity.KYCRejected
	}
	fmt.Fprintf(stdout, "%s: live KYC %s (was %s)\n", m.Email, after, before)
	return nil
}

func rate(n *int) string {
	if n == nil {
		return "default"
	}
	return strconv.Itoa(*n)
}
