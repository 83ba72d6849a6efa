package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"svc/persistence/journal"
)

func TestKafkaConfig(t *testing.T) {
	kafka := []string{"-journal", "kafka", "-kafka-brokers", "127.0.0.1:9092"}
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

	t.Run("production defaults; SASL credentials only from the environment", func(t *testing.T) {
		c, err := parseConfig(append(kafka, "-kafka-sasl-mechanism", "scram-sha-512", "-kafka-tls"),
			env(with(map[string]string{"SVC_KAFKA_SASL_USERNAME": "svc", "SVC_KAFKA_SASL_PASSWORD": "pw"})), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		o, err := c.Kafka.options(c.KafkaBrokers, "svc-journal-live")
		if err != nil {
			t.Fatal(err)
		}
		if o.Dev || o.ReplicationFactor != 0 || o.MinInsyncReplicas != 0 || o.Partitions != 1 || o.TLS == nil || o.SASL == nil ||
			o.SASL.Name() != "SCRAM-SHA-512" || o.AllowFiniteRetention {
			t.Fatalf("options %+v", o)
		}
		if c.EngineLeaseTTL != 3*time.Second {
			t.Fatalf("lease TTL %v", c.EngineLeaseTTL)
		}
	})

	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"one replica without the development flag", []string{"-kafka-replication-factor", "1"}, nil, "only with -kafka-dev"},
		{"min.insync above the replication factor", []string{"-kafka-replication-factor", "3", "-kafka-min-insync-replicas", "4"}, nil, "-kafka-min-insync-replicas 4"},
		{"SASL without credentials", []string{"-kafka-sasl-mechanism", "scram-sha-256"}, nil, "SVC_KAFKA_SASL_PASSWORD"},
		{"unknown SASL mechanism", []string{"-kafka-sasl-mechanism", "plain"}, map[string]string{"SVC_KAFKA_SASL_USERNAME": "u", "SVC_KAFKA_SASL_PASSWORD": "p"}, "want scram-sha-256 or scram-sha-512"},
		{"certificate without key", []string{"-kafka-tls-cert-file", "/nonexistent.pem"}, nil, "go together"},
		{"missing CA file", []string{"-kafka-tls-ca-file", "/nonexistent/ca.pem"}, nil, "-kafka-tls-ca-file"},
		{"no partitions", []string{"-kafka-partitions", "0"}, nil, "-kafka-partitions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(append(append([]string{}, kafka...), tc.args...), env(with(tc.env)), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}

	t.Run("development: one replica allowed", func(t *testing.T) {
		c, err := parseConfig(append(kafka, "-kafka-dev", "-kafka-replication-factor", "1"), env(base), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o, _ := c.Kafka.options(c.KafkaBrokers, "t"); !o.Dev || o.ReplicationFactor != 1 {
			t.Fatalf("options %+v", o)
		}
	})

	t.Run("the file journal ignores Kafka settings", func(t *testing.T) {
		if _, err := parseConfig([]string{"-kafka-sasl-mechanism", "bogus"}, env(base), io.Discard); err != nil {
			t.Fatalf("file journal: %v", err)
		}
	})
}

func TestFiniteRetentionDecision(t *testing.T) {
	day := int64(24 * time.Hour / time.Millisecond)
	cases := []struct {
		name  string
		r     journal.Retention
		every time.Duration
		ok    bool
	}{
		{"infinite", journal.Retention{Ms: -1, Bytes: -1}, time.Minute, true},
		{"30 days, snapshots every minute", journal.Retention{Ms: 30 * day, Bytes: -1}, time.Minute, true},
		{"exactly 7 days", journal.Retention{Ms: 7 * day, Bytes: -1}, time.Minute, true},
		{"1 day", journal.Retention{Ms: day, Bytes: -1}, time.Minute, false},
		{"30 days, snapshots every 12 hours (100x is 50 days)", journal.Retention{Ms: 30 * day, Bytes: -1}, 12 * time.Hour, false},
		{"no periodic snapshots", journal.Retention{Ms: 30 * day, Bytes: -1}, 0, false},
		{"a size limit", journal.Retention{Ms: -1, Bytes: 1 << 40}, time.Minute, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRetention(tc.r, tc.every)
			if (err == nil) != tc.ok {
				t.Fatalf("checkRetention = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
