package eventlog

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"testing"

	"svc/engine"
	"svc/persistence/journal"
)

func acct(n int) engine.AccountID {
	var a engine.AccountID
	a[0] = 0xEE
	binary.BigEndian.PutUint32(a[12:], uint32(n))
	return a
}

func id16(tag byte, n uint64) (v [16]byte) {
	v[0] = tag
	binary.BigEndian.PutUint64(v[8:], n)
	return v
}

// TestEngineOverFileJournal runs an engine on the file journal with producers that credit
// shared accounts with exactly what an order needs and place that order at once, on two
// symbols, and debit leftovers. Afterwards: OnDurable saw every symbol's batches in order
// and only once durable; every prefix of the journal on disk (what a SIGKILL could leave)
// replays to non-negative balances; the whole journal replays to the live balances.
func TestEngineOverFileJournal(t *testing.T) {
	dir := t.TempDir()
	fj, err := journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := fj.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	nextSeq := map[string]uint64{}
	log := New(fj, func(batch []engine.Event, last uint64) {
		if fj.LastOffset() < last {
			t.Errorf("OnDurable at %d, durable only up to %d", last, fj.LastOffset())
		}
		mu.Lock()
		defer mu.Unlock()
		for i := range batch {
			e := &batch[i]
			if e.Seq != nextSeq[e.Symbol]+1 {
				t.Errorf("OnDurable: %q seq %d after %d", e.Symbol, e.Seq, nextSeq[e.Symbol])
			}
			nextSeq[e.Symbol] = e.Seq
		}
	})
	eng, err := engine.New(engine.Config{Journal: log, MaxBatch: 64})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Start(); err != nil {
		t.Fatal(err)
	}
	const producers, per, accounts = 4, 300, 3
	syms := []string{"USDT-NGN", "USDC-NGN"}
	bases := []engine.Asset{engine.USDT, engine.USDC}
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(p), 9))
			wc, wo := engine.NewWaiter(), engine.NewWaiter()
			for i := range per {
				n := uint64(p)<<32 | uint64(i)
				a := acct(1 + r.IntN(accounts))
				k := r.IntN(2)
				side := engine.Side(1 + r.IntN(2))
				price := engine.Price(150000 + r.IntN(11) - 5)
				qty := engine.Qty(100 + r.IntN(3)*100)
				credit := engine.Command{Kind: engine.CmdCredit, Account: a, TransferID: id16(1, n)}
				if side == engine.Buy {
					credit.Asset, credit.Amount = engine.NGN, int64(price)*int64(qty)
				} else {
					credit.Asset, credit.Amount = bases[k], int64(qty)*10_000
				}
				order := engine.Command{Kind: engine.CmdPlace, Symbol: syms[k], Account: a, OrderID: id16(2, n),
					Side: side, Type: engine.Limit, Price: price, Qty: qty}
				if err := eng.SubmitAsync(&credit, wc); err != nil {
					t.Error(err)
					return
				}
				if err := eng.SubmitAsync(&order, wo); err != nil {
					t.Error(err)
					return
				}
				if _, err := wc.Wait(); err != nil {
					t.Error(err)
				}
				if _, err := wo.Wait(); err != nil {
					t.Error(err)
				}
				if r.IntN(3) == 0 {
					b := eng.Balances(a)
					for as, bal := range b {
						if bal.Available > 0 {
							eng.Submit(&engine.Command{Kind: engine.CmdDebit, Account: a, Asset: engine.Asset(as),
								Amount: bal.Available, TransferID: id16(3, n<<3|uint64(as))})
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	eng.Stop()
	live := make([]engine.Balances, accounts)
	for i := range live {
		live[i] = eng.Balances(acct(1 + i))
	}
	if err := fj.Close(); err != nil {
		t.Fatal(err)
	}

	fj, err = journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fj.Close()
	var events []engine.Event
	err = fj.ReadFrom(context.Background(), 1, func(off uint64, payload []byte) error {
		var e engine.Event
		return engine.DecodeRecord(payload, &e, func(e *engine.Event) error {
			events = append(events, *e)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	re, _ := engine.New(engine.Config{Journal: &engine.DiscardJournal{}})
	for i := range events {
		e := &events[i]
		if err := re.Apply(events[i : i+1]); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < int(e.NDeltas); k++ {
			d := &e.Deltas[k]
			if b := re.Balances(d.Account)[d.Asset]; b.Available < 0 || b.Locked < 0 {
				t.Fatalf("journal prefix of %d events (%v %q seq %d): %v available %d locked %d",
					i+1, e.Kind, e.Symbol, e.Seq, d.Asset, b.Available, b.Locked)
			}
		}
	}
	for i := range live {
		if got := re.Balances(acct(1 + i)); got != live[i] {
			t.Fatalf("account %d: replayed %v, live %v", i+1, got, live[i])
		}
	}
	t.Logf("%d events", len(events))
}
