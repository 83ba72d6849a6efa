package main

import (
	"io"
	"strings"
	"testing"
)

// TestPartnersConfig: without SVC_PAYSTACK_SECRET_KEY live has no bank (and needs nothing
// else); with it, the phone and email domain are required and checked at start, and the key
// never appears in an error.
func TestPartnersConfig(t *testing.T) {
	const key = "sk_live_partners_config_secret_value"
	base := map[string]string{"DATABASE_URL": "postgres://x/y"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string // "" accepted; else a word of the error
		bank bool   // a Paystack client is built
	}{
		{"no key: no live bank", nil, base, "", false},
		{"key and settings", []string{"-paystack-phone", "+2348000000000", "-paystack-email-domain", "dva.example.com"},
			with(map[string]string{"SVC_PAYSTACK_SECRET_KEY": key}), "", true},
		{"settings from the environment", nil, with(map[string]string{"SVC_PAYSTACK_SECRET_KEY": key,
			"SVC_PAYSTACK_PHONE": "+2348000000000", "SVC_PAYSTACK_EMAIL_DOMAIN": "dva.example.com"}), "", true},
		{"key without phone", []string{"-paystack-email-domain", "dva.example.com"}, with(map[string]string{"SVC_PAYSTACK_SECRET_KEY": key}), "phone", false},
		{"key without email domain", []string{"-paystack-phone", "+2348000000000"}, with(map[string]string{"SVC_PAYSTACK_SECRET_KEY": key}), "email domain", false},
		{"key over http", []string{"-paystack-phone", "+2348000000000", "-paystack-email-domain", "dva.example.com", "-paystack-base-url", "http://api.example.com"},
			with(map[string]string{"SVC_PAYSTACK_SECRET_KEY": key}), "clear", false},
		{"bad bank codes", []string{"-paystack-bank-codes", "wema-bank=35"}, base, "-paystack-bank-codes", false},
		{"bad rate limit", []string{"-partner-rate-limit", "0"}, base, "-partner-rate-limit", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig(tc.args, env(tc.env), io.Discard)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				ps, err := c.Partners.paystack(nil)
				if err != nil || (ps != nil) != tc.bank {
					t.Fatalf("paystack client %v, %v; want one: %v", ps, err, tc.bank)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), key) {
				t.Fatalf("the key is in the error: %v", err)
			}
		})
	}
	// The sandbox partners' secret: the flag, else stable per database.
	c, _ := parseConfig(nil, env(base), io.Discard)
	if s1, s2 := c.Partners.sandboxSecret("postgres://a"), c.Partners.sandboxSecret("postgres://a"); s1 != s2 || s1 == c.Partners.sandboxSecret("postgres://b") {
		t.Fatal("the derived sandbox secret is not stable per database")
	}
	c, _ = parseConfig([]string{"-sandbox-partner-secret", "s3cret"}, env(base), io.Discard)
	if c.Partners.sandboxSecret("postgres://a") != "s3cret" {
		t.Fatal("-sandbox-partner-secret ignored")
	}
}
