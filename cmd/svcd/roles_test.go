package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseRoles(t *testing.T) {
	cases := []struct {
		in      string
		want    roles
		wantErr string
	}{
		{"", allRoles, ""},
		{"all", allRoles, ""},
		{"engine", roles(roleEngine), ""},
		{"gateway, marketdata", roles(roleGateway | roleMarketData), ""},
		{"Projector,workers,projector", roles(roleProjector | roleWorkers), ""},
		{"engine,gateway,marketdata,projector,workers", allRoles, ""},
		{"gateway,all", 0, "stands alone"},
		{"gateway,matcher", 0, `unknown role "matcher"`},
		{",", 0, "empty"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseRoles(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v (%b), %v; want %v", got, got, err, tc.want)
			}
		})
	}
	if s := roles(roleGateway | roleEngine).String(); s != "engine,gateway" {
		t.Fatalf("String = %q", s)
	}
	var zero roles
	if !zero.has(roleEngine) || !zero.has(roleWorkers) || zero.String() != "all" {
		t.Fatal("the zero value is not every role")
	}
	if roles(roleGateway).has(roleEngine) {
		t.Fatal("a gateway has the engine role")
	}
}

func TestParseEnvAddrs(t *testing.T) {
	cases := []struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		{"", map[string]string{}, ""},
		{"sandbox=127.0.0.1:7101,live=127.0.0.1:7102", map[string]string{"sandbox": "127.0.0.1:7101", "live": "127.0.0.1:7102"}, ""},
		{" live = h:1 , sandbox=h:2", map[string]string{"sandbox": "h:2", "live": "h:1"}, ""},
		{"sandbox=127.0.0.1:7101", nil, "no address for live"},
		{"staging=h:1,sandbox=h:2,live=h:3", nil, `unknown environment "staging"`},
		{"sandbox=h:1,sandbox=h:2,live=h:3", nil, "given twice"},
		{"sandbox=h:1|h:2,live=h:3", map[string]string{"sandbox": "h:1|h:2", "live": "h:3"}, ""},
		{"sandbox=h:1|h,live=h:3", nil, "want host:port"},
		{"sandbox=h,live=h:3", nil, "want host:port"},
		{"sandbox,live=h:3", nil, "env=host:port"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseEnvAddrs("engine-addr", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestClusterConfigNeedsWhatTheRolesUse(t *testing.T) {
	addrs := map[string]string{"sandbox": "127.0.0.1:7101", "live": "127.0.0.1:7102"}
	cases := []struct {
		name    string
		c       clusterConfig
		journal string
		wantErr string // "" : valid
	}{
		{"the single process", clusterConfig{RolesFlag: "all"}, "file", ""},
		{"the single process on kafka", clusterConfig{RolesFlag: "all"}, "kafka", ""},
		{"a gateway calls the engine", clusterConfig{RolesFlag: "gateway", EngineAddr: addrs}, "file", ""},
		{"a gateway without an engine address", clusterConfig{RolesFlag: "gateway"}, "kafka", "needs -engine-addr"},
		{"an engine node serves the rpc", clusterConfig{RolesFlag: "engine", EngineListen: addrs}, "kafka", ""},
		{"an engine node that serves nobody", clusterConfig{RolesFlag: "engine"}, "kafka", "needs -engine-listen"},
		{"an engine node on a file journal", clusterConfig{RolesFlag: "engine", EngineListen: addrs}, "file", "needs -journal=kafka"},
		{"engine and projector and market data on a file journal", clusterConfig{RolesFlag: "engine,projector,marketdata", EngineListen: addrs}, "file", ""},
		{"a projector node", clusterConfig{RolesFlag: "projector"}, "kafka", ""},
		{"a projector node on a file journal", clusterConfig{RolesFlag: "projector"}, "file", "needs -journal=kafka"},
		{"a market-data node", clusterConfig{RolesFlag: "marketdata", EngineAddr: addrs}, "kafka", ""},
		{"an engine with an engine address", clusterConfig{RolesFlag: "all", EngineAddr: addrs}, "file", "-engine-addr is for a process without"},
		{"a gateway that listens for engine calls", clusterConfig{RolesFlag: "gateway", EngineAddr: addrs, EngineListen: addrs}, "kafka", "-engine-listen needs the engine role"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			rs, err := parseRoles(c.RolesFlag)
			if err != nil {
				t.Fatal(err)
			}
			c.Roles = rs
			err = c.validate(tc.journal)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
			}
		})
	}
}

// TestRolesFlag goes through parseConfig: the flag and SVC_ROLES set the roles the rest of
// svcd reads, and a bad value is refused before anything starts.
func TestRolesFlag(t *testing.T) {
	addrs := "sandbox=127.0.0.1:7101,live=127.0.0.1:7102"
	c, err := parseConfig([]string{"--roles", "gateway", "--engine-addr", addrs}, env(map[string]string{"DATABASE_URL": "x"}), io.Discard)
	if err != nil || c.Cluster.Roles != roles(roleGateway) || c.Cluster.EngineAddr["live"] != "127.0.0.1:7102" {
		t.Fatalf("--roles gateway: %v %v %v", c.Cluster.Roles, c.Cluster.EngineAddr, err)
	}
	c, err = parseConfig(nil, env(map[string]string{"DATABASE_URL": "x", "SVC_ROLES": "projector", "SVC_JOURNAL": "kafka",
		"SVC_KAFKA_BROKERS": "127.0.0.1:9092"}), io.Discard)
	if err != nil || c.Cluster.Roles != roles(roleProjector) {
		t.Fatalf("SVC_ROLES=projector: %v %v", c.Cluster.Roles, err)
	}
	c, err = parseConfig(nil, env(map[string]string{"DATABASE_URL": "x"}), io.Discard)
	if err != nil || c.Cluster.Roles != allRoles {
		t.Fatalf("default: %v %v", c.Cluster.Roles, err)
	}
	for _, args := range [][]string{{"--roles", "cache"}, {"--roles", "gateway"}} {
		if _, err := parseConfig(args, env(map[string]string{"DATABASE_URL": "x"}), io.Discard); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
}

func TestEngineTLSFlags(t *testing.T) {
	dir := t.TempDir()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "engine"}, IsCA: true,
		BasicConstraintsValid: true, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(k)
	cert, key, notPEM := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "x.pem")
	_ = os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	_ = os.WriteFile(notPEM, []byte("hello"), 0o600)

	c := clusterConfig{EngineTLSCert: cert, EngineTLSKey: key, EngineTLSCA: cert}
	s, err := c.serverTLS()
	if err != nil || s == nil || s.ClientAuth != tls.RequireAndVerifyClientCert || s.MinVersion != tls.VersionTLS13 {
		t.Fatalf("server TLS: %+v %v", s, err)
	}
	cl, err := c.clientTLS()
	if err != nil || cl == nil || cl.RootCAs == nil || len(cl.Certificates) != 1 {
		t.Fatalf("client TLS: %+v %v", cl, err)
	}
	if s, err := (clusterConfig{}).serverTLS(); s != nil || err != nil {
		t.Fatalf("no flags: %v %v, want plaintext", s, err)
	}
	if _, err := (clusterConfig{EngineTLSCA: notPEM}).clientTLS(); err == nil || !strings.Contains(err.Error(), "no PEM") {
		t.Fatalf("a CA file without PEM: %v", err)
	}
	addrs := map[string]string{"sandbox": "h:1", "live": "h:2"}
	bad := clusterConfig{Roles: roles(roleGateway), EngineAddr: addrs, EngineTLSCert: cert}
	if err := bad.validate("kafka"); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Fatalf("cert without key: %v", err)
	}
}
