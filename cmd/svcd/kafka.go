package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"svc/persistence/journal"
)

// kafkaConfig is the production settings of the Kafka journal (--journal=kafka): topic
// creation and checks, TLS and SASL. Brokers and the topic prefix are config.KafkaBrokers
// and config.KafkaTopic.
type kafkaConfig struct {
	Dev                  bool // one-broker development cluster: RF 1, min.insync.replicas 1
	ReplicationFactor    int  // 0: 3 (1 with Dev)
	MinInsyncReplicas    int  // 0: 2 (1 with Dev)
	Partitions           int
	AllowFiniteRetention bool
	// TLS and SASL/SCRAM: the flags and their meaning are shared with `svc journal`.
	journal.KafkaSecurity

	// EngineStandby: when another svcd holds an environment's engine lease, follow the
	// journal and wait for the lease (a hot standby) instead of refusing. Kafka journal
	// only (standby.go).
	EngineStandby bool
}

func (c *kafkaConfig) flags(fs *flag.FlagSet, env *envDefaults) {
	fs.BoolVar(&c.Dev, "kafka-dev", env.bool("kafka-dev", false), "DEVELOPMENT ONLY: a one-broker Kafka (make cluster's kfake): topics get replication factor 1 and min.insync.replicas 1, so acks=all means one copy")
	fs.IntVar(&c.ReplicationFactor, "kafka-replication-factor", env.int("kafka-replication-factor", 0), "replication factor of a journal topic svcd creates, and the least an existing one must have (0: 3, or 1 with --kafka-dev)")
	fs.IntVar(&c.MinInsyncReplicas, "kafka-min-insync-replicas", env.int("kafka-min-insync-replicas", 0), "min.insync.replicas of a created journal topic, and the least an existing one must have (0: 2, or 1 with --kafka-dev)")
	fs.IntVar(&c.Partitions, "kafka-partitions", env.int("kafka-partitions", 1), "partitions of a journal topic svcd creates (the journal is partition 0: one total order)")
	fs.BoolVar(&c.AllowFiniteRetention, "kafka-allow-finite-retention", env.bool("kafka-allow-finite-retention", false), "accept an existing journal topic with a finite retention.ms (at least 7 days and 100 x --snapshot-every); without it only retention.ms=-1 and retention.bytes=-1 are accepted")
	if err := c.KafkaSecurity.Flags(fs, env.getenv); err != nil && env.err == nil {
		env.err = err
	}
	fs.BoolVar(&c.EngineStandby, "engine-standby", env.bool("engine-standby", false), "with --journal=kafka: when another svcd runs an environment's engine, keep a copy of its engine current from the topic (a hot standby: nothing served meanwhile) and take over from that copy when its lease is free, instead of refusing to start")
}

func (c kafkaConfig) validate() error {
	var errs []error
	if c.ReplicationFactor < 0 || c.MinInsyncReplicas < 0 || c.Partitions < 1 {
		errs = append(errs, errors.New("-kafka-replication-factor and -kafka-min-insync-replicas must not be negative, -kafka-partitions at least 1"))
	}
	if !c.Dev && c.ReplicationFactor == 1 {
		errs = append(errs, errors.New("-kafka-replication-factor=1 keeps one copy of the journal: only with -kafka-dev"))
	}
	if c.ReplicationFactor > 0 && c.MinInsyncReplicas > c.ReplicationFactor {
		errs = append(errs, fmt.Errorf("-kafka-min-insync-replicas %d is above -kafka-replication-factor %d", c.MinInsyncReplicas, c.ReplicationFactor))
	}
	if err := c.KafkaSecurity.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// options are the journal's options for topic, without epoch and guard.
func (c kafkaConfig) options(brokers []string, topic string) (journal.KafkaOptions, error) {
	o := journal.KafkaOptions{Brokers: brokers, Topic: topic, Dev: c.Dev, ReplicationFactor: c.ReplicationFactor,
		MinInsyncReplicas: c.MinInsyncReplicas, Partitions: c.Partitions, AllowFiniteRetention: c.AllowFiniteRetention}
	if err := c.KafkaSecurity.Apply(&o); err != nil {
		return journal.KafkaOptions{}, err
	}
	return o, nil
}

// minFiniteRetention is the shortest retention.ms accepted with
// --kafka-allow-finite-retention: the journal must outlive the snapshot recovery starts from
// (and the projection's position) with a wide margin, including a svcd that stays down over
// a long weekend.
func minFiniteRetention(snapshotEvery time.Duration) time.Duration {
	return max(7*24*time.Hour, 100*snapshotEvery)
}

// checkRetention decides whether a finite retention is covered by the snapshots: only a
// time-based one (a size limit can delete records within minutes under load), at least
// minFiniteRetention, with periodic snapshots on. Recovery then still fails loudly
// (journal.ErrOffsetNotFound) if a record it needs is gone.
func checkRetention(r journal.Retention, snapshotEvery time.Duration) error {
	if !r.Finite() {
		return nil
	}
	switch {
	case r.Bytes >= 0:
		return fmt.Errorf("the journal topic has retention.bytes=%d: a size limit can delete records the snapshots do not cover yet; set it to -1", r.Bytes)
	case snapshotEvery <= 0:
		return errors.New("finite journal retention needs periodic snapshots (-snapshot-every > 0)")
	case time.Duration(r.Ms)*time.Millisecond < minFiniteRetention(snapshotEvery):
		return fmt.Errorf("the journal topic keeps records %s (retention.ms=%d); with -kafka-allow-finite-retention it must keep them at least %s (7 days and 100 x -snapshot-every)",
			time.Duration(r.Ms)*time.Millisecond, r.Ms, minFiniteRetention(snapshotEvery))
	}
	return nil
}
