package evm

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the custody's Prometheus collectors, labelled by chain; one set serves every
// chain's Custody (register it once).
type Metrics struct {
	Head           *prometheus.GaugeVec   // the node's head block
	Cursor         *prometheus.GaugeVec   // the last block the watcher processed
	NodeUp         *prometheus.GaugeVec   // 1 when the last call to the node succeeded
	HeadAge        *prometheus.GaugeVec   // seconds since the head block's timestamp
	Blocks         *prometheus.CounterVec // blocks processed
	Logs           *prometheus.CounterVec // Transfer logs read
	Transfers      *prometheus.CounterVec // transfers to our addresses recorded
	Credited       *prometheus.CounterVec // transfers notified after their confirmations
	Reorgs         *prometheus.CounterVec // reorganisations detected
	Dropped        *prometheus.CounterVec // transfers reorganised out before credit
	ReorgedCredits *prometheus.CounterVec // credited transfers a deep reorganisation removed (alert)
	Sends          *prometheus.CounterVec // sends by outcome (signed, replaced, confirmed, failed)
	Underfunded    *prometheus.GaugeVec   // 1 while a send waits for the hot wallet's funds (alert)
}

// NewMetrics returns unregistered collectors.
func NewMetrics() *Metrics {
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "svc", Subsystem: "custody", Name: name, Help: help}, labels)
	}
	c := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "svc", Subsystem: "custody", Name: name, Help: help}, labels)
	}
	return &Metrics{
		Head:           g("head_block", "The chain node's head block.", "chain"),
		Cursor:         g("cursor_block", "The last block the watcher processed.", "chain"),
		NodeUp:         g("node_up", "1 when the last call to the chain node succeeded.", "chain"),
		HeadAge:        g("head_age_seconds", "Age of the node's head block (a lagging node).", "chain"),
		Blocks:         c("blocks_total", "Blocks the watcher processed.", "chain"),
		Logs:           c("transfer_logs_total", "ERC-20 Transfer logs the watcher read.", "chain"),
		Transfers:      c("deposits_seen_total", "Token transfers to our deposit addresses recorded.", "chain"),
		Credited:       c("deposits_credited_total", "Deposits notified for credit after their confirmations.", "chain"),
		Reorgs:         c("reorgs_total", "Reorganisations the watcher detected.", "chain"),
		Dropped:        c("deposits_dropped_total", "Deposits reorganised out before they were credited.", "chain"),
		ReorgedCredits: c("reorged_credits_total", "Credited deposits a deep reorganisation removed: needs the operator.", "chain"),
		Sends:          c("sends_total", "On-chain sends by outcome.", "chain", "outcome"),
		Underfunded:    g("hot_wallet_underfunded", "1 while a send waits for the hot wallet's funds.", "chain", "asset"),
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.all() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.all() {
		c.Collect(ch)
	}
}

func (m *Metrics) all() []prometheus.Collector {
	return []prometheus.Collector{m.Head, m.Cursor, m.NodeUp, m.HeadAge, m.Blocks, m.Logs, m.Transfers, m.Credited, m.Reorgs,
		m.Dropped, m.ReorgedCredits, m.Sends, m.Underfunded}
}
