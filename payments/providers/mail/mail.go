// Package mail sends the service's email: over SMTP when a server is configured, otherwise
// into the mail_outbox table (and a log line), so a local user can read one-time codes
// with `svc mail outbox`.
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/smtp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"svc/persistence/postgres"
)

// Message is one plain-text email.
type Message struct {
	To      string
	Subject string
	Text    string
}

// Sender delivers a message. Send returns once the message is accepted (by the SMTP server
// or the outbox).
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// SMTP sends through an SMTP server, with STARTTLS when the server offers it and PLAIN auth
// when a username is set.
type SMTP struct {
	Addr     string // host:port
	From     string
	Username string
	Password string
	Timeout  time.Duration // whole conversation; default 10s
	// TLSConfig is used for STARTTLS; nil verifies the server name of Addr.
	TLSConfig *tls.Config
}

var _ Sender = (*SMTP)(nil)

// Send delivers m.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	if strings.ContainsAny(m.To, "\r\n") || strings.ContainsAny(m.Subject, "\r\n") {
		return errors.New("mail: header injection refused")
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("mail: dial %s: %w", s.Addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	host, _, _ := net.SplitHostPort(s.Addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("mail: greeting: %w", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := s.TLSConfig
		if cfg == nil {
			cfg = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
		if err := c.StartTLS(cfg); err != nil {
			return fmt.Errorf("mail: starttls: %w", err)
		}
	}
	if s.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, host)); err != nil {
			return fmt.Errorf("mail: auth: %w", err)
		}
	}
	if err := c.Mail(s.From); err != nil {
		return fmt.Errorf("mail: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(m.To); err != nil {
		return fmt.Errorf("mail: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("mail: DATA: %w", err)
	}
	if _, err := w.Write(format(s.From, m)); err != nil {
		return fmt.Errorf("mail: write: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail: end of data: %w", err)
	}
	return c.Quit()
}

func format(from string, m Message) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\n", from)
	fmt.Fprintf(&b, "To: %s\r\n", m.To)
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", m.Subject))
	fmt.Fprintf(&b, "Date: %s\r\n", time.Now().UTC().Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@svc>\r\n", uuid.NewString())
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	for _, line := range strings.Split(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n") {
		b.WriteString(line)
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}

// Outbox keeps mail in the mail_outbox table instead of sending it, and logs that it did.
// The body (which may hold a one-time code) is logged only when LogBody is set, which svcd
// does in --demo mode; otherwise read it with `svc mail outbox`.
type Outbox struct {
	DB      postgres.Querier
	Log     *slog.Logger
	LogBody bool
}

var _ Sender = (*Outbox)(nil)

// Send stores m.
func (o *Outbox) Send(ctx context.Context, m Message) error {
	id := uuid.Must(uuid.NewV7())
	if _, err := o.DB.Exec(ctx, `insert into mail_outbox (id, to_addr, subject, body) values ($1, $2, $3, $4)`,
		id, m.To, m.Subject, m.Text); err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	if o.Log != nil {
		attrs := []any{"outbox_id", id.String(), "to", m.To, "subject", m.Subject, "read_with", "svc mail outbox --to " + m.To}
		if o.LogBody {
			attrs = append(attrs, "body", m.Text)
		}
		o.Log.Info("mail kept in outbox (no SMTP server configured)", attrs...)
	}
	return nil
}

// Stored is a message in the outbox.
type Stored struct {
	ID        uuid.UUID
	To        string
	Subject   string
	Body      string
	CreatedAt time.Time
}

// ListOutbox returns the newest messages, for one address when to is not empty.
func ListOutbox(ctx context.Context, q postgres.Querier, to string, limit int) ([]Stored, error) {
	rows, err := q.Query(ctx, `select id, to_addr, subject, body, created_at from mail_outbox
		where $1 = '' or lower(to_addr) = lower($1) order by created_at desc, id desc limit $2`, to, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Stored, error) {
		var s Stored
		err := r.Scan(&s.ID, &s.To, &s.Subject, &s.Body, &s.CreatedAt)
		return s, err
	})
}

// Outbox expiry: a body (which may hold a one-time code or a reset link) is kept only as long
// as it can be useful, then blanked; the row (address, subject, time) stays a while longer as
// a record that mail was sent, then goes.
const (
	// OutboxBodyTTL is how long an outbox body is readable (codes expire well before).
	OutboxBodyTTL = 24 * time.Hour
	// OutboxRowTTL is how long an outbox row is kept at all.
	OutboxRowTTL = 30 * 24 * time.Hour
	// ExpiredBody replaces an expired body.
	ExpiredBody = "[expired: outbox bodies are kept 24 hours]"
)

// PurgeOutbox blanks the bodies of outbox mail older than OutboxBodyTTL and deletes rows
// older than OutboxRowTTL, as of now; it returns how many rows it changed.
func PurgeOutbox(ctx context.Context, q postgres.Querier, now time.Time) (int64, error) {
	del, err := q.Exec(ctx, `delete from mail_outbox where created_at < $1`, now.Add(-OutboxRowTTL))
	if err != nil {
		return 0, fmt.Errorf("mail: purge outbox: %w", err)
	}
	upd, err := q.Exec(ctx, `update mail_outbox set body = $2 where created_at < $1 and body <> $2`,
		now.Add(-OutboxBodyTTL), ExpiredBody)
	if err != nil {
		return 0, fmt.Errorf("mail: expire outbox bodies: %w", err)
	}
	return del.RowsAffected() + upd.RowsAffected(), nil
}
