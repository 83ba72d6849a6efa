package checkout

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // Africa/Lagos for the hosted pages (payerZone)

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"svc/gateway/api"
	"svc/payments"
	pc "svc/payments/checkout"
	pi "svc/payments/invoices"
	pp "svc/payments/products"
)

type jsonNumber = json.Number

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets/*
var assetFiles embed.FS

var pageTemplate = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"money": displayAmount,
	"time":  payerTime,
	"iso":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).ParseFS(templateFiles, "templates/page.html"))

// payerZone is the time zone of the payers the hosted pages serve (NGN bank transfers):
// West Africa Time, UTC+1 all year. time/tzdata is embedded, so the zone loads on machines
// without a zoneinfo database.
var payerZone = func() *time.Location {
	if loc, err := time.LoadLocation("Africa/Lagos"); err == nil {
		return loc
	}
	return time.FixedZone("WAT", 60*60)
}()

// payerTime shows t in Lagos time with the zone named: "14:05 WAT (Lagos time)".
func payerTime(t time.Time) string { return t.In(payerZone).Format("15:04 MST") + " (Lagos time)" }

// displayAmount prints minor units with thousands separators: "1,500.00".
func displayAmount(currency string, minor int64) string {
	s := pp.FormatAmount(currency, minor)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

// pageData is what page.html renders.
type pageData struct {
	Status   int
	Heading  string // error pages
	Message  string
	Slug     string
	Sandbox  bool
	Merchant string
	Link     pc.Link
	Invoice  *pi.Invoice
	Lines    []pi.Line
	Refusal  string
	Payment  *pc.Payment
	PayState string // awaiting, completed, failed, expired
	Notice   string
}

func (rs *Routes) render(ctx *fasthttp.RequestCtx, d pageData) {
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, d); err != nil {
		slog.Error("checkout page", "error", err)
		ctx.Error("internal error", http.StatusInternalServerError)
		return
	}
	ctx.SetStatusCode(d.Status)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.Response.Header.Set("X-Frame-Options", "DENY")
	ctx.Response.Header.Set("Referrer-Policy", "no-referrer")
	ctx.Response.Header.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	ctx.SetBody(buf.Bytes())
}

func (rs *Routes) errorPage(ctx *fasthttp.RequestCtx, err error) {
	d := pageData{Status: http.StatusInternalServerError, Heading: "Something went wrong",
		Message: "We could not load this payment page. Please try again in a moment."}
	switch {
	case errors.Is(err, pc.ErrLinkDeleted):
		d.Status, d.Heading, d.Message = http.StatusGone, "This payment link has been removed",
			"The merchant has deleted this link, so it no longer takes payments. Ask them for a new one."
	case errors.Is(err, pc.ErrNotFound) || errors.Is(err, pc.ErrPaymentNotFound):
		d.Status, d.Heading, d.Message = http.StatusNotFound, "Payment link not found",
			"There is no payment page at this address. Check the link you were given."
	case api.Unavailable(err) != nil:
		d.Status, d.Heading, d.Message = http.StatusServiceUnavailable, "Temporarily unavailable",
			"This payment page cannot be loaded right now. Please try again in a moment."
		ctx.Response.Header.Set("Retry-After", "2")
		slog.Warn("checkout page: dependency unavailable", "error", err)
	default:
		slog.Error("checkout page", "error", err)
	}
	rs.render(ctx, d)
}

func slugOf(ctx *fasthttp.RequestCtx) string {
	s, _ := ctx.UserValue("slug").(string)
	return s
}

func pageContext(ctx *fasthttp.RequestCtx) (context.Context, context.CancelFunc) {
	return context.WithCancel(api.Ctx(ctx))
}

func refusalText(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, pc.ErrLinkInactive):
		return "This payment link is not accepting payments at the moment."
	case errors.Is(err, pi.ErrPaid):
		return "This invoice has already been paid. Thank you!"
	case errors.Is(err, pc.ErrNotPayable):
		return "This invoice is not open for payment."
	case errors.Is(err, pp.ErrOutOfStock):
		return "Sorry, an item on this page is out of stock, so it cannot be paid for now."
	}
	return "This link cannot take a payment right now."
}

// page renders GET /pay/{slug}[?payment=id].
func (rs *Routes) page(ctx *fasthttp.RequestCtx) {
	c, cancel := pageContext(ctx)
	defer cancel()
	slug := slugOf(ctx)
	v, err := rs.svc.Page(c, slug)
	if err != nil {
		rs.errorPage(ctx, err)
		return
	}
	d := pageData{Status: http.StatusOK, Slug: slug, Sandbox: v.Link.Tenant.Environment == "sandbox", Merchant: v.Merchant,
		Link: v.Link, Invoice: v.Invoice, Lines: v.Lines, Notice: noticeText(ctx.QueryArgs().Peek("notice"))}
	if raw := ctx.QueryArgs().Peek("payment"); len(raw) > 0 {
		if id, err := uuid.ParseBytes(raw); err == nil {
			p, _, err := rs.svc.Payment(c, slug, id)
			if err == nil {
				d.Payment, d.PayState = &p, p.StatusAt(rs.svc.Now())
			}
		}
	}
	if d.Payment == nil || d.PayState == pc.PaymentExpired {
		d.Refusal = refusalText(v.Refusal)
		if v.Refusal != nil {
			d.Status = http.StatusConflict
			if errors.Is(v.Refusal, pp.ErrOutOfStock) {
				d.Status = http.StatusUnprocessableEntity
			}
		}
	}
	rs.render(ctx, d)
}

// transfer handles POST /pay/{slug}/transfer: a new payment attempt, then back to the page.
func (rs *Routes) transfer(ctx *fasthttp.RequestCtx) {
	c, cancel := pageContext(ctx)
	defer cancel()
	slug := slugOf(ctx)
	p, err := rs.svc.StartPayment(c, slug)
	if err != nil {
		if msg, ok := refusedWith(err); ok {
			ctx.Redirect("/pay/"+slug+"?notice="+msg, http.StatusSeeOther)
			return
		}
		rs.errorPage(ctx, err)
		return
	}
	ctx.Redirect("/pay/"+slug+"?payment="+p.ID.String(), http.StatusSeeOther)
}

// simulate handles POST /pay/{slug}/simulate (sandbox): the sandbox deposit.
func (rs *Routes) simulate(ctx *fasthttp.RequestCtx) {
	c, cancel := pageContext(ctx)
	defer cancel()
	slug := slugOf(ctx)
	id, err := uuid.ParseBytes(ctx.PostArgs().Peek("payment"))
	if err != nil {
		rs.errorPage(ctx, pc.ErrPaymentNotFound)
		return
	}
	back := "/pay/" + slug + "?payment=" + id.String()
	if err := rs.svc.SimulateTransfer(c, slug, id); err != nil {
		if msg, ok := refusedWith(err); ok {
			ctx.Redirect(back+"&notice="+msg, http.StatusSeeOther)
			return
		}
		rs.errorPage(ctx, err)
		return
	}
	ctx.Redirect(back, http.StatusSeeOther)
}

type statusJSON struct {
	Status         string  `json:"status"`
	ExpiresAt      string  `json:"expires_at"`
	SuccessMessage *string `json:"success_message"`
	RedirectURL    *string `json:"redirect_url"`
	FailureReason  *string `json:"failure_reason"`
}

// status answers GET /pay/{slug}/status?payment=id for the page's poll.
func (rs *Routes) status(ctx *fasthttp.RequestCtx) {
	c, cancel := pageContext(ctx)
	defer cancel()
	ctx.Response.Header.Set("Cache-Control", "no-store")
	id, err := uuid.ParseBytes(ctx.QueryArgs().Peek("payment"))
	var p pc.Payment
	var l pc.Link
	if err == nil {
		p, l, err = rs.svc.Payment(c, slugOf(ctx), id)
	}
	if err != nil {
		var pe *payments.Error
		switch {
		case errors.Is(err, pc.ErrLinkDeleted):
			ctx.SetStatusCode(http.StatusGone)
			ctx.SetContentType("application/json")
			ctx.SetBodyString(`{"success":false,"message":"NOT_FOUND","detail":"this payment link has been removed"}`)
		case errors.As(err, &pe) && pe.Family == pp.Commerce || strings.Contains(err.Error(), "UUID"):
			api.Fail(ctx, pc.ErrPaymentNotFound)
		default:
			api.Fail(ctx, err)
		}
		return
	}
	out := statusJSON{Status: p.StatusAt(rs.svc.Now()), ExpiresAt: p.ExpiresAt.UTC().Format(time.RFC3339),
		FailureReason: p.FailureReason}
	if out.Status == pc.PaymentCompleted {
		out.SuccessMessage, out.RedirectURL = l.SuccessMessage, l.RedirectURL
	}
	api.OK(ctx, out)
}

// Notices are the refusals the hosted page can show after a redirect. The redirect carries
// only the code (?notice=link_inactive), and the page shows the sentence of a known code, so
// nobody can make the page display text of their choosing; an unknown code shows nothing.
var notices = []struct {
	code, text string
	err        error
}{
	{"link_inactive", "This payment link is not accepting payments at the moment.", pc.ErrLinkInactive},
	{"invoice_paid", "This invoice has already been paid. Thank you!", pi.ErrPaid},
	{"not_payable", "This invoice is not open for payment.", pc.ErrNotPayable},
	{"payment_closed", "This payment is no longer waiting for a transfer. Start a new one.", pc.ErrPaymentClosed},
	{"out_of_stock", "Sorry, an item on this page is out of stock, so it cannot be paid for now.", pp.ErrOutOfStock},
	{"product_inactive", "Sorry, an item on this page is no longer sold.", pp.ErrInactive},
	{"too_many_attempts", "Too many payments are open on this link. Try again in a few minutes.", pc.ErrTooManyAttempts},
	{"sandbox_only", "Transfers can only be simulated on sandbox links.", pc.ErrSandboxOnly},
	{"unavailable", "Bank transfer payments are not available right now. Try again later.", pc.ErrUnavailable},
	{"refused", "This link cannot take a payment right now.", nil},
}

// noticeText is the sentence of a notice code; empty for a code the page does not know.
func noticeText(code []byte) string {
	for _, n := range notices {
		if n.code == string(code) {
			return n.text
		}
	}
	return ""
}

// refusedWith reports a business refusal (any coded error but not-found, internal or
// unavailable) and the notice code the page shows it with.
func refusedWith(err error) (string, bool) {
	var c interface {
		error
		APICode() string
	}
	if !errors.As(err, &c) || api.Unavailable(err) != nil {
		return "", false
	}
	switch c.APICode() {
	case "NOT_FOUND", "INTERNAL_ERROR":
		return "", false
	}
	for _, n := range notices {
		if n.err != nil && errors.Is(err, n.err) {
			return n.code, true
		}
	}
	return "refused", true
}

// asset serves the embedded stylesheet and script.
func (rs *Routes) asset(ctx *fasthttp.RequestCtx) {
	name, _ := ctx.UserValue("file").(string)
	b, err := assetFiles.ReadFile("assets/" + path.Base(name))
	if err != nil {
		ctx.Error("not found", http.StatusNotFound)
		return
	}
	switch path.Ext(name) {
	case ".css":
		ctx.SetContentType("text/css; charset=utf-8")
	case ".js":
		ctx.SetContentType("text/javascript; charset=utf-8")
	}
	ctx.Response.Header.Set("Cache-Control", "public, max-age=300")
	ctx.Response.Header.Set("Content-Length", strconv.Itoa(len(b)))
	ctx.SetBody(b)
}
