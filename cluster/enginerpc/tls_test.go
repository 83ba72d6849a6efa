package enginerpc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"

	"svc/engine"
)

// testPKI is a CA with one server and one client certificate for 127.0.0.1.
type testPKI struct {
	pool           *x509.CertPool
	server, client tls.Certificate
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test engine CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage) tls.Certificate {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "node"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return testPKI{pool: pool, server: leaf(2, x509.ExtKeyUsageServerAuth), client: leaf(3, x509.ExtKeyUsageClientAuth)}
}

func TestMutualTLS(t *testing.T) {
	r := newRig(t) // its plaintext server is not used here
	pki := newPKI(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(r.eng, ServerOptions{TLS: &tls.Config{Certificates: []tls.Certificate{pki.server},
		ClientCAs: pki.pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	defer func() { srv.Stop(context.Background()); <-done }()
	addr := lis.Addr().String()

	good, err := Dial(addr, Options{TLS: &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pki.client}, MinVersion: tls.VersionTLS13}})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	if res := fund(t, good, alice, engine.NGN, "1000", 9); res.Code != engine.OK {
		t.Fatalf("credit over mutual TLS: %v", res.Code)
	}

	for name, cfg := range map[string]*tls.Config{
		"no client certificate": {RootCAs: pki.pool, MinVersion: tls.VersionTLS13},
		"plaintext":             nil,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Dial(addr, Options{TLS: cfg, ReadTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Ping(context.Background()); !errors.Is(err, engine.ErrUnavailable) {
				t.Fatalf("ping: %v, want refused", err)
			}
		})
	}
}
