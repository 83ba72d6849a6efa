// Package cli holds what the commands (svcd, svc) share: the version and commit stamped into
// the build, and flag values that never print a secret.
package cli

import (
	"net/url"
	"regexp"
)

// Redacted is what -h, flag errors and logs show instead of a secret that is set.
const Redacted = "REDACTED"

// Secret is a flag.Value over a string that never shows the string: flag's usage output
// prints a default through String, so a secret taken from the environment (SVC_JWT_SECRET,
// SVC_SMTP_PASSWORD, SVC_WEBHOOK_SECRET_KEY) would otherwise be printed by `svcd -h` and by
// every mistyped flag.
type Secret struct{ p *string }

// NewSecret returns the flag.Value writing to p.
func NewSecret(p *string) Secret { return Secret{p} }

// String shows REDACTED when set, never the value.
func (s Secret) String() string {
	if s.p == nil || *s.p == "" {
		return ""
	}
	return Redacted
}

// Set stores the value.
func (s Secret) Set(v string) error { *s.p = v; return nil }

// DSN is a flag.Value over a PostgreSQL connection string that shows it with its
// password replaced (URL form, or password=... in keyword/value form).
type DSN struct{ p *string }

// NewDSN returns the flag.Value writing to p.
func NewDSN(p *string) DSN { return DSN{p} }

// String shows the connection string with its password redacted.
func (d DSN) String() string {
	if d.p == nil {
		return ""
	}
	return RedactDSN(*d.p)
}

// Set stores the value.
func (d DSN) Set(v string) error { *d.p = v; return nil }

var dsnPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// RedactDSN returns a PostgreSQL URL or keyword/value string with any password (and any
// password query parameter) replaced by REDACTED.
func RedactDSN(s string) string {
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Redacted)
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", Redacted)
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return dsnPassword.ReplaceAllString(s, "${1}"+Redacted)
}
