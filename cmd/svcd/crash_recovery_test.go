package main

// Recovery figures (issue 5): how fast svcd's start-up rebuilds the engine from a large
// journal, with and without a snapshot. BenchmarkRecovery first writes a journal of
// realistic events through the real path (engine -> eventlog -> file journal, group
// commit and fdatasync), saving snapshots at 90% and at the end, then measures svcd's own
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
	if events, err = strconv.ParseUint(string(raw), 10, 64); err != nil {
		b.Fatal(err)
	}
	var size int64
	segs, _ := filepath.Glob(filepath.Join(root, "journal", "sandbox", "*.journal"))
	for _, s := range segs {
		if st, err := os.Stat(s); err == nil {
			size += st.Size()
		}
	}
	b.Logf("journal: %d events, %d segments, %.2f GB (%.0f bytes/event incl. framing)", events, len(segs), float64(size)/1e9, float64(size)/float64(events))

	for _, c := range []struct{ name, snaps string }{
		{"snapshot=none", filepath.Join(root, "no-snapshots")},
		{"snapshot=90pct", filepath.Join(root, "snapshots-90")},
		{"snapshot=end", filepath.Join(root, "snapshots-end")},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := config{Journal: "file", JournalDir: filepath.Join(root, "journal"), SnapshotDir: c.snaps}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			var replayed uint64
			var total, cpu time.Duration
			for i := 0; i < b.N; i++ {
				runtime.GC()
				start, cpu0 := time.Now(), cpuTime()
				x, err := openExchange(context.Background(), cfg, "sandbox", nil, log)
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				cpu += cpuTime() - cpu0
				if x.engine.Offset() != events {
					b.Fatalf("recovered to offset %d, want %d", x.engine.Offset(), events)
				}
				off, _, _, _ := x.snaps.Latest()
				replayed = events - off
				x.engine.Stop() // not x.close: that would write a snapshot
				_ = x.journal.Close()
			}
			secs := total.Seconds() / float64(b.N)
			b.ReportMetric(secs*1000, "startup-ms")
			b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms")
			b.ReportMetric(float64(replayed), "replayed-events")
			if replayed == events { // from scratch: the whole start-up is replay
				b.ReportMetric(float64(replayed)/secs, "events/s")
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
	eng, err := engine.New(engine.Config{Journal: eventlog.New(j)})
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
	save := func(dir string) {
		data, off, err := eng.Snapshot(nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (&snapshot.Store{Dir: filepath.Join(dir, "sandbox")}).Save(off, data); err != nil {
			b.Fatal(err)
		}
		b.Logf("snapshot at offset %d: %d bytes", off, len(data))
	}
	var snap90 sync.Once
	var stop atomic.Bool
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 42))
			var open []struct {
				acct engine.AccountID
				id   engine.OrderID
			}
			for !stop.Load() {
				if off := eng.Offset(); off >= events*9/10 {
					snap90.Do(func() { save(filepath.Join(root, "snapshots-90")) })
					if off >= events {
						stop.Store(true)
						return
					}
				}
				cmd := engine.Command{Time: time.Now().UnixNano()}
				switch k := r.IntN(100); {
				case (k < 30 && len(open) > 0) || len(open) >= 200: // at most 25,600 resting orders
					i := r.IntN(len(open))
					cmd.Kind, cmd.Account, cmd.OrderID = engine.CmdCancel, open[i].acct, open[i].id
					open[i] = open[len(open)-1]
					open = open[:len(open)-1]
				default:
					cmd.Kind, cmd.Account, cmd.OrderID = engine.CmdPlace, accts[r.IntN(nAccounts)], engine.OrderID(uuid.New())
					cmd.Symbol = symbols[r.IntN(len(symbols))]
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
				if cmd.Kind == engine.CmdPlace && res.Code == engine.OK && !res.State.Closed() {
					open = append(open, struct {
						acct engine.AccountID
						id   engine.OrderID
					}{cmd.Account, cmd.OrderID})
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
	el := time.Since(start)
	b.Logf("generated %d events in %s (%.0f events/s through engine + file journal)", last, el.Round(time.Second), float64(last)/el.Seconds())
	if err := os.WriteFile(filepath.Join(root, "complete"), []byte(strconv.FormatUint(last, 10)), 0o644); err != nil {
		b.Fatal(err)
	}
}
