package mail_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"svc/payments/paymentstest"
	"svc/payments/providers/mail"
)

type received struct {
	from, to, data, user string
}

type backend struct {
	mu   sync.Mutex
	got  []received
	user string
}

func (b *backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{b: b}, nil }

type session struct {
	b   *backend
	cur received
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }
func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != "mailer" || pass != "s3cret" {
			return errors.New("bad credentials")
		}
		s.cur.user = user
		return nil
	}), nil
}
func (s *session) Mail(from string, _ *smtp.MailOptions) error { s.cur.from = from; return nil }
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error   { s.cur.to = to; return nil }
func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = string(b)
	s.b.mu.Lock()
	s.b.got = append(s.b.got, s.cur)
	s.b.mu.Unlock()
	return nil
}
func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }

func startSMTP(t *testing.T) (*backend, string) {
	t.Helper()
	be := &backend{}
	srv := smtp.NewServer(be)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = 5 * time.Second
	srv.WriteTimeout = 5 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return be, ln.Addr().String()
}

func TestSMTPDeliversToARealListener(t *testing.T) {
	be, addr := startSMTP(t)
	s := &mail.SMTP{Addr: addr, From: "noreply@svc.test", Username: "mailer", Password: "s3cret"}
	err := s.Send(context.Background(), mail.Message{To: "merchant@example.test", Subject: "Your code", Text: "Code: 123456\n.dot line"})
	if err != nil {
		t.Fatal(err)
	}
	be.mu.Lock()
	defer be.mu.Unlock()
	if len(be.got) != 1 {
		t.Fatalf("got %d messages", len(be.got))
	}
	m := be.got[0]
	if m.from != "noreply@svc.test" || m.to != "merchant@example.test" || m.user != "mailer" {
		t.Fatalf("envelope %+v", m)
	}
	if !strings.Contains(m.data, "Subject: Your code") || !strings.Contains(m.data, "Code: 123456") || !strings.Contains(m.data, "\r\n.dot line") {
		t.Fatalf("data %q", m.data)
	}
}

func TestSMTPWrongPasswordFails(t *testing.T) {
	_, addr := startSMTP(t)
	s := &mail.SMTP{Addr: addr, From: "noreply@svc.test", Username: "mailer", Password: "wrong"}
	if err := s.Send(context.Background(), mail.Message{To: "a@example.test", Subject: "x", Text: "y"}); err == nil {
		t.Fatal("send with a wrong password succeeded")
	}
}

func TestSMTPRefusesHeaderInjection(t *testing.T) {
	_, addr := startSMTP(t)
	s := &mail.SMTP{Addr: addr, From: "noreply@svc.test"}
	if err := s.Send(context.Background(), mail.Message{To: "a@example.test", Subject: "x\r\nBcc: evil@example.test", Text: "y"}); err == nil {
		t.Fatal("header injection accepted")
	}
}

func TestSMTPUnreachableServerIsAnError(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	s := &mail.SMTP{Addr: addr, From: "noreply@svc.test", Timeout: time.Second}
	if err := s.Send(context.Background(), mail.Message{To: "a@example.test", Subject: "x", Text: "y"}); err == nil {
		t.Fatal("no error")
	}
}

func TestOutboxKeepsMail(t *testing.T) {
	pool, ctx := paymentstest.New(t)
	o := &mail.Outbox{DB: pool}
	if err := o.Send(ctx, mail.Message{To: "A@example.test", Subject: "Code", Text: "123456"}); err != nil {
		t.Fatal(err)
	}
	_ = o.Send(ctx, mail.Message{To: "b@example.test", Subject: "Other", Text: "x"})
	got, err := mail.ListOutbox(ctx, pool, "a@example.test", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Body != "123456" || got[0].Subject != "Code" {
		t.Fatalf("outbox %+v", got)
	}
}
