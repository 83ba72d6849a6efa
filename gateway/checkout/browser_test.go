package checkout_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/riverqueue/river"

	"svc/gateway/auth/authtest"
	gc "svc/gateway/checkout"
	"svc/gateway/gatewaytest"
	gi "svc/gateway/invoices"
	gp "svc/gateway/products"
	"svc/payments"
	pc "svc/payments/checkout"
	"svc/payments/deposits"
	"svc/payments/events"
	pi "svc/payments/invoices"
	"svc/payments/jobs"
	"svc/payments/money"
	"svc/payments/onramps"
	pp "svc/payments/products"
	"svc/payments/providers"
	"svc/payments/providers/mail"
	"svc/payments/rates"
	"svc/payments/webhooks"
	"svc/persistence/postgres/pgtest"
)

// TestBrowserPaysCheckoutLink drives a real Chromium through the hosted page: open the
// link, pay by (simulated) bank transfer, see the success message; the invoice is paid
// through the real onramp and deposit lifecycle, and the webhook is delivered.
func TestBrowserPaysCheckoutLink(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	browser := gatewaytest.Chromium(t)
	pool, _ := pgtest.New(t)

	// The money-in stack (rates from the configured reference, sandbox bank, onramps,
	// deposits with their job-driven lifecycle) and commerce, as svcd builds them: every
	// service enqueues through an insert-only river client; the working client comes last.
	inserter, err := jobs.New(pool, jobs.Config{FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewRecorder(inserter)
	envs := providers.Default(providers.SandboxConfig{})
	rateSvc, err := rates.New(pool, rates.Config{References: map[money.Asset]int64{money.USDT: 160000, money.USDC: 160000, money.USD: 160000}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	onrampSvc := onramps.New(pool, onramps.Config{Rates: rateSvc, Providers: envs, Customers: onramps.Directory, Events: rec})
	depositSvc := deposits.New(pool, deposits.Config{Onramps: onrampSvc, Rates: rateSvc, Providers: envs, Events: rec, Jobs: inserter,
		Settled: []deposits.SettlementHook{pc.NewCompleter(rec, nil)}})
	invSvc := pi.NewService(pool, inserter, pc.NewInvoiceLinks(base, nil), nil)
	links := pc.NewService(pool, invSvc, pc.Config{BaseURL: base, Onramps: pc.MoneyIn{Onramps: onrampSvc, Deposits: depositSvc}})

	// A webhook receiver for the merchant.
	var mu sync.Mutex
	var received []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received = append(received, r.Header.Get("X-Svc-Event-Id")+" "+r.Header.Get("User-Agent"))
		mu.Unlock()
		buf := make([]byte, 1<<16)
		n, _ := r.Body.Read(buf)
		mu.Lock()
		received = append(received, string(buf[:n]))
		mu.Unlock()
	}))
	defer recv.Close()
	cipher := webhooks.DevCipher("browser-test")
	sender := webhooks.NewSender(webhooks.SenderConfig{AllowInsecure: true})

	workers := river.NewWorkers()
	for _, err := range []error{
		onramps.Register(workers, onrampSvc), deposits.Register(workers, depositSvc),
		webhooks.Register(workers, webhooks.NewWorker(pool, cipher, sender, webhooks.WorkerConfig{RetryBase: 10 * time.Millisecond})),
		pi.Register(workers, pool, &mail.Outbox{DB: pool}, nil, nil),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	client, err := jobs.New(pool, jobs.Config{Workers: workers,
		Queues:            map[string]int{onramps.Queue: 10, events.Queue: 10, pi.Queue: 2},
		FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(ctx)
	})

	srv := gatewaytest.New(t, pool, gp.New(pp.NewService(pool, nil)), gi.New(invSvc), gc.New(links))
	go func() { _ = srv.Server.Serve(ln) }()
	m := authtest.New(t, pool)
	if _, err := webhooks.NewService(pool, cipher, sender).Create(context.Background(),
		payments.Tenant{MerchantID: m.ID, Environment: "sandbox"},
		webhooks.CreateInput{URL: recv.URL + "/hooks", Events: []string{"checkout.payment.completed"}}); err != nil {
		t.Fatal(err)
	}

	var l struct {
		URL       string  `json:"url"`
		InvoiceID *string `json:"invoice_id"`
	}
	srv.Must(t, 201, "POST", "/v1/checkout-links", m.SandboxKey, `{"title":"Conference tickets","description":"Two seats, day one",
		"customer_name":"Ada Obi","customer_email":"ada@example.test","success_message":"Thank you, Ada! Your tickets are booked.",
		"line_items":[{"description":"Ticket","quantity":2,"unit_price":7500,"tax_type":"percentage","tax_rate":7.5}]}`).Decode(t, &l)

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
	if err := chromedp.Do(bctx, chromedp.Navigate(l.URL)); err != nil {
		t.Fatalf("browser: open %s: %v", l.URL, err)
	}
	step := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("browser: %s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, 10*time.Second)
		defer cancel()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("browser: text of %s: %v", sel, err)
		}
		return s
	}
	step("the page shows the pay button", chromedp.WaitVisible(`#pay`))
	total := text(`#total`)
	step("pay by bank transfer", chromedp.Click(`#pay`), chromedp.WaitVisible(`#account-number`))
	account := text(`#account-number`)
	step("simulate the transfer and wait for success", chromedp.Click(`#simulate`), chromedp.WaitVisible(`#success`))
	success := text(`#success-message`)
	sctx, scancel := context.WithTimeout(bctx, 20*time.Second)
	shot, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	scancel()
	if err != nil {
		t.Fatalf("browser: screenshot: %v", err)
	}
	if total != "NGN 16,125.00" || len(account) != 10 || success != "Thank you, Ada! Your tickets are booked." {
		t.Fatalf("total %q account %q success %q", total, account, success)
	}
	out := filepath.Join("testdata", "out")
	if err := os.MkdirAll(out, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(out, "checkout-paid.png"), shot, 0o644)
		t.Logf("screenshot: %s", filepath.Join(out, "checkout-paid.png"))
	}

	var inv struct {
		Status string  `json:"status"`
		PaidAt *string `json:"paid_at"`
	}
	srv.Must(t, 200, "GET", "/v1/invoices/"+*l.InvoiceID, m.SandboxKey, nil).Decode(t, &inv)
	if inv.Status != "paid" || inv.PaidAt == nil {
		t.Fatalf("invoice %+v", inv)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		got := strings.Join(received, "\n")
		mu.Unlock()
		if strings.Contains(got, `"checkout.payment.completed"`) && strings.Contains(got, *l.InvoiceID) && strings.Contains(got, `"16125.00"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook not delivered; received: %s", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
