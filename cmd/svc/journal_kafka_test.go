package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kfake"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
)

// testCA writes a self-signed certificate for 127.0.0.1 to dir/ca.pem (and its key to
// dir/key.pem) and returns it with the file names.
func testCA(t *testing.T, dir string) (cert tls.Certificate, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, certFile, keyFile
}

// TestJournalKafkaFlags: svc journal takes svcd's TLS and SASL flags (and their SVC_
// variables) with the same meaning, and they reach the journal's options.
func TestJournalKafkaFlags(t *testing.T) {
	dir := t.TempDir()
	_, ca, key := testCA(t, dir)
	creds := map[string]string{"SVC_KAFKA_SASL_USERNAME": "svc", "SVC_KAFKA_SASL_PASSWORD": "pw"}
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(o journal.KafkaOptions) bool
		err   string
	}{
		{"plain", nil, nil, func(o journal.KafkaOptions) bool { return o.TLS == nil && o.SASL == nil }, ""},
		{"TLS with the system's roots", []string{"-kafka-tls"}, nil,
			func(o journal.KafkaOptions) bool { return o.TLS != nil && o.TLS.RootCAs == nil && o.SASL == nil }, ""},
		{"TLS from the environment", nil, map[string]string{"SVC_KAFKA_TLS": "true"},
			func(o journal.KafkaOptions) bool { return o.TLS != nil }, ""},
		{"a CA file implies TLS", []string{"--kafka-tls-ca-file", ca}, nil,
			func(o journal.KafkaOptions) bool { return o.TLS != nil && o.TLS.RootCAs != nil }, ""},
		{"a client certificate", []string{"-kafka-tls-cert-file", ca, "-kafka-tls-key-file", key}, nil,
			func(o journal.KafkaOptions) bool { return o.TLS != nil && len(o.TLS.Certificates) == 1 }, ""},
		{"SCRAM-SHA-512, credentials from the environment", []string{"-kafka-sasl-mechanism", "scram-sha-512"}, creds,
			func(o journal.KafkaOptions) bool {
				return o.SASL != nil && o.SASL.Name() == "SCRAM-SHA-512" && o.TLS == nil
			}, ""},
		{"SCRAM-SHA-256 from the environment", nil,
			map[string]string{"SVC_KAFKA_SASL_MECHANISM": "scram-sha-256", "SVC_KAFKA_SASL_USERNAME": "u", "SVC_KAFKA_SASL_PASSWORD": "p"},
			func(o journal.KafkaOptions) bool { return o.SASL != nil && o.SASL.Name() == "SCRAM-SHA-256" }, ""},
		{"SASL without credentials", []string{"-kafka-sasl-mechanism", "scram-sha-256"}, nil, nil, "SVC_KAFKA_SASL_PASSWORD"},
		{"unknown SASL mechanism", []string{"-kafka-sasl-mechanism", "plain"}, creds, nil, "want scram-sha-256 or scram-sha-512"},
		{"certificate without key", []string{"-kafka-tls-cert-file", ca}, nil, nil, "go together"},
		{"missing CA file", []string{"-kafka-tls-ca-file", filepath.Join(dir, "nope.pem")}, nil, nil, "-kafka-tls-ca-file"},
		{"a CA file without a certificate", []string{"-kafka-tls-ca-file", key}, nil, nil, "no PEM certificate"},
		{"unreadable SVC_KAFKA_TLS", nil, map[string]string{"SVC_KAFKA_TLS": "maybe"}, nil, `SVC_KAFKA_TLS="maybe"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var src journalSource
			src.flags(fs, func(k string) string { return tc.env[k] })
			if err := fs.Parse(append([]string{"--kafka-brokers", "127.0.0.1:9092", "--kafka-topic", "svc-journal"}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			o, err := src.kafkaOptions()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Topic != "svc-journal-sandbox" || !o.ReadOnly || len(o.Brokers) != 1 || !tc.check(o) {
				t.Fatalf("options %+v", o)
			}
		})
	}
}

// TestJournalInspectKafkaTLSAndSASL reads a journal from a kfake broker that requires TLS
// and SCRAM-SHA-512, as an operator would a managed Kafka's.
func TestJournalInspectKafkaTLSAndSASL(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	cert, ca, _ := testCA(t, t.TempDir())
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "svc", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := strings.Join(c.ListenAddrs(), ",")

	// The engine writes one credit to svc-journal-sandbox over TLS and SASL.
	pool := x509.NewCertPool()
	pool.AddCert(must(x509.ParseCertificate(cert.Certificate[0])))
	mech, err := scram.Mechanism(scram.SHA512, "svc", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	j, err := journal.OpenKafka(ctx, journal.KafkaOptions{Brokers: c.ListenAddrs(), Topic: "svc-journal-sandbox", Dev: true,
		Timeout: 5 * time.Second, TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, SASL: mech})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	if r, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: engine.AccountID(uuid.New()), Asset: engine.NGN,
		Amount: 5_000_00, TransferID: engine.TransferID(uuid.New())}); err != nil || r.Code != engine.OK {
		t.Fatalf("credit: %v %v", r.Code, err)
	}
	eng.Stop()
	j.Close()

	inspect := func(env map[string]string, args ...string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), append([]string{"journal", "inspect", "--kafka-brokers", brokers, "--kafka-topic", "svc-journal"}, args...),
			func(k string) string { return env[k] }, &out, io.Discard)
		return out.String(), err
	}
	creds := map[string]string{"SVC_KAFKA_SASL_USERNAME": "svc", "SVC_KAFKA_SASL_PASSWORD": "s3cret"}
	out, err := inspect(creds, "--kafka-tls-ca-file", ca, "--kafka-sasl-mechanism", "scram-sha-512")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "1 CREDIT seq=1 ") || !strings.Contains(out, "amount=50.00") || !strings.Contains(out, "records:      1") {
		t.Fatalf("inspect:\n%s", out)
	}
	// Without TLS, or with a wrong password, the broker is not read.
	if _, err := inspect(creds, "--kafka-sasl-mechanism", "scram-sha-512"); err == nil {
		t.Error("read without TLS")
	}
	if _, err := inspect(map[string]string{"SVC_KAFKA_SASL_USERNAME": "svc", "SVC_KAFKA_SASL_PASSWORD": "wrong"},
		"--kafka-tls-ca-file", ca, "--kafka-sasl-mechanism", "scram-sha-512"); err == nil {
		t.Error("read with a wrong password")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
