package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"svc/engine"
	"svc/persistence/eventlog"
	"svc/persistence/journal"
	"svc/persistence/snapshot"
)

// runJournal is `svc journal inspect|replay`: read an environment's journal (the files
// svcd writes under --journal-dir/ENV, or the Kafka topic PREFIX-ENV) without svcd.
func runJournal(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		journalUsage(stdout)
		return nil
	}
	switch args[0] {
	case "inspect":
		return journalInspect(ctx, args[1:], env, stdout, stderr)
	case "replay":
		return journalReplay(ctx, args[1:], env, stdout, stderr)
	}
	journalUsage(stderr)
	return fmt.Errorf("journal: unknown subcommand %q", args[0])
}

func journalUsage(w io.Writer) {
	fmt.Fprintln(w, `usage:
  svc journal inspect [--journal-dir DIR | --kafka-brokers HOSTS --kafka-topic PREFIX] [--env sandbox] [--from N] [--limit N] [--summary]
      print each record (offset, kind, symbol, sequence, fields as decimal strings), then a summary
  svc journal replay --verify [--journal-dir DIR | --kafka-brokers ...] [--snapshot-dir DIR] [--env sandbox]
      rebuild the engine from the whole journal, compare it with the newest snapshot at that
      snapshot's offset, check that balances are conserved; exit status 1 on any difference

The file journal is locked while svcd runs: stop svcd first (or work on a copy of the folder).
A managed Kafka takes svcd's flags: --kafka-tls, --kafka-tls-ca-file, --kafka-tls-cert-file,
--kafka-tls-key-file, --kafka-sasl-mechanism scram-sha-256|scram-sha-512 (the user and password
only from SVC_KAFKA_SASL_USERNAME and SVC_KAFKA_SASL_PASSWORD).
Flags default like svcd's (SVC_JOURNAL_DIR, SVC_KAFKA_BROKERS, SVC_KAFKA_TOPIC, SVC_KAFKA_TLS...,
SVC_SNAPSHOT_DIR).`)
}

// journalSource is where a journal is, as svcd is told.
type journalSource struct {
	kind, dir, brokers, topic, env string
	kafka                          journal.KafkaSecurity // TLS and SASL, svcd's flags
	envErr                         error                 // an SVC_KAFKA_* value Flags could not read
}

func (s *journalSource) flags(fs *flag.FlagSet, env func(string) string) {
	def := func(name, d string) string {
		if v := env("SVC_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); v != "" {
			return v
		}
		return d
	}
	fs.StringVar(&s.kind, "journal", def("journal", ""), "file or kafka (default: kafka when --kafka-brokers is set, else file)")
	fs.StringVar(&s.dir, "journal-dir", def("journal-dir", ".data/journal"), "file journal folder, as given to svcd (the environment's sub-folder is read)")
	fs.StringVar(&s.brokers, "kafka-brokers", def("kafka-brokers", ""), "comma-separated Kafka bootstrap addresses")
	fs.StringVar(&s.topic, "kafka-topic", def("kafka-topic", "svc-journal"), "Kafka topic prefix, as given to svcd (the environment is appended)")
	fs.StringVar(&s.env, "env", "sandbox", "environment: sandbox or live")
	s.envErr = s.kafka.Flags(fs, env)
}

// where names the journal for messages.
func (s *journalSource) where() string {
	if s.isKafka() {
		return "kafka topic " + s.topic + "-" + s.env
	}
	return filepath.Join(s.dir, s.env)
}

func (s *journalSource) isKafka() bool {
	return s.kind == "kafka" || (s.kind == "" && s.brokers != "")
}

// open opens the journal for reading (its committer is never started, nothing is appended).
func (s *journalSource) open(ctx context.Context) (journal.Journal, error) {
	if s.env != "sandbox" && s.env != "live" {
		return nil, fmt.Errorf("--env %q: want sandbox or live", s.env)
	}
	if s.isKafka() {
		opts, err := s.kafkaOptions()
		if err != nil {
			return nil, err
		}
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return journal.OpenKafka(octx, opts)
	}
	if s.kind != "" && s.kind != "file" {
		return nil, fmt.Errorf("--journal %q: want file or kafka", s.kind)
	}
	dir := filepath.Join(s.dir, s.env)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("no journal folder %s (--journal-dir is the folder given to svcd)", dir)
	}
	j, err := journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil && strings.Contains(err.Error(), "in use") {
		return nil, fmt.Errorf("%w (svcd is running on it: stop it first, or inspect a copy of the folder)", err)
	}
	return j, err
}

// kafkaOptions are the options of the environment's topic, opened read-only, with svcd's
// TLS and SASL settings.
func (s *journalSource) kafkaOptions() (journal.KafkaOptions, error) {
	brokers := splitComma(s.brokers)
	if len(brokers) == 0 {
		return journal.KafkaOptions{}, errors.New("--kafka-brokers is required with --journal=kafka")
	}
	if s.envErr != nil {
		return journal.KafkaOptions{}, s.envErr
	}
	o := journal.KafkaOptions{Brokers: brokers, Topic: s.topic + "-" + s.env, ReadOnly: true}
	if err := s.kafka.Apply(&o); err != nil {
		return journal.KafkaOptions{}, err
	}
	return o, nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func journalInspect(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc journal inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var src journalSource
	src.flags(fs, env)
	from := fs.Uint64("from", 1, "first offset to print")
	limit := fs.Int("limit", 0, "print at most this many records (0: all)")
	summary := fs.Bool("summary", false, "print only the summary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	j, err := src.open(ctx)
	if err != nil {
		return err
	}
	defer j.Close()

	pairs := pairsBySymbol()
	var (
		ev        engine.Event
		n         int
		first     uint64
		lastRead  uint64
		byKind    = map[engine.EventKind]int{}
		bySymbol  = map[string]int{}
		line      []byte
		errLimitR = errors.New("limit reached")
		events    int
	)
	err = j.ReadFrom(ctx, *from, func(off uint64, payload []byte) error {
		if *limit > 0 && n >= *limit {
			return errLimitR
		}
		if first == 0 {
			first = off
		}
		lastRead = off
		n++
		// A record is one batch of events (one engine batch).
		err := engine.DecodeRecord(payload, &ev, func(ev *engine.Event) error {
			events++
			byKind[ev.Kind]++
			bySymbol[ev.Symbol]++
			if !*summary {
				line = appendEventLine(line[:0], off, ev, pairs)
				line = append(line, '\n')
				if _, err := stdout.Write(line); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("offset %d: %w", off, err)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errLimitR) {
		return fmt.Errorf("read %s: %w", src.where(), err)
	}
	fmt.Fprintf(stdout, "\njournal %s\n", src.where())
	fmt.Fprintf(stdout, "records:      %d", n)
	if n > 0 {
		fmt.Fprintf(stdout, " (offsets %d..%d)", first, lastRead)
	}
	fmt.Fprintf(stdout, "\nevents:       %d\n", events)
	kinds := make([]engine.EventKind, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		fmt.Fprintf(stdout, "  %-16s %d\n", k.String(), byKind[k])
	}
	syms := make([]string, 0, len(bySymbol))
	for s := range bySymbol {
		syms = append(syms, s)
	}
	slices.Sort(syms)
	for _, s := range syms {
		name := s
		if name == "" {
			name = "(funds)"
		}
		fmt.Fprintf(stdout, "  symbol %-9s %d\n", name, bySymbol[s])
	}
	fmt.Fprintf(stdout, "last offset:  %d\n", j.LastOffset())
	return nil
}

func pairsBySymbol() map[string]engine.PairConfig {
	m := map[string]engine.PairConfig{}
	for _, p := range engine.DefaultPairs() {
		m[p.Symbol] = p
	}
	return m
}

// appendEventLine formats one record: every field the event kind uses, amounts as decimal
// strings in the units of their asset, prices and quantities in the pair's.
func appendEventLine(b []byte, off uint64, e *engine.Event, pairs map[string]engine.PairConfig) []byte {
	b = fmt.Appendf(b, "%d %s", off, e.Kind)
	if e.Symbol != "" {
		b = fmt.Appendf(b, " symbol=%s", e.Symbol)
	}
	b = fmt.Appendf(b, " seq=%d time=%s", e.Seq, time.Unix(0, e.Time).UTC().Format("2006-01-02T15:04:05.000000Z"))
	p, havePair := pairs[e.Symbol]
	price := func(v engine.Price) string {
		if havePair {
			return p.FormatPrice(v)
		}
		return fmt.Sprint(int64(v))
	}
	qty := func(v engine.Qty) string {
		if havePair {
			return p.FormatQty(v)
		}
		return fmt.Sprint(int64(v))
	}
	switch e.Kind {
	case engine.EventAccepted:
		b = fmt.Appendf(b, " account=%s order=%s side=%s type=%s tif=%s", uuid.UUID(e.Account), uuid.UUID(e.OrderID), e.Side, e.Type, e.TIF)
		if e.Type == engine.Limit {
			b = fmt.Appendf(b, " price=%s", price(e.Price))
		}
		if e.Qty != 0 {
			b = fmt.Appendf(b, " qty=%s", qty(e.Qty))
		}
		if e.QuoteQty != 0 && havePair {
			b = fmt.Appendf(b, " quote_qty=%s", engine.FormatAmount(p.Quote, e.QuoteQty))
		}
		if e.PostOnly {
			b = append(b, " post_only"...)
		}
		if e.STP != engine.STPCancelResting {
			b = fmt.Appendf(b, " stp=%s", e.STP)
		}
		if e.ClientOrderID != "" {
			b = fmt.Appendf(b, " client_order_id=%q", e.ClientOrderID)
		}
		if e.Metadata != "" {
			b = fmt.Appendf(b, " metadata=%s", e.Metadata)
		}
	case engine.EventTrade:
		b = fmt.Appendf(b, " price=%s qty=%s", price(e.Price), qty(e.Qty))
		if havePair {
			b = fmt.Appendf(b, " notional=%s", engine.FormatAmount(p.Quote, e.Amount))
		}
		b = fmt.Appendf(b, " taker=%s/%s taker_side=%s maker=%s/%s", uuid.UUID(e.Account), uuid.UUID(e.OrderID), e.Side,
			uuid.UUID(e.MakerAccount), uuid.UUID(e.MakerOrderID))
	case engine.EventCancelled:
		b = fmt.Appendf(b, " account=%s order=%s reason=%s remaining=%s", uuid.UUID(e.Account), uuid.UUID(e.OrderID), e.Reason, qty(e.Qty))
		if e.Price != 0 {
			b = fmt.Appendf(b, " price=%s", price(e.Price))
		}
	case engine.EventDone:
		b = fmt.Appendf(b, " account=%s order=%s filled=%s", uuid.UUID(e.Account), uuid.UUID(e.OrderID), qty(e.Qty))
	case engine.EventAmended:
		b = fmt.Appendf(b, " account=%s order=%s price=%s open=%s was_price=%s was_open=%s", uuid.UUID(e.Account), uuid.UUID(e.OrderID),
			price(e.Price), qty(e.Qty), price(engine.Price(e.Amount)), qty(engine.Qty(e.QuoteQty)))
	case engine.EventCountdown:
		b = fmt.Appendf(b, " account=%s deadline=%d", uuid.UUID(e.Account), e.Amount)
	case engine.EventCredit, engine.EventDebit:
		b = fmt.Appendf(b, " account=%s asset=%s amount=%s transfer=%s", uuid.UUID(e.Account), e.Asset,
			engine.FormatAmount(e.Asset, e.Amount), uuid.UUID(e.TransferID))
	}
	for i := 0; i < int(e.NDeltas); i++ {
		d := &e.Deltas[i]
		b = fmt.Appendf(b, " Δ[%s %s available=%s locked=%s]", shortID(d.Account), d.Asset,
			signed(d.Asset, d.Available), signed(d.Asset, d.Locked))
	}
	return b
}

func shortID(id engine.AccountID) string { return uuid.UUID(id).String()[:8] }

func signed(a engine.Asset, v int64) string {
	if !a.Valid() {
		return fmt.Sprint(v)
	}
	if v > 0 {
		return "+" + engine.FormatAmount(a, v)
	}
	return engine.FormatAmount(a, v)
}

func journalReplay(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("svc journal replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var src journalSource
	src.flags(fs, env)
	snapDefault := env("SVC_SNAPSHOT_DIR")
	if snapDefault == "" {
		snapDefault = ".data/snapshots"
	}
	snapDir := fs.String("snapshot-dir", snapDefault, "snapshot folder, as given to svcd (the environment's sub-folder is read)")
	verify := fs.Bool("verify", false, "compare the rebuilt state with the newest snapshot and check conservation (required)")
	progressFlag := fs.String("progress", "auto", "auto (a bar when stderr is a terminal, else lines), bar, lines or none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if !*verify {
		return errors.New("journal replay: only --verify is supported (it changes nothing)")
	}
	j, err := src.open(ctx)
	if err != nil {
		return err
	}
	defer j.Close()
	store := &snapshot.Store{Dir: filepath.Join(*snapDir, src.env)}
	mode := *progressFlag
	if mode == "auto" {
		mode = "lines"
		if isTerminal(stderr) {
			mode = "bar"
		}
	}
	rep, err := verifyJournal(ctx, j, store, newProgress(stderr, mode, j.LastOffset()))
	if err != nil {
		return err
	}
	rep.print(stdout, src.where(), store.Dir)
	if len(rep.Problems) > 0 {
		return fmt.Errorf("journal replay --verify: %d difference(s)", len(rep.Problems))
	}
	return nil
}

// verifyReport is what replay --verify found.
type verifyReport struct {
	Events         int
	LastOffset     uint64
	Elapsed        time.Duration
	SnapshotOffset uint64 // 0: no snapshot
	SnapshotBytes  int
	Accounts       int
	Funded         [engine.NumAssets]int64 // credits minus debits
	Held           [engine.NumAssets]int64 // sum over accounts of available + locked
	Problems       []string
}

func (r *verifyReport) print(w io.Writer, where, snapDir string) {
	rate := 0.0
	if s := r.Elapsed.Seconds(); s > 0 {
		rate = float64(r.Events) / s
	}
	fmt.Fprintf(w, "journal %s: replayed %d events from scratch up to offset %d in %s (%.0f events/s)\n",
		where, r.Events, r.LastOffset, r.Elapsed.Round(time.Millisecond), rate)
	if r.SnapshotOffset == 0 {
		fmt.Fprintf(w, "snapshot: none in %s (nothing to compare)\n", snapDir)
	} else {
		fmt.Fprintf(w, "snapshot: offset %d (%d bytes) in %s\n", r.SnapshotOffset, r.SnapshotBytes, snapDir)
	}
	fmt.Fprintf(w, "accounts: %d\n", r.Accounts)
	for a := engine.NGN; int(a) < engine.NumAssets; a++ {
		if r.Funded[a] == 0 && r.Held[a] == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-4s funded %s, held %s\n", a, engine.FormatAmount(a, r.Funded[a]), engine.FormatAmount(a, r.Held[a]))
	}
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "OK: the state rebuilt from the journal equals the snapshot, and balances are conserved")
		return
	}
	for _, p := range r.Problems {
		fmt.Fprintln(w, "DIFFERENCE:", p)
	}
}

// recordingApplier applies events to an engine and remembers every account they touch.
type recordingApplier struct {
	eng      *engine.Engine
	accounts map[engine.AccountID]struct{}
}

func (r *recordingApplier) Apply(events []engine.Event) error {
	for i := range events {
		e := &events[i]
		for k := 0; k < int(e.NDeltas); k++ {
			r.accounts[e.Deltas[k].Account] = struct{}{}
		}
	}
	return r.eng.Apply(events)
}

// verifyJournal rebuilds the engine from offset 1. At the newest snapshot's offset it
// snapshots the rebuilt engine and compares the bytes with the stored snapshot (a restore
// of it is compared account by account when they differ). It replays the rest, then runs
// svcd's recovery path (restore the snapshot, replay the tail) and compares the two end
// states, and checks that every asset's holdings equal its credits minus debits.
func verifyJournal(ctx context.Context, j journal.Journal, store *snapshot.Store, prog *progress) (*verifyReport, error) {
	rep := &verifyReport{}
	snapOff, snapData, haveSnap, err := store.Latest()
	if err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	last := j.LastOffset()
	if haveSnap {
		if snapOff > last {
			return nil, fmt.Errorf("snapshot at offset %d is ahead of the journal (last offset %d): wrong folder or topic?", snapOff, last)
		}
		rep.SnapshotOffset, rep.SnapshotBytes = snapOff, len(snapData)
	}
	scratch, err := engine.New(engine.Config{Journal: &engine.DiscardJournal{}})
	if err != nil {
		return nil, err
	}
	app := &recordingApplier{eng: scratch, accounts: map[engine.AccountID]struct{}{}}
	start := time.Now()

	// Phase 1: offsets 1..snapOff, then compare with the snapshot.
	var n1 int
	if haveSnap && snapOff > 0 {
		var got uint64
		got, n1, err = replayRange(ctx, j, 0, snapOff, app, &rep.Funded, prog, 0)
		if err != nil {
			return nil, err
		}
		if got != snapOff {
			return nil, fmt.Errorf("journal ends at %d before the snapshot's offset %d", got, snapOff)
		}
		if err := scratch.Replayed(snapOff); err != nil {
			return nil, err
		}
		mine, _, err := scratch.Snapshot(nil)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(mine, snapData) {
			rep.Problems = append(rep.Problems, fmt.Sprintf("the snapshot at offset %d differs from the state rebuilt from the journal up to it (%d vs %d bytes)", snapOff, len(snapData), len(mine)))
			rep.Problems = append(rep.Problems, compareWithSnapshot(scratch, snapData, app.accounts)...)
		}
	}
	// Phase 2: the rest of the journal.
	got, n2, err := replayRange(ctx, j, snapOff, 0, app, &rep.Funded, prog, n1)
	if err != nil {
		return nil, err
	}
	rep.Events, rep.LastOffset, rep.Elapsed = n1+n2, got, time.Since(start)
	prog.done(rep.Events)
	if err := scratch.Replayed(got); err != nil {
		return nil, err
	}

	// svcd's own recovery: the snapshot plus the tail must give the same state.
	if haveSnap {
		rec, err := engine.New(engine.Config{Journal: &engine.DiscardJournal{}})
		if err != nil {
			return nil, err
		}
		if _, err := rec.Restore(snapData); err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("the snapshot at offset %d does not restore: %v", snapOff, err))
		} else {
			tail, _, err := eventlog.Replay(ctx, j, snapOff, rec, nil)
			if err != nil {
				rep.Problems = append(rep.Problems, fmt.Sprintf("replay after the snapshot: %v", err))
			} else {
				_ = rec.Replayed(tail)
				a, _, _ := scratch.Snapshot(nil)
				b, _, _ := rec.Snapshot(nil)
				if !bytes.Equal(a, b) {
					rep.Problems = append(rep.Problems, fmt.Sprintf("recovery (snapshot %d + replay of the tail) differs from the rebuild from scratch at offset %d", snapOff, got))
					rep.Problems = append(rep.Problems, compareEngines(scratch, rec, app.accounts, "scratch", "recovered")...)
				}
			}
		}
	}

	// Conservation: trading moves value between accounts; only credits and debits change totals.
	rep.Accounts = len(app.accounts)
	for id := range app.accounts {
		bs := scratch.Balances(id)
		for a := engine.NGN; int(a) < engine.NumAssets; a++ {
			b := bs[a]
			rep.Held[a] += b.Available + b.Locked
			if b.Available < 0 || b.Locked < 0 {
				rep.Problems = append(rep.Problems, fmt.Sprintf("account %s %s: negative balance (available %s, locked %s)",
					uuid.UUID(id), a, engine.FormatAmount(a, b.Available), engine.FormatAmount(a, b.Locked)))
			}
		}
	}
	for a := engine.NGN; int(a) < engine.NumAssets; a++ {
		if rep.Held[a] != rep.Funded[a] {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s not conserved: credits minus debits %s, held %s", a,
				engine.FormatAmount(a, rep.Funded[a]), engine.FormatAmount(a, rep.Held[a])))
		}
	}
	return rep, nil
}

var errStop = errors.New("stop")

// replayRange applies the records after `after` up to `upto` (0: the end) to app and
// returns the last offset applied and the number of events. funded sums credits and debits.
func replayRange(ctx context.Context, j journal.Journal, after, upto uint64, app *recordingApplier,
	funded *[engine.NumAssets]int64, prog *progress, done int) (uint64, int, error) {
	const chunk = 4096
	events := make([]engine.Event, 0, chunk)
	last, n := after, 0
	flush := func() error {
		if len(events) == 0 {
			return nil
		}
		if err := app.Apply(events); err != nil {
			return fmt.Errorf("apply events up to offset %d: %w", last, err)
		}
		n += len(events)
		events = events[:0]
		prog.update(last, done+n)
		return nil
	}
	var rec engine.Event
	err := j.ReadFrom(ctx, after+1, func(off uint64, payload []byte) error {
		if upto != 0 && off > upto {
			return errStop
		}
		err := engine.DecodeRecord(payload, &rec, func(e *engine.Event) error {
			events = append(events, *e)
			switch e.Kind {
			case engine.EventCredit:
				funded[e.Asset] += e.Amount
			case engine.EventDebit:
				funded[e.Asset] -= e.Amount
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("journal offset %d: %w", off, err)
		}
		last = off
		if len(events) >= chunk {
			return flush()
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return last, n, err
	}
	return last, n, flush()
}

// compareWithSnapshot restores data into a fresh engine and lists the accounts whose
// balances differ from eng's.
func compareWithSnapshot(eng *engine.Engine, data []byte, accounts map[engine.AccountID]struct{}) []string {
	snap, err := engine.New(engine.Config{Journal: &engine.DiscardJournal{}})
	if err != nil {
		return []string{err.Error()}
	}
	if _, err := snap.Restore(data); err != nil {
		return []string{"the snapshot does not restore: " + err.Error()}
	}
	out := compareEngines(eng, snap, accounts, "journal", "snapshot")
	if len(out) == 0 {
		out = append(out, "balances agree; the books or the remembered orders differ")
	}
	return out
}

func compareEngines(x, y *engine.Engine, accounts map[engine.AccountID]struct{}, xn, yn string) []string {
	var out []string
	ids := make([]engine.AccountID, 0, len(accounts))
	for id := range accounts {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b engine.AccountID) int { return bytes.Compare(a[:], b[:]) })
	for _, id := range ids {
		bx, by := x.Balances(id), y.Balances(id)
		for a := engine.NGN; int(a) < engine.NumAssets; a++ {
			if bx[a] != by[a] {
				out = append(out, fmt.Sprintf("account %s %s: %s available %s locked %s, %s available %s locked %s",
					uuid.UUID(id), a, xn, engine.FormatAmount(a, bx[a].Available), engine.FormatAmount(a, bx[a].Locked),
					yn, engine.FormatAmount(a, by[a].Available), engine.FormatAmount(a, by[a].Locked)))
			}
		}
		if len(out) > 50 {
			return append(out, "... (more)")
		}
	}
	return out
}

// isTerminal reports whether w is a character device (a terminal), without x/term.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress shows how far a replay is: a bar redrawn in place on a terminal; otherwise a
// plain line at every 10% step (or after 10 s without one).
type progress struct {
	w        io.Writer
	mode     string // bar, lines, none
	total    uint64
	start    time.Time
	lastDraw time.Time
	lastPct  int
}

func newProgress(w io.Writer, mode string, total uint64) *progress {
	return &progress{w: w, mode: mode, total: total, start: time.Now(), lastPct: -1}
}

func (p *progress) update(off uint64, n int) {
	if p == nil || p.mode == "none" || p.total == 0 {
		return
	}
	pct := int(off * 100 / p.total)
	now := time.Now()
	rate := float64(n) / max(now.Sub(p.start).Seconds(), 1e-9)
	switch p.mode {
	case "bar":
		if now.Sub(p.lastDraw) < 100*time.Millisecond && pct != 100 {
			return
		}
		const width = 40
		fill := pct * width / 100
		fmt.Fprintf(p.w, "\rreplay [%s%s] %3d%% %d/%d %.0f events/s ", strings.Repeat("#", fill), strings.Repeat(".", width-fill),
			pct, off, p.total, rate)
		p.lastDraw = now
	default:
		if pct/10 == p.lastPct/10 && now.Sub(p.lastDraw) < 10*time.Second {
			return
		}
		fmt.Fprintf(p.w, "replay: %d%% (offset %d of %d, %.0f events/s)\n", pct, off, p.total, rate)
		p.lastPct, p.lastDraw = pct, now
	}
}

func (p *progress) done(n int) {
	if p == nil || p.mode == "none" {
		return
	}
	if p.mode == "bar" {
		fmt.Fprintln(p.w)
	}
	fmt.Fprintf(p.w, "replay: done, %d events in %s\n", n, time.Since(p.start).Round(time.Millisecond))
}
