package main

import (
	"net/url"
	"regexp"
)

// redacted is what -h, flag errors and logs show instead of a secret that is set.
const redacted = "REDACTED"

// secretValue is a flag.Value over a string that never shows the string: flag's usage output
// prints a default through String, so a secret taken from the environment (SVC_JWT_SECRET,
// SVC_SMTP_PASSWORD, SVC_WEBHOOK_SECRET_KEY) would otherwise be printed by `svcd -h` and by
// every mistyped flag.
type secretValue struct{ p *string }

func (s secretValue) String() string {
	if s.p == nil || *s.p == "" {
		return ""
	}
	return redacted
}

func (s secretValue) Set(v string) error { *s.p = v; return nil }

// dsnValue is a flag.Value over a PostgreSQL connection string that shows it with its
// password replaced (URL form, or password=... in keyword/value form).
type dsnValue struct{ p *string }

func (d dsnValue) String() string {
	if d.p == nil {
		return ""
	}
	return redactDSN(*d.p)
}

func (d dsnValue) Set(v string) error { *d.p = v; return nil }

var dsnPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redactDSN returns a PostgreSQL URL or keyword/value string with any password (and any
// password query parameter) replaced by REDACTED.
func redactDSN(s string) string {
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", redacted)
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return dsnPassword.ReplaceAllString(s, "${1}"+redacted)
}
