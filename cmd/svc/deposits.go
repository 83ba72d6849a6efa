package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/google/uuid"

	"svc/gateway/api"
	"svc/payments/deposits"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/operator"
	"svc/persistence/postgres"
)

const depositsUsage = `usage: svc deposits SUBCOMMAND [flags] [ID]

  review                    deposits held for compliance review (FLAGGED), oldest first
  show ID                   one deposit (any merchant, any environment)
  clear ID --reason TEXT    lift the hold of a FLAGGED deposit: its lifecycle resumes
                            (PENDING_FX -> PENDING_WITHDRAWAL -> SETTLED, run by svcd's workers)
  reject ID --reason TEXT   end a FLAGGED (or still pending) deposit FAILED, its NGN returned to
                            the sender; a SETTLED one is reversed instead (REVERSED)
  reverse ID --reason TEXT  SETTLED -> REVERSED: the settled amount is debited back from the
                            balance it was credited to; what that balance no longer covers is
                            recorded on the merchant's receivable account (ledger, may go negative)

clear, reject and reverse are idempotent (a repeat changes nothing and says so) and each is
recorded in the audit log (actor, action, deposit, reason, outcome) in the transaction that
makes the change. Events (deposit.failed with status REVERSED, customer.balance.refunded,
deposit.settled after a clear, ...) are delivered by svcd's workers.
Flags (before or after the ID): --database-url, --reason, --actor, and for review --env,
--merchant, --status, --limit.`

// parseInterspersed parses fs from args allowing flags after positional arguments
// ("reverse ID --reason x"), and returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func isHelp(s string) bool { return s == "-h" || s == "-help" || s == "--help" || s == "help" }

// runDeposits is `svc deposits ...`: the operator's compliance review and reversals.
func runDeposits(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc deposits", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	reason := fs.String("reason", "", "why (required for clear, reject and reverse; kept in the audit log)")
	actor := fs.String("actor", operator.DefaultActor(env), "who (kept in the audit log)")
	envName := fs.String("env", "", "review: sandbox or live (default both)")
	merchant := fs.String("merchant", "", "review: one merchant's id")
	status := fs.String("status", deposits.Flagged, "review: the status listed")
	limit := fs.Int("limit", 100, "review: rows")
	fs.Usage = func() { fmt.Fprintln(stderr, depositsUsage); fs.PrintDefaults() }
	if len(args) == 0 || isHelp(args[0]) {
		fs.Usage()
		return flag.ErrHelp
	}
	sub := args[0]
	rest, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	var id uuid.UUID
	switch sub {
	case "review":
		if len(rest) != 0 {
			fs.Usage()
			return fmt.Errorf("deposits review takes no argument, got %q", rest)
		}
		if *envName != "" && *envName != "sandbox" && *envName != "live" {
			return errors.New("deposits review: --env must be sandbox or live")
		}
		if deposits.ExpandStatus(*status) == nil || len(deposits.ExpandStatus(*status)) != 1 {
			return fmt.Errorf("deposits review: --status must be one of %s", strings.Join(deposits.Statuses, ", "))
		}
	case "show", "clear", "reject", "reverse":
		if len(rest) != 1 {
			fs.Usage()
			return fmt.Errorf("deposits %s: want one deposit ID, got %d argument(s)", sub, len(rest))
		}
		if id, err = uuid.Parse(rest[0]); err != nil {
			return fmt.Errorf("deposits %s: ID %q is not a UUID", sub, rest[0])
		}
		if sub != "show" && strings.TrimSpace(*reason) == "" {
			return fmt.Errorf("deposits %s: --reason is required (it is kept in the audit log)", sub)
		}
	default:
		fs.Usage()
		return fmt.Errorf("unknown deposits subcommand %q", sub)
	}
	if err := needDB(*db); err != nil {
		return err
	}
	pool, err := postgres.Open(ctx, *db, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	client, err := jobs.New(pool, jobs.Config{}) // insert-only: svcd works the jobs and deliveries
	if err != nil {
		return err
	}
	svc := deposits.New(pool, deposits.Config{Events: events.NewRecorder(client), Jobs: client})
	ops := operator.NewDeposits(svc)

	switch sub {
	case "review":
		f := deposits.ReviewFilter{Environment: *envName, Status: *status, Limit: *limit}
		if *merchant != "" {
			m, err := uuid.Parse(*merchant)
			if err != nil {
				return fmt.Errorf("deposits review: --merchant %q is not a UUID", *merchant)
			}
			f.MerchantID = &m
		}
		ds, err := ops.Review(ctx, f)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tMERCHANT\tENV\tSTATUS\tAMOUNT\tSETTLE TO\tCUSTOMER\tCREATED")
		for _, d := range ds {
			cust := "-"
			if d.CustomerID != nil {
				cust = d.CustomerID.String()
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s %s\t%s %s\t%s\t%s\n", d.ID, d.Tenant.MerchantID, d.Tenant.Environment, d.Status,
				d.Amount, d.Amount.Asset, d.Settlement.Mode, d.Settlement.Asset, cust, d.CreatedAt.UTC().Format("2006-01-02 15:04:05"))
		}
		if err := w.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d deposit(s) %s\n", len(ds), *status)
		return nil
	case "show":
		d, err := deposits.Lookup(ctx, pool, id)
		if err != nil {
			return fmt.Errorf("deposit %s: %w", id, err)
		}
		printDeposit(stdout, d)
		return nil
	}
	var out deposits.Outcome
	switch sub {
	case "clear":
		out, err = ops.Clear(ctx, *actor, nil, id, *reason)
	case "reject":
		out, err = ops.Reject(ctx, *actor, nil, id, *reason)
	case "reverse":
		out, err = ops.Reverse(ctx, *actor, nil, id, *reason)
	}
	if err != nil {
		return fmt.Errorf("deposits %s %s: %w", sub, id, err)
	}
	d := out.Deposit
	if !out.Changed {
		fmt.Fprintf(stdout, "deposit %s: %s; nothing to change\n", d.ID, d.Status)
		return nil
	}
	fmt.Fprintf(stdout, "deposit %s: %s -> %s", d.ID, out.From, d.Status)
	if out.Debited != nil {
		fmt.Fprintf(stdout, " (debited %s %s", out.Debited, out.Debited.Asset)
		if out.Shortfall != nil && out.Shortfall.IsPositive() {
			fmt.Fprintf(stdout, "; %s %s not covered, recorded on the merchant's receivable account", out.Shortfall, out.Shortfall.Asset)
		}
		fmt.Fprint(stdout, ")")
	}
	if sub == "clear" {
		fmt.Fprint(stdout, "; the lifecycle resumes in svcd")
	}
	fmt.Fprintln(stdout)
	return nil
}

func printDeposit(w io.Writer, d deposits.Deposit) {
	opt := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	fmt.Fprintf(w, "id:             %s\nmerchant:       %s (%s)\ntype:           %s\nstatus:         %s\n", d.ID, d.Tenant.MerchantID, d.Tenant.Environment, d.Type, d.Status)
	fmt.Fprintf(w, "amount:         %s %s\nheld (flag):    %t\n", d.Amount, d.Amount.Asset, d.Flag)
	settled := "-"
	if d.SettledAmount != nil {
		settled = d.SettledAmount.String() + " " + string(d.SettledAmount.Asset)
	}
	fmt.Fprintf(w, "settlement:     %s %s %s %s\nsettled amount: %s\ntx hash:        %s\n", d.Settlement.Mode, d.Settlement.Asset,
		opt(d.Settlement.Chain), opt(d.Settlement.DestinationAddress), settled, opt(d.TxHash))
	cust := "-"
	if d.CustomerID != nil {
		cust = d.CustomerID.String()
	}
	fmt.Fprintf(w, "customer:       %s\nreference:      %s\nreason:         %s\n", cust, d.PaymentReference, opt(d.FailureReason))
	fmt.Fprintf(w, "created:        %s\nupdated:        %s\n", api.Time(d.CreatedAt), api.Time(d.UpdatedAt))
}
