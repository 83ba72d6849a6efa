package journal

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kfake"
)

// createRawTopic creates a topic as an operator might have, with the given configs.
func createRawTopic(t *testing.T, brokers []string, topic string, rf int, configs map[string]string) {
	t.Helper()
	tc := kafka.TopicConfig{Topic: topic, NumPartitions: 1, ReplicationFactor: rf}
	for k, v := range configs {
		tc.ConfigEntries = append(tc.ConfigEntries, kafka.ConfigEntry{ConfigName: k, ConfigValue: v})
	}
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 5 * time.Second}
	resp, err := cl.CreateTopics(context.Background(), &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{tc}})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestKafkaTopicSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	three := newCluster(t, kfake.NumBrokers(3))
	brokers := three.ListenAddrs()
	ctx := context.Background()
	open := func(o KafkaOptions) (*Kafka, error) {
		o.Brokers, o.Timeout = brokers, 5*time.Second
		return OpenKafka(ctx, o)
	}

	t.Run("a created topic: replication factor 3, min.insync.replicas 2, infinite retention", func(t *testing.T) {
		topic := newTopic()
		j, err := open(KafkaOptions{Topic: topic})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		cfg, err := j.TopicConfig(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"min.insync.replicas": "2", "retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}
		for k, v := range want {
			if cfg[k] != v {
				t.Errorf("%s = %q, want %q", k, cfg[k], v)
			}
		}
		conn, err := kafka.Dial("tcp", brokers[0])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		parts, err := conn.ReadPartitions(topic)
		if err != nil || len(parts) != 1 || len(parts[0].Replicas) != 3 {
			t.Fatalf("partitions %+v, err %v", parts, err)
		}
		if r := j.Retention(); r.Finite() {
			t.Fatalf("retention %+v", r)
		}
		// And it holds a journal.
		j.Start()
		mustAppend(t, j, batchOf(1, 3))
		checkPayloads(t, readAll(t, j, 1), 1, 3)
	})

	t.Run("partitions of a created topic; the journal is partition 0", func(t *testing.T) {
		topic := newTopic()
		j, err := open(KafkaOptions{Topic: topic, Partitions: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		conn, _ := kafka.Dial("tcp", brokers[0])
		defer conn.Close()
		if parts, err := conn.ReadPartitions(topic); err != nil || len(parts) != 3 {
			t.Fatalf("partitions %d, err %v", len(parts), err)
		}
	})

	t.Run("an existing topic that cannot keep the journal is refused", func(t *testing.T) {
		cases := []struct {
			name    string
			rf      int
			configs map[string]string
			opts    KafkaOptions
			want    string // in the error; "" = accepted
		}{
			{"finite retention.ms", 3, map[string]string{"min.insync.replicas": "2", "retention.ms": "604800000", "retention.bytes": "-1"}, KafkaOptions{}, "retention.ms=604800000"},
			{"finite retention.bytes", 3, map[string]string{"min.insync.replicas": "2", "retention.ms": "-1", "retention.bytes": "1000000"}, KafkaOptions{}, "retention.bytes=1000000"},
			{"finite retention, allowed", 3, map[string]string{"min.insync.replicas": "2", "retention.ms": "604800000"}, KafkaOptions{AllowFiniteRetention: true}, ""},
			{"compacted", 3, map[string]string{"min.insync.replicas": "2", "retention.ms": "-1", "cleanup.policy": "compact"}, KafkaOptions{}, "cleanup.policy"},
			{"min.insync.replicas 1", 3, map[string]string{"min.insync.replicas": "1", "retention.ms": "-1"}, KafkaOptions{}, "min.insync.replicas"},
			{"one replica", 1, map[string]string{"min.insync.replicas": "1", "retention.ms": "-1"}, KafkaOptions{}, "1 replicas"},
			{"one replica, development", 1, map[string]string{"retention.ms": "-1"}, KafkaOptions{Dev: true}, ""},
			{"as svcd makes it", 3, map[string]string{"min.insync.replicas": "2", "retention.ms": "-1", "retention.bytes": "-1"}, KafkaOptions{}, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				topic := newTopic()
				createRawTopic(t, brokers, topic, tc.rf, tc.configs)
				o := tc.opts
				o.Topic = topic
				j, err := open(o)
				if err == nil {
					defer j.Close()
				}
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("refused: %v", err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Fatalf("err %v, want one naming %q", err, tc.want)
				}
				if tc.name == "finite retention, allowed" && !j.Retention().Finite() {
					t.Fatalf("retention %+v", j.Retention())
				}
			})
		}
	})

	t.Run("replication factor 3 on one broker names the development setting", func(t *testing.T) {
		one := newCluster(t)
		_, err := OpenKafka(ctx, KafkaOptions{Brokers: one.ListenAddrs(), Topic: newTopic(), Timeout: 5 * time.Second})
		if err == nil || !strings.Contains(err.Error(), "--kafka-dev") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("invalid settings", func(t *testing.T) {
		_, err := open(KafkaOptions{Topic: newTopic(), ReplicationFactor: 3, MinInsyncReplicas: 4})
		if err == nil {
			t.Fatal("min.insync.replicas above the replication factor accepted")
		}
	})
}

// selfSigned returns a server certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

func TestKafkaTLSAndSASL(t *testing.T) {
	if testing.Short() {
		t.Skip("kfake cluster")
	}
	cert, pool := selfSigned(t)
	c := newCluster(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "svc", "s3cret"))
	brokers := c.ListenAddrs()
	ctx := context.Background()
	mech := func(pass string) KafkaOptions {
		m, err := scram.Mechanism(scram.SHA512, "svc", pass)
		if err != nil {
			t.Fatal(err)
		}
		return KafkaOptions{Brokers: brokers, Dev: true, Timeout: 3 * time.Second, Epoch: 1,
			TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, SASL: m}
	}

	t.Run("TLS with SCRAM-SHA-512 writes and reads the journal", func(t *testing.T) {
		o := mech("s3cret")
		o.Topic = newTopic()
		j, err := OpenKafka(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		j.Start()
		mustAppend(t, j, batchOf(1, 5))
		checkPayloads(t, readAll(t, j, 1), 1, 5)
	})

	t.Run("a wrong password is refused at open", func(t *testing.T) {
		o := mech("wrong")
		o.Topic = newTopic()
		if j, err := OpenKafka(ctx, o); err == nil {
			j.Close()
			t.Fatal("opened with a wrong password")
		}
	})

	t.Run("an untrusted server certificate is refused at open", func(t *testing.T) {
		o := mech("s3cret")
		o.Topic = newTopic()
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12} // system roots only
		if j, err := OpenKafka(ctx, o); err == nil {
			j.Close()
			t.Fatal("opened against an untrusted certificate")
		}
	})
}
