package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ethereum/go-ethereum/common"

	"svc/payments/money"
	"svc/payments/providers/evm"
	"svc/payments/providers/evm/signer"
	"svc/persistence/postgres"
)

// runCustody is `svc custody`: the live EVM custody's keystore, reorganisation alerts, open
// sends and balances (issue 31, docs/custody.md).
func runCustody(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	usage := func() {
		fmt.Fprintln(stderr, "usage: svc custody keystore create --file PATH   (passphrase from SVC_CUSTODY_PASSPHRASE)\n"+
			"       svc custody keystore address --file PATH  (the hot wallet's address: fund it)\n"+
			"       svc custody alerts    [--database-url URL]  credited deposits a reorganisation removed\n"+
			"       svc custody sends     [--database-url URL]  sends waiting for funds or not yet confirmed\n"+
			"       svc custody balances  [--database-url URL] [--custody-config FILE --custody-keystore FILE]\n"+
			"                             deposit addresses' credited, pending and swept amounts; with the config,\n"+
			"                             the hot wallet's and each address's balances on chain")
	}
	if len(args) == 0 {
		usage()
		return errors.New("svc custody: a subcommand is required")
	}
	switch args[0] {
	case "keystore":
		return custodyKeystore(ctx, args[1:], env, stdout, stderr)
	case "alerts", "sends", "balances":
	default:
		usage()
		return fmt.Errorf("svc custody: unknown subcommand %q", args[0])
	}
	fs := flag.NewFlagSet("svc custody "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, env)
	cfgFile := fs.String("custody-config", env("SVC_CUSTODY_CONFIG"), "svcd's --custody-config (balances: asks each chain's node)")
	ksFile := fs.String("custody-keystore", env("SVC_CUSTODY_KEYSTORE"), "svcd's --custody-keystore (balances: the hot wallet's address)")
	limit := fs.Int("limit", 50, "addresses listed (balances)")
	if err := fs.Parse(args[1:]); err != nil {
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
	w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	defer w.Flush()
	switch args[0] {
	case "alerts":
		as, err := evm.Alerts(ctx, pool)
		if err != nil {
			return err
		}
		if len(as) == 0 {
			fmt.Fprintln(w, "no reorganised credits")
			return nil
		}
		fmt.Fprintln(w, "ALERT: credited deposits no longer on their chain (the credit stands; see docs/custody.md)")
		fmt.Fprintln(w, "chain\ttx_hash\treference\taddress\tamount\tblock\tcredited_at\tremoved_at")
		for _, a := range as {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s %s\t%d\t%s\t%s\n", a.Chain, a.TxHash, a.Reference, a.Address,
				money.Format(money.Asset(a.Asset), a.Amount), a.Asset, a.Block, a.CreditedAt.UTC().Format("2006-01-02 15:04:05"),
				a.RemovedAt.UTC().Format("2006-01-02 15:04:05"))
		}
	case "sends":
		ss, err := evm.OpenSends(ctx, pool)
		if err != nil {
			return err
		}
		if len(ss) == 0 {
			fmt.Fprintln(w, "no open sends")
			return nil
		}
		fmt.Fprintln(w, "chain\treference\tkind\tstatus\ttx_hash\tcreated_at\tlast_error")
		for _, s := range ss {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Chain, s.Reference, s.Kind, s.Status, s.TxHash,
				s.CreatedAt.UTC().Format("2006-01-02 15:04:05"), s.LastError)
		}
	case "balances":
		hs, err := evm.Holdings(ctx, pool, *limit)
		if err != nil {
			return err
		}
		chains := map[string]*evm.Custody{}
		if *cfgFile != "" {
			cfgs, err := evm.LoadConfigFile(*cfgFile, env)
			if err != nil {
				return err
			}
			ks, err := signer.Open(*ksFile, env("SVC_CUSTODY_PASSPHRASE"))
			if err != nil {
				return err
			}
			for _, c := range cfgs {
				c.Signer = ks
				cu, err := evm.New(pool, c)
				if err != nil {
					return err
				}
				defer cu.Close()
				chains[string(c.Chain)] = cu
				hot, _ := cu.HotWallet(ctx)
				b, err := cu.BalancesOf(ctx, hot)
				if err != nil {
					fmt.Fprintf(w, "%s hot wallet %s: %v\n", c.Chain, hot.Hex(), err)
					continue
				}
				fmt.Fprintf(w, "%s hot wallet %s: %s wei", c.Chain, hot.Hex(), b.Native)
				for a, amt := range b.Tokens {
					fmt.Fprintf(w, ", %s %s", amt, a)
				}
				fmt.Fprintln(w)
			}
		}
		fmt.Fprintln(w, "chain\taddress\treference\tasset\tcredited\tpending\tswept (base units)\ton chain")
		for _, h := range hs {
			onChain := "-"
			if cu := chains[h.Chain]; cu != nil {
				if b, err := cu.BalancesOf(ctx, common.HexToAddress(h.Address)); err == nil {
					onChain = b.Tokens[money.Asset(h.Asset)].String()
				}
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Chain, common.HexToAddress(h.Address).Hex(), h.Reference, h.Asset,
				money.Format(money.Asset(h.Asset), h.Credited), money.Format(money.Asset(h.Asset), h.Pending), h.Swept, onChain)
		}
	}
	return nil
}

func custodyKeystore(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "address") {
		return errors.New("svc custody keystore create|address --file PATH")
	}
	fs := flag.NewFlagSet("svc custody keystore "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", env("SVC_CUSTODY_KEYSTORE"), "the keystore file")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	pass := env("SVC_CUSTODY_PASSPHRASE")
	if *file == "" || pass == "" {
		return errors.New("--file and SVC_CUSTODY_PASSPHRASE (environment only) are required")
	}
	if args[0] == "create" {
		if err := signer.Create(*file, pass, signer.Standard); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created %s: back it up (with its passphrase, kept apart); every deposit address and the hot wallet derive from it\n", *file)
	}
	ks, err := signer.Open(*file, pass)
	if err != nil {
		return err
	}
	hot, err := ks.Address(ctx, signer.KeyHot)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "hot wallet: %s (the same on every EVM chain: fund it with each chain's native coin for gas and with the tokens withdrawals pay)\n", hot.Hex())
	return nil
}
