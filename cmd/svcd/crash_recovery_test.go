package main

// Recovery figures (issue 5): how fast svcd's start-up rebuilds the engine from a large
// journal, with and without a snapshot. BenchmarkRecovery first writes a journal of
// realistic events through the real path (engine -> eventlog -> file journal, group
// commit and fdatasync; one journal record per engine batch, so the counts below are of
// events, not of records), saving snapshots at 90% and at the end, then measures svcd's own
// recovery (openExchange: open the journal and repair its tail, load the newest snapshot,
// replay the rest) for three snapshot folders: none, the 90% one, the final one.
//
//	SVC_RECOVERY_EVENTS=10000000 SVC_RECOVERY_DIR=/var/tmp/svc-recovery \
//	  go test -run '^$' -bench BenchmarkRecovery -benchtime 1x -count 5 -timeout 60m ./cmd/svcd
//
// SVC_RECOVERY_EVENTS defaults to 200,000; with SVC_RECOVERY_DIR the generated data is
// kept and reused by later runs with the same event count (delete the folder to redo it).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/lease"
	"svc/persistence/postgres/pgtest"
	"svc/persistence/snapshot"
)

func BenchmarkRecovery(b *testing.B) {
	events := uint64(200_000)
	if s := os.Getenv("SVC_RECOVERY_EVENTS"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil || v < 1000 {
			b.Fatalf("SVC_RECOVERY_EVENTS=%q: want a number >= 1000", s)
		}
		events = v
	}
	root := os.Getenv("SVC_RECOVERY_DIR")
	if root == "" {
		root = b.TempDir()
	}
	root = filepath.Join(root, fmt.Sprintf("events-%d", events))
	if _, err := os.Stat(filepath.Join(root, "complete")); err != nil {
		if err := os.RemoveAll(root); err != nil {
			b.Fatal(err)
		}
		generateRecoveryData(b, root, events)
	}
	// The generator overshoots the target by a few commands: use what it wrote.
	raw, err := os.ReadFile(filepath.Join(root, "complete"))
	if err != nil {
		b.Fatal(err)
	}
	var meta recoveryMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		b.Fatalf("%s/complete: %v (delete the folder to regenerate)", root, err)
	}
	events = meta.Events
	var size int64
	segs, _ := filepath.Glob(filepath.Join(root, "journal", "sandbox", "*.journal"))
	for _, s := range segs {
		if st, err := os.Stat(s); err == nil {
			size += st.Size()
		}
	}
	b.Logf("journal: %d events in %d records (offsets), %d segments, %.2f GB (%.0f bytes/event incl. framing)",
		events, meta.Offset, len(segs), float64(size)/1e9, float64(size)/float64(events))

	for _, c := range []struct {
		name, snaps string
		before      uint64 // events covered by the snapshot
	}{
		{"snapshot=none", filepath.Join(root, "no-snapshots"), 0},
		{"snapshot=90pct", filepath.Join(root, "snapshots-90"), meta.EventsAt90},
		{"snapshot=end", filepath.Join(root, "snapshots-end"), meta.Events},
	} {
		b.Run(c.name, func(b *testing.B) {
			// svcd's start takes the environment's engine lease and checks the projection's
			// position in PostgreSQL: a fresh database each, as production has one.
			pool, dbURL := pgtest.New(b)
			cfg := config{Journal: "file", JournalDir: filepath.Join(root, "journal"), SnapshotDir: c.snaps,
				DatabaseURL: dbURL, EngineLeaseTTL: lease.DefaultTTL}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			var replayed uint64
			var total, cpu, answered time.Duration
			for i := 0; i < b.N; i++ {
				runtime.GC()
				start, cpu0 := time.Now(), cpuTime()
				x, err := openExchange(context.Background(), cfg, "sandbox", pool, log)
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				cpu += cpuTime() - cpu0
				// The first order after the restart: one from an account with no funds, so
				// the engine answers it (insufficient funds) without writing to the journal,
				// which later runs read again. An accepted order adds one group commit.
				r, err := x.engine.Submit(&engine.Command{Kind: engine.CmdPlace, Symbol: "USDT-NGN",
					Account: engine.AccountID(uuid.New()), OrderID: engine.OrderID(uuid.New()), Side: engine.Buy,
					Type: engine.Limit, Price: 150000, Qty: 100, Time: time.Now().UnixNano()}) // as the generator places
				if err != nil || r.Code != engine.RejectInsufficientFunds {
					b.Fatalf("first order after the restart: %v %v", r.Code, err)
				}
				answered += time.Since(start)
				if x.engine.Offset() != meta.Offset {
					b.Fatalf("recovered to offset %d, want %d", x.engine.Offset(), meta.Offset)
				}
				replayed = events - c.before
				x.engine.Stop() // not x.close: that would write a snapshot
				_ = x.journal.Close()
				x.lease.release()
			}
			secs := total.Seconds() / float64(b.N)
			b.ReportMetric(secs*1000, "startup-ms")
			b.ReportMetric(answered.Seconds()*1000/float64(b.N), "first-order-ms")
			b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms")
			b.ReportMetric(float64(replayed), "replayed-events")
			if replayed == events { // from scratch: the whole start-up is replay
				b.ReportMetric(float64(replayed)/secs, "events/s")
				b.ReportMetric(float64(replayed)/(cpu.Seconds()/float64(b.N)), "events/cpu-s")
			}
		})
	}
	b.Run("eventlog.Replay", func(b *testing.B) {
		// The replay loop alone (journal already open): decode + Apply.
		j, err := journal.OpenFile(journal.FileOptions{Dir: filepath.Join(root, "journal", "sandbox")})
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		var total, cpu time.Duration
		for i := 0; i < b.N; i++ {
			runtime.GC()
			eng, err := engine.New(engine.Config{Journal: &engine.DiscardJournal{}})
			if err != nil {
				b.Fatal(err)
			}
			start, cpu0 := time.Now(), cpuTime()
			if _, n, err := eventlog.Replay(context.Background(), j, 0, eng, nil); err != nil || uint64(n) != events {
				b.Fatalf("replay: %d events, %v", n, err)
			}
			total += time.Since(start)
			cpu += cpuTime() - cpu0
		}
		b.ReportMetric(float64(events)/(total.Seconds()/float64(b.N)), "events/s")
		b.ReportMetric(float64(events)/(cpu.Seconds()/float64(b.N)), "events/cpu-s")
	})
}

// cpuTime is the process's user + system CPU time (all threads, GC included): on a shared
// machine it shows what the work costs when wall time is inflated by other processes.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// generateRecoveryData drives a real engine over a file journal until it holds `events`
// events: 1,000 funded accounts, 128 concurrent clients placing limit orders around a mid
// price on three symbols (about half of them cross), a few market orders, and cancels of
// their own resting orders (each client keeps at most 200 resting). Snapshots are saved at 90% and at the end.
func generateRecoveryData(b *testing.B, root string, events uint64) {
	b.Helper()
	start := time.Now()
	j, err := journal.OpenFile(journal.FileOptions{Dir: filepath.Join(root, "journal", "sandbox")})
	if err != nil {
		b.Fatal(err)
	}
	if err := j.Start(); err != nil {
		b.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j, nil)})
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		b.Fatal(err)
	}
	const nAccounts, clients = 1000, 128
	accts := make([]engine.AccountID, nAccounts)
	for i := range accts {
		accts[i] = engine.AccountID(uuid.New())
		for _, a := range []engine.Asset{engine.NGN, engine.USDT, engine.USDC, engine.USD} {
			r, err := eng.Submit(&engine.Command{Kind: engine.CmdCredit, Account: accts[i], Asset: a, Amount: 1 << 52,
				TransferID: engine.TransferID(uuid.New()), Time: time.Now().UnixNano()})
			if err != nil || r.Code != engine.OK {
				b.Fatalf("credit: %v %v", r.Code, err)
			}
		}
	}
	symbols := []string{"USDT-NGN", "USDC-NGN", "USD-NGN"}
	// Events so far: each stream's sequence grows by one per event (the funds stream holds
	// the credits above), and a result carries its command's last sequence.
	var seqs [3]atomic.Uint64
	produced := func() uint64 { return 4*nAccounts + seqs[0].Load() + seqs[1].Load() + seqs[2].Load() }
	var snap90Offset atomic.Uint64
	save := func(dir string) uint64 {
		data, off, err := eng.Snapshot(nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (&snapshot.Store{Dir: filepath.Join(dir, "sandbox")}).Save(off, data); err != nil {
			b.Fatal(err)
		}
		b.Logf("snapshot at offset %d: %d bytes", off, len(data))
		return off
	}
	var snap90 sync.Once
	var stop atomic.Bool
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 42))
			var open []openOrder
			for !stop.Load() {
				if n := produced(); n >= events*9/10 {
					snap90.Do(func() { snap90Offset.Store(save(filepath.Join(root, "snapshots-90"))) })
					if n >= events {
						stop.Store(true)
						return
					}
				}
				cmd := engine.Command{Time: time.Now().UnixNano()}
				sym := r.IntN(len(symbols))
				switch k := r.IntN(100); {
				case (k < 30 && len(open) > 0) || len(open) >= 200: // at most 25,600 resting orders
					i := r.IntN(len(open))
					cmd.Kind, cmd.Account, cmd.OrderID, sym = engine.CmdCancel, open[i].acct, open[i].id, open[i].sym
					open[i] = open[len(open)-1]
					open = open[:len(open)-1]
				default:
					cmd.Kind, cmd.Account, cmd.OrderID = engine.CmdPlace, accts[r.IntN(nAccounts)], engine.OrderID(uuid.New())
					cmd.Symbol = symbols[sym]
					cmd.Side = engine.Side(1 + r.IntN(2))
					cmd.Qty = engine.Qty(100 * (1 + r.IntN(10)))
					cmd.ClientOrderID = "gen-" + strconv.Itoa(r.IntN(1_000_000))
					if k < 95 {
						cmd.Type, cmd.Price = engine.Limit, engine.Price(150000+r.IntN(41)-20)
					} else {
						cmd.Type = engine.Market
					}
				}
				res, err := eng.Submit(&cmd)
				if err != nil {
					b.Errorf("submit: %v", err)
					stop.Store(true)
					return
				}
				for s := &seqs[sym]; ; {
					cur := s.Load()
					if res.Seq <= cur || s.CompareAndSwap(cur, res.Seq) {
						break
					}
				}
				if cmd.Kind == engine.CmdPlace && res.Code == engine.OK && !res.State.Closed() {
					open = append(open, openOrder{cmd.Account, cmd.OrderID, sym})
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	// The clients overshoot by up to one command each: cut the snapshot at the end and
	// report the real count.
	save(filepath.Join(root, "snapshots-end"))
	if err := os.MkdirAll(filepath.Join(root, "no-snapshots"), 0o755); err != nil {
		b.Fatal(err)
	}
	last := eng.Offset()
	eng.Stop()
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	meta := countRecoveryEvents(b, filepath.Join(root, "journal", "sandbox"), snap90Offset.Load())
	if meta.Offset != last {
		b.Fatalf("journal ends at %d, engine at %d", meta.Offset, last)
	}
	el := time.Since(start)
	b.Logf("generated %d events in %d records in %s (%.0f events/s through engine + file journal)", meta.Events, last,
		el.Round(time.Second), float64(meta.Events)/el.Seconds())
	raw, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(root, "complete"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
}

type openOrder struct {
	acct engine.AccountID
	id   engine.OrderID
	sym  int
}

// recoveryMeta describes generated data: the last journal offset (records), the events in
// the journal and the events up to the 90% snapshot's offset.
type recoveryMeta struct {
	Offset     uint64 `json:"offset"`
	Events     uint64 `json:"events"`
	EventsAt90 uint64 `json:"events_at_90"`
}

func countRecoveryEvents(b *testing.B, dir string, snap90 uint64) recoveryMeta {
	b.Helper()
	j, err := journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	var m recoveryMeta
	var ev engine.Event
	err = j.ReadFrom(context.Background(), 1, func(off uint64, payload []byte) error {
		m.Offset = off
		return engine.DecodeRecord(payload, &ev, func(*engine.Event) error {
			m.Events++
			if off <= snap90 {
				m.EventsAt90++
			}
			return nil
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	return m
}
