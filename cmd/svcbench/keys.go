package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"svc/identity"
	"svc/persistence/postgres"
)

// benchRateLimit is the requests/minute given to seeded bench merchants (the largest
// `svc merchant set-rate-limit` accepts), so the limiter never caps a run.
const benchRateLimit = 10_000_000

var demoKeyLine = regexp.MustCompile(`API key:\s+(\S+)`)

// keysFromText returns every key printed on an "API key:" line (svcd --demo output).
func keysFromText(r io.Reader) []string {
	var keys []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := demoKeyLine.FindStringSubmatch(sc.Text()); m != nil {
			keys = append(keys, m[1])
		}
	}
	return keys
}

// prepareKeys gathers the run's keys (gatherKeys), funds them when cfg.Fund (fundKeys) and
// returns them with the host:port of cfg.URL: what every load against svcd starts with.
func prepareKeys(cfg ordersConfig, out io.Writer) ([]string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	keys, err := gatherKeys(ctx, cfg, out)
	cancel()
	if err != nil {
		return nil, "", err
	}
	u, _ := url.Parse(cfg.URL)
	addr := u.Host
	if u.Port() == "" {
		addr += ":80"
	}
	if cfg.Fund {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := fundKeys(ctx, addr, keys, cfg, out)
		cancel()
		if err != nil {
			return nil, "", err
		}
	}
	return keys, addr, nil
}

// gatherKeys collects --keys, the keys in --keys-from and those of --seed-merchants.
func gatherKeys(ctx context.Context, cfg ordersConfig, out io.Writer) ([]string, error) {
	keys := append([]string(nil), cfg.Keys...)
	if cfg.KeysFrom != "" {
		f, err := os.Open(cfg.KeysFrom)
		if err != nil {
			return nil, err
		}
		got := keysFromText(f)
		f.Close()
		if len(got) == 0 {
			return nil, fmt.Errorf("no 'API key:' line in %s", cfg.KeysFrom)
		}
		keys = append(keys, got...)
	}
	if cfg.SeedMerchants > 0 {
		got, err := seedMerchants(ctx, cfg.DatabaseURL, cfg.SeedMerchants)
		if err != nil {
			return nil, fmt.Errorf("seed merchants: %w", err)
		}
		fmt.Fprintf(out, "seeded %d bench merchant(s) svcbench-N@svcbench.local (rate limit %d/min), one new sandbox key each\n", len(got), benchRateLimit)
		keys = append(keys, got...)
	}
	return keys, nil
}

// seedMerchants makes (or reuses) n verified merchants with a raised rate limit and returns
// a new sandbox key of each. Distinct merchants are distinct trading accounts, so their
// crossing orders trade instead of meeting self-trade prevention.
func seedMerchants(ctx context.Context, dbURL string, n int) ([]string, error) {
	pool, err := postgres.Open(ctx, dbURL, 2)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	st := identity.NewStore(pool)
	limit := benchRateLimit
	var keys []string
	for i := 1; i <= n; i++ {
		email := fmt.Sprintf("svcbench-%d@svcbench.local", i)
		m, err := st.Merchant(ctx, email)
		if err != nil {
			hash, herr := identity.NewHasher(1).Hash(ctx, time.Now().String()+email)
			if herr != nil {
				return nil, herr
			}
			m, err = identity.SeedMerchant(ctx, pool, identity.SeedOptions{Email: email, PasswordHash: hash,
				BusinessName: "svcbench", RateLimit: &limit, KYCApproved: true})
			if err != nil {
				return nil, err
			}
		} else if m.RateLimitPerMinute == nil || *m.RateLimitPerMinute != limit {
			if err := st.SetRateLimit(ctx, m.ID, &limit, "svcbench", "load benchmark"); err != nil {
				return nil, err
			}
		}
		_, key, err := identity.CreateKey(ctx, pool, m.ID, identity.Sandbox, "svcbench")
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

type balanceRow struct {
	Asset     string `json:"asset"`
	Available string `json:"available"`
}

// fundKeys tops up NGN and the symbol's base asset of every key's sandbox account when
// below the top-up amount, so buys and sells never meet INSUFFICIENT_BALANCE.
func fundKeys(ctx context.Context, addr string, keys []string, cfg ordersConfig, out io.Writer) error {
	topUp := map[string]float64{"NGN": 1e10}
	var bases []string
	for _, sym := range cfg.Symbols {
		if base, _, ok := strings.Cut(sym, "-"); ok {
			topUp[base] = 1e7
			bases = append(bases, base)
		}
	}
	c := &fasthttp.HostClient{Addr: addr, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	seen := map[string]bool{}
	for _, key := range keys {
		if seen[key] {
			continue
		}
		seen[key] = true
		if ctx.Err() != nil {
			return ctx.Err()
		}
		code, body, err := call(c, addr, key, fasthttp.MethodGet, "/v1/trading/balances", nil)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("GET /v1/trading/balances with key %s...: %d %s", keyPrefix(key), code, body)
		}
		var env struct {
			Data []balanceRow `json:"data"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			return fmt.Errorf("balances: %w", err)
		}
		have := map[string]float64{}
		for _, b := range env.Data {
			var v float64
			fmt.Sscan(b.Available, &v)
			have[b.Asset] = v
		}
		for asset, amount := range topUp {
			if have[asset] >= amount/2 {
				continue
			}
			req := fmt.Sprintf(`{"asset":%q,"amount":"%.0f"}`, asset, amount)
			code, body, err := call(c, addr, key, fasthttp.MethodPost, "/v1/trading/sandbox/fund", []byte(req))
			if err != nil {
				return err
			}
			if code != 201 {
				return fmt.Errorf("fund %s with key %s...: %d %s", asset, keyPrefix(key), code, body)
			}
		}
	}
	fmt.Fprintf(out, "funded %d key(s) (NGN and %s topped up where low)\n", len(seen), strings.Join(bases, ", "))
	return nil
}

// cancelAll cancels every key's open orders on the symbols (best effort, reported).
func cancelAll(ctx context.Context, addr string, keys []string, symbols []string, out io.Writer) {
	c := &fasthttp.HostClient{Addr: addr, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	seen := map[string]bool{}
	for _, key := range keys {
		if seen[key] || ctx.Err() != nil {
			continue
		}
		seen[key] = true
		for _, symbol := range symbols {
			code, body, err := call(c, addr, key, fasthttp.MethodDelete, "/v1/trading/orders?symbol="+symbol, nil)
			if err != nil || code != 200 {
				fmt.Fprintf(out, "cancel-at-end %s with key %s...: %d %v %s\n", symbol, keyPrefix(key), code, err, body)
			}
		}
	}
}

func call(c *fasthttp.HostClient, addr, key, method, uri string, body []byte) (int, []byte, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI("http://" + addr + uri)
	req.Header.Set("X-Api-Key", key)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBody(body)
	}
	if err := c.Do(req, resp); err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, uri, err)
	}
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), nil
}

func keyPrefix(k string) string {
	if len(k) > 16 {
		return k[:16]
	}
	return k
}
