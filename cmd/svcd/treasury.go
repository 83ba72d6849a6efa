package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/gateway/api"
	"svc/payments/money"
	"svc/payments/rates"
	"svc/payments/treasury"
)

// treasuryConfig is the flags of the treasuries and the market makers (issue 27).
type treasuryConfig struct {
	SandboxLimits string        // USDT=1000000,USDC=1000000 (units of open position)
	LiveLimits    string        // empty: live has no treasury
	Window        time.Duration // netting window of the hedges
	SandboxMaker  bool
	LiveMaker     bool
	LiveMakerLims string // the live maker's limits (ASSET=UNITS,...); required with LiveMaker
	MakerLevels   int
	MakerSize     int64
	MakerSpread   string
	MakerStep     string
}

func (c *treasuryConfig) flags(fs *flag.FlagSet, env *envDefaults) {
	fs.StringVar(&c.SandboxLimits, "treasury-sandbox-limits", env.str("treasury-sandbox-limits", "USDT=1000000,USDC=1000000,USD=1000000"),
		"the sandbox treasury's open-position limit per asset, in units (ASSET=UNITS,...): conversions the book's band cannot price are quoted from the treasury up to it")
	fs.StringVar(&c.LiveLimits, "treasury-live-limits", env.str("treasury-live-limits", ""),
		"the live treasury's open-position limits (ASSET=UNITS,...); empty: live conversions are not hedged and a thin band answers 503 (fund the treasury's engine account before setting it)")
	fs.DurationVar(&c.Window, "treasury-window", env.duration("treasury-window", treasury.DefaultWindow), "how often the treasury nets its open positions into hedge orders")
	fs.BoolVar(&c.SandboxMaker, "sandbox-market-maker", env.bool("sandbox-market-maker", true), "keep a two-sided ladder on every sandbox NGN book around the reference")
	fs.BoolVar(&c.LiveMaker, "live-market-maker", env.bool("live-market-maker", false), "quote a ladder in live too, from the market maker's own engine account, funded by `svc treasury fund --account market-maker` (needs -live-market-maker-limits)")
	fs.StringVar(&c.LiveMakerLims, "live-market-maker-limits", env.str("live-market-maker-limits", ""),
		"the live market maker's limits per asset (ASSET=UNITS,...): the most it rests on each side and the most its position may move either way; assets without one are not quoted")
	fs.IntVar(&c.MakerLevels, "market-maker-levels", env.int("market-maker-levels", 5), "levels per side of the market maker's ladder")
	fs.Int64Var(&c.MakerSize, "market-maker-size", int64(env.int("market-maker-size", 500)), "units of the asset per level of the ladder")
	fs.StringVar(&c.MakerSpread, "market-maker-spread", env.str("market-maker-spread", "0.001"), "distance of the ladder's best levels from the reference (fraction)")
	fs.StringVar(&c.MakerStep, "market-maker-step", env.str("market-maker-step", "0.002"), "distance between the ladder's levels (fraction)")
}

// parseLimits reads "USDT=1000000,USDC=500000" into minor units per asset.
func parseLimits(s string) (map[money.Asset]int64, error) {
	out := map[money.Asset]int64{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		a := money.Asset(strings.TrimSpace(name))
		if !ok || (a != money.USDT && a != money.USDC && a != money.USD) {
			return nil, fmt.Errorf("%q: want ASSET=UNITS with ASSET USDT, USDC or USD", part)
		}
		v, err := money.ParsePositive(a, strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%q: %v", part, err)
		}
		out[a] = v.Minor
	}
	return out, nil
}

func (c treasuryConfig) fractions() (spread, step *big.Rat, err error) {
	spread, ok1 := new(big.Rat).SetString(c.MakerSpread)
	step, ok2 := new(big.Rat).SetString(c.MakerStep)
	if !ok1 || !ok2 || spread.Sign() <= 0 || step.Sign() < 0 {
		return nil, nil, fmt.Errorf("-market-maker-spread %q / -market-maker-step %q: want fractions, spread > 0", c.MakerSpread, c.MakerStep)
	}
	return spread, step, nil
}

func (c treasuryConfig) validate() error {
	var errs []error
	if c.LiveMaker && strings.TrimSpace(c.LiveMakerLims) == "" {
		errs = append(errs, errors.New("-live-market-maker needs -live-market-maker-limits (the live maker trades the operator's money: it runs only with its own limits and funding)"))
	}
	for name, s := range map[string]string{"-treasury-sandbox-limits": c.SandboxLimits, "-treasury-live-limits": c.LiveLimits,
		"-live-market-maker-limits": c.LiveMakerLims} {
		if _, err := parseLimits(s); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if c.Window < 100*time.Millisecond {
		errs = append(errs, errors.New("-treasury-window must be at least 100ms"))
	}
	if c.MakerLevels < 1 || c.MakerLevels > 100 || c.MakerSize < 1 {
		errs = append(errs, errors.New("-market-maker-levels must be in [1, 100] and -market-maker-size at least 1"))
	}
	if _, _, err := c.fractions(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// lateTreasury lets the rates, built first, ask the desk built after them.
type lateTreasury struct{ desk *treasury.Desk }

func (l *lateTreasury) Covers(env string, a money.Asset, side string, units int64) (bool, bool) {
	if l.desk == nil {
		return false, false
	}
	return l.desk.Covers(env, a, side, units)
}

// treasuryParts is the desk and the market makers of this process. The desk hedges, and
// the makers quote, only where the engine runs (one process: its lease), so one desk
// trades each treasury account; elsewhere the desk only follows the positions for quotes.
type treasuryParts struct {
	desk   *treasury.Desk
	hedge  bool
	makers []*treasury.Maker
	envs   []api.Environment // of makers
	cancel context.CancelFunc
	loops  []namedLoop // running since start
}

// namedLoop is one background goroutine (the treasury's, the custody's), named for the log
// of a stop that could not wait for it.
type namedLoop struct {
	name string
	done chan struct{}
}

// goLoop runs f in a goroutine and answers it as a namedLoop.
func goLoop(name string, f func()) namedLoop {
	l := namedLoop{name: name, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		f()
	}()
	return l
}

// waitLoops waits for loops until ctx ends (the shutdown's deadline) and answers the names
// of those still running then, which the caller abandons to the process's exit.
func waitLoops(ctx context.Context, loops []namedLoop) (abandoned []string) {
	for _, l := range loops {
		select {
		case <-l.done:
		case <-ctx.Done():
			if !l.ended() {
				abandoned = append(abandoned, l.name)
			}
		}
	}
	return abandoned
}

// ended reports whether the loop's goroutine returned.
func (l namedLoop) ended() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// sandboxTreasuryInventory is the sandbox treasury's engine balance (sandbox money).
var sandboxTreasuryInventory = map[engine.Asset]int64{
	engine.NGN: 20_000_000_000 * 10_000, engine.USDT: 10_000_000 * 1_000_000, engine.USDC: 10_000_000 * 1_000_000, engine.USD: 10_000_000 * 100,
}

// newTreasury builds the desk over each environment with limits and the market makers.
func newTreasury(cfg config, pool *pgxpool.Pool, xs map[api.Environment]engineAPI, rs *rates.Service, late *lateTreasury, log *slog.Logger) (*treasuryParts, error) {
	log = log.With("component", "treasury")
	envs := map[string]treasury.Env{}
	p := &treasuryParts{}
	for env, limits := range map[api.Environment]string{api.Sandbox: cfg.Treasury.SandboxLimits, api.Live: cfg.Treasury.LiveLimits} {
		x := xs[env]
		if x == nil || limits == "" {
			continue
		}
		l, err := parseLimits(limits)
		if err != nil {
			return nil, err
		}
		e := treasury.Env{Exchange: x, Limits: l}
		if env == api.Sandbox {
			e.Inventory = sandboxTreasuryInventory
		}
		envs[string(env)] = e
		if _, local := x.(*engine.Engine); local {
			p.hedge = true
		}
	}
	desk, err := treasury.New(pool, treasury.Config{Envs: envs, Prices: rs, Window: cfg.Treasury.Window, Logger: log})
	if err != nil {
		return nil, err
	}
	p.desk, late.desk = desk, desk
	spread, step, err := cfg.Treasury.fractions()
	if err != nil {
		return nil, err
	}
	for env, on := range map[api.Environment]bool{api.Sandbox: cfg.Treasury.SandboxMaker, api.Live: cfg.Treasury.LiveMaker} {
		eng, local := xs[env].(*engine.Engine)
		if !on || !local {
			continue
		}
		mc := treasury.MakerConfig{Env: string(env), Exchange: eng, Prices: rs, Levels: cfg.Treasury.MakerLevels,
			Size: cfg.Treasury.MakerSize, Spread: spread, Step: step, Logger: log.With("env", env)}
		if env == api.Sandbox {
			mc.Fund, mc.Inventory = true, sandboxTreasuryInventory
		} else { // live: the operator's money, its own limits (validate made them required)
			if mc.Limits, err = parseLimits(cfg.Treasury.LiveMakerLims); err != nil {
				return nil, err
			}
			if mc.Funding, err = treasury.NewFunding(pool, eng, string(env), treasury.FundMaker); err != nil {
				return nil, err
			}
			mc.Assets = nil
			for _, a := range treasury.Assets {
				if _, ok := mc.Limits[a]; ok {
					mc.Assets = append(mc.Assets, a)
				}
			}
		}
		m, err := treasury.NewMaker(mc)
		if err != nil {
			return nil, err
		}
		p.makers = append(p.makers, m)
		p.envs = append(p.envs, env)
	}
	return p, nil
}

// start runs the desk (hedging, or following the positions) and the makers until stop.
func (p *treasuryParts) start(ctx context.Context) {
	ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	run := func(name string, f func(context.Context)) {
		p.loops = append(p.loops, goLoop(name, func() { f(ctx) }))
	}
	if p.hedge {
		run("treasury desk (hedging)", p.desk.Run)
	} else {
		run("treasury desk (following positions)", p.desk.Watch)
	}
	for i, m := range p.makers {
		run("market maker "+string(p.envs[i]), m.Run)
	}
}

// stop ends the loops and waits for them until ctx ends (the shutdown's deadline). A loop
// blocked in the engine (a stalled journal: the engine's Submit takes no context) is
// abandoned to the process's exit and logged, rather than holding the shutdown for ever;
// a hedge or credit it had in flight is finished or settled by the next start (the desk
// settles orders left placing; credits carry transfer ids the engine applies once).
func (p *treasuryParts) stop(ctx context.Context, log *slog.Logger) {
	if p.cancel == nil {
		return
	}
	p.cancel()
	if abandoned := waitLoops(ctx, p.loops); len(abandoned) > 0 {
		log.Warn("treasury: shutdown deadline passed; abandoned the loops still running (a hedge or credit in flight is settled by the next start)",
			"abandoned", abandoned, "error", context.Cause(ctx))
	}
}
