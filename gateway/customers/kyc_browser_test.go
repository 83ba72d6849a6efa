package customers_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"svc/gateway/auth/authtest"
	gwcustomers "svc/gateway/customers"
	"svc/gateway/gatewaytest"
	"svc/payments/customers"
	"svc/payments/events"
	"svc/payments/jobs"
	"svc/payments/providers"
	"svc/persistence/postgres/pgtest"
)

// TestBrowserApprovesSandboxKYC drives a real Chromium through the sandbox KYC page: open
// the verification_url a hosted tier 1 flow answered, press Approve, see the result; the
// customer is TIER_1 with customer.tier1_verified recorded.
func TestBrowserApprovesSandboxKYC(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	browser := gatewaytest.Chromium(t)
	pool, _ := pgtest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client, err := jobs.New(pool, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	envs := providers.Default(providers.SandboxConfig{KYCURL: "http://" + ln.Addr().String() + gwcustomers.SandboxKYCPath})
	svc := customers.NewService(pool, events.NewRecorder(client), envs, nil)
	srv := gatewaytest.New(t, pool, gwcustomers.New(svc, nil), gwcustomers.NewKYC(svc, nil))
	go func() { _ = srv.Server.Serve(ln) }()
	m := authtest.New(t, pool)
	var c struct {
		ID string `json:"id"`
	}
	srv.Must(t, 201, "POST", "/v1/customers", m.SandboxKey, map[string]string{"email": "browser@example.com", "first_name": "Ada", "last_name": "Obi"}).Decode(t, &c)
	var v struct {
		ID              string `json:"id"`
		VerificationURL string `json:"verification_url"`
	}
	srv.Must(t, 201, "POST", "/v1/customers/"+c.ID+"/kyc/initiate", m.SandboxKey, nil).Decode(t, &v)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser), chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(420, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first call starts the browser and must not carry a timeout; each step after has one.
	if err := chromedp.Do(bctx, chromedp.Navigate(v.VerificationURL)); err != nil {
		t.Fatalf("browser: open %s: %v", v.VerificationURL, err)
	}
	step := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("browser: %s: %v", what, err)
		}
	}
	step("the page shows the approve button", chromedp.WaitVisible(`#approve`))
	step("approve and see the result", chromedp.Click(`#approve`), chromedp.WaitVisible(`#result`))
	ctx, cancel2 := context.WithTimeout(bctx, 10*time.Second)
	result, err := chromedp.Run(ctx, chromedp.Text(`#result`))
	cancel2()
	if err != nil || !strings.Contains(result, "VERIFIED") {
		t.Fatalf("result %q %v", result, err)
	}
	var s struct {
		Status  string `json:"status"`
		KYCTier string `json:"kyc_tier"`
	}
	srv.Must(t, 200, "GET", "/v1/customers/"+c.ID+"/verifications/"+v.ID, m.SandboxKey, nil).Decode(t, &s)
	var n int
	_ = pool.QueryRow(context.Background(), `select count(*) from events where merchant_id = $1 and type = 'customer.tier1_verified'`, m.ID).Scan(&n)
	if s.Status != "VERIFIED" || s.KYCTier != "TIER_1" || n != 1 {
		t.Fatalf("%+v, %d events", s, n)
	}
}
