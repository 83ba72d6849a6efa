package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/snapshot"
)

// writeJournal runs an engine over a file journal in root/journal/sandbox: two funded
// accounts trade, one order is cancelled, a snapshot is saved half way (as svcd does)
// and more orders follow. It returns the journal's last offset.
func writeJournal(t *testing.T, root string) uint64 {
	t.Helper()
	j, err := journal.OpenFile(journal.FileOptions{Dir: filepath.Join(root, "journal", "sandbox")})
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
	a, b := engine.AccountID(uuid.New()), engine.AccountID(uuid.New())
	submit := func(c engine.Command) engine.Result {
		t.Helper()
		r, err := eng.Submit(&c)
		if err != nil || (r.Code != engine.OK) {
			t.Fatalf("submit %v: %v %v", c.Kind, r.Code, err)
		}
		return r
	}
	for _, acct := range []engine.AccountID{a, b} {
		submit(engine.Command{Kind: engine.CmdCredit, Account: acct, Asset: engine.NGN, Amount: 10_000_000_0000, TransferID: engine.TransferID(uuid.New())})
		submit(engine.Command{Kind: engine.CmdCredit, Account: acct, Asset: engine.USDT, Amount: 1_000_000_000000, TransferID: engine.TransferID(uuid.New())})
	}
	placed := 0
	order := func(acct engine.AccountID, side engine.Side, price engine.Price, qty engine.Qty) engine.OrderID {
		id := engine.OrderID(uuid.New())
		placed++ // client order ids are unique per account (engine 211433f)
		meta := ""
		if placed == 1 { // one order with metadata: an event of version 4 among version 1
			meta = `{"desk":"a"}`
		}
		submit(engine.Command{Kind: engine.CmdPlace, Account: acct, Symbol: "USDT-NGN", OrderID: id, Side: side, Type: engine.Limit,
			Price: price, Qty: qty, ClientOrderID: "c-" + strconv.Itoa(placed), Metadata: meta})
		return id
	}
	order(a, engine.Sell, 150000, 500) // 5.00 at 1500.00
	order(b, engine.Buy, 150000, 200)  // trades 2.00
	rest := order(a, engine.Buy, 140000, 100)
	submit(engine.Command{Kind: engine.CmdCancel, Account: a, OrderID: rest})
	data, off, err := eng.Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&snapshot.Store{Dir: filepath.Join(root, "snapshots", "sandbox")}).Save(off, data); err != nil {
		t.Fatal(err)
	}
	order(b, engine.Buy, 151000, 400) // trades the remaining 3.00 at 1500.00, rests 1.00
	order(a, engine.Sell, 160000, 100)
	eng.Stop()
	last := j.LastOffset()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return last
}

func svcRun(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestJournalInspect(t *testing.T) {
	root := t.TempDir()
	last := writeJournal(t, root)
	dir := filepath.Join(root, "journal")

	out, _, err := svcRun(t, "journal", "inspect", "--journal-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"1 CREDIT seq=1 ", "asset=NGN amount=10000000.00",
		"ORDER_ACCEPTED symbol=USDT-NGN seq=1 ", "side=sell type=limit tif=GTC price=1500.00 qty=5.00", `client_order_id="c-1" metadata={"desk":"a"}`,
		"TRADE symbol=USDT-NGN", "price=1500.00 qty=2.00 notional=3000.00", "taker_side=buy",
		"ORDER_CANCELLED", "reason=USER remaining=1.00 price=1400.00",
		"locked=+3000.00", "available=-3000.00",
		"records:      ", "  TRADE            2\n", "  CREDIT           4\n", "  symbol (funds)   4\n",
		"last offset:  " + itoa64(last),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}

	out, _, err = svcRun(t, "journal", "inspect", "--journal-dir", dir, "--from", "3", "--limit", "2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "3 CREDIT") || !strings.Contains(out, "\n4 CREDIT") || strings.Contains(out, "\n5 ") ||
		!strings.Contains(out, "records:      2 (offsets 3..4)") {
		t.Errorf("--from 3 --limit 2:\n%s", out)
	}

	out, _, err = svcRun(t, "journal", "inspect", "--journal-dir", dir, "--summary")
	if err != nil || strings.Contains(out, "CREDIT seq=") || !strings.Contains(out, "records:      "+itoa64(last)) {
		t.Errorf("--summary (%v):\n%s", err, out)
	}

	if _, _, err := svcRun(t, "journal", "inspect", "--journal-dir", filepath.Join(root, "nope")); err == nil || !strings.Contains(err.Error(), "no journal folder") {
		t.Errorf("missing folder: %v", err)
	}
	// svcd holds the journal's lock while it runs: the command says so.
	j, err := journal.OpenFile(journal.FileOptions{Dir: filepath.Join(dir, "sandbox")})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = svcRun(t, "journal", "inspect", "--journal-dir", dir)
	j.Close()
	if err == nil || !strings.Contains(err.Error(), "stop it first") {
		t.Errorf("locked journal: %v", err)
	}
}

func itoa64(v uint64) string { return strconv.FormatUint(v, 10) }

func TestJournalReplayVerify(t *testing.T) {
	root := t.TempDir()
	last := writeJournal(t, root)
	dir, snaps := filepath.Join(root, "journal"), filepath.Join(root, "snapshots")

	out, progress, err := svcRun(t, "journal", "replay", "--verify", "--journal-dir", dir, "--snapshot-dir", snaps)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "OK: ") || !strings.Contains(out, "up to offset "+itoa64(last)) || !strings.Contains(out, "snapshot: offset ") {
		t.Errorf("verify output:\n%s", out)
	}
	// stderr is not a terminal here: plain progress lines, no carriage returns.
	if !strings.Contains(progress, "replay: 100%") || strings.Contains(progress, "\r") {
		t.Errorf("progress on a non-terminal:\n%q", progress)
	}
	if _, _, err := svcRun(t, "journal", "replay", "--journal-dir", dir); err == nil {
		t.Error("replay without --verify should refuse")
	}

	// A snapshot that does not match the journal at its offset is a difference.
	store := &snapshot.Store{Dir: filepath.Join(snaps, "sandbox")}
	off, data, ok, err := store.Latest()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	other, _ := engine.New(engine.Config{Journal: &engine.DiscardJournal{}})
	if _, err := other.Restore(data); err != nil {
		t.Fatal(err)
	}
	if err := other.Apply([]engine.Event{{Seq: 5, Kind: engine.EventCredit, Account: engine.AccountID(uuid.New()), Asset: engine.USD, Amount: 100,
		TransferID: engine.TransferID(uuid.New()), NDeltas: 1, Deltas: [4]engine.BalanceDelta{{Account: engine.AccountID(uuid.New()), Asset: engine.USD, Available: 100}}}}); err != nil {
		t.Fatal(err)
	}
	bad, _, _ := other.Snapshot(nil)
	if _, err := store.Save(off+1, bad); err != nil { // newest, still within the journal
		t.Fatal(err)
	}
	out, _, err = svcRun(t, "journal", "replay", "--verify", "--journal-dir", dir, "--snapshot-dir", snaps, "--progress", "none")
	if err == nil || !strings.Contains(out, "DIFFERENCE: the snapshot at offset") {
		t.Errorf("tampered snapshot: err %v\n%s", err, out)
	}
}

func TestJournalReplayVerifyConservation(t *testing.T) {
	root := t.TempDir()
	writeJournal(t, root)
	dir := filepath.Join(root, "journal")
	// Append a credit whose balance effect is twice its amount: money from nowhere.
	j, err := journal.OpenFile(journal.FileOptions{Dir: filepath.Join(dir, "sandbox")})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	acct := engine.AccountID(uuid.New())
	ev := engine.Event{Seq: 5, Kind: engine.EventCredit, Account: acct, Asset: engine.USD, Amount: 100, TransferID: engine.TransferID(uuid.New()),
		NDeltas: 1, Deltas: [4]engine.BalanceDelta{{Account: acct, Asset: engine.USD, Available: 200}}}
	if _, err := j.Append(context.Background(), [][]byte{engine.AppendEvent(nil, &ev)}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	out, _, err := svcRun(t, "journal", "replay", "--verify", "--journal-dir", dir, "--snapshot-dir", filepath.Join(root, "snapshots"), "--progress", "none")
	if err == nil || !strings.Contains(out, "DIFFERENCE: USD not conserved: credits minus debits 1.00, held 2.00") {
		t.Errorf("err %v\n%s", err, out)
	}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, "bar", 200)
	p.update(100, 100)
	p.update(200, 200)
	p.done(200)
	s := b.String()
	if !strings.Contains(s, "\rreplay [####################....................]  50%") || !strings.Contains(s, "100% 200/200") {
		t.Errorf("bar: %q", s)
	}
}
