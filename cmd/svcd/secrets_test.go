package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSecretsNeverPrinted: -h, a mistyped flag and a bad configuration print every flag's
// default, but never the value of a secret taken from the environment.
func TestSecretsNeverPrinted(t *testing.T) {
	secrets := map[string]string{
		"SVC_JWT_SECRET":             "jwt-secret-value-0123456789abcdef0123456789",
		"SVC_SMTP_PASSWORD":          "smtp-password-value",
		"SVC_WEBHOOK_SECRET_KEY":     "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
		"DATABASE_URL":               "postgres://svc:db-password-value@db.example:5432/svc?sslmode=disable",
		"SVC_PAYSTACK_SECRET_KEY":    "sk_live_paystack-secret-value",
		"SVC_SANDBOX_PARTNER_SECRET": "sandbox-partner-secret-value",
	}
	values := []string{"jwt-secret-value", "smtp-password-value", "00112233445566778899", "db-password-value", "paystack-secret-value",
		"sandbox-partner-secret-value"}
	cases := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"help", []string{"-h"}, nil},
		{"mistyped flag", []string{"--adr", ":1"}, nil},
		{"bad value", []string{"-log-level", "loud"}, nil},
		{"bad secret", nil, map[string]string{"SVC_WEBHOOK_SECRET_KEY": "short-secret-value"}},
		{"keyword dsn", []string{"-h"}, map[string]string{"DATABASE_URL": "host=db user=svc password=db-password-value dbname=svc"}},
		{"password in the query", []string{"-h"}, map[string]string{"DATABASE_URL": "postgres://db/svc?password=db-password-value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := map[string]string{}
			for k, v := range secrets {
				e[k] = v
			}
			for k, v := range tc.env {
				e[k] = v
			}
			var out, errOut bytes.Buffer
			err := run(context.Background(), tc.args, env(e), &out, &errOut)
			if err == nil {
				t.Fatal("want an error")
			}
			printed := out.String() + errOut.String() + err.Error()
			for _, v := range append(values, "short-secret-value") {
				if strings.Contains(printed, v) {
					t.Errorf("printed a secret (%s):\n%s", v, printed)
				}
			}
			if tc.name == "help" && (!strings.Contains(printed, "REDACTED") || !strings.Contains(printed, "postgres://svc:REDACTED@db.example:5432/svc")) {
				t.Errorf("-h should show that the secrets are set, redacted:\n%s", printed)
			}
		})
	}
}
