package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"svc/payments/money"
	"svc/persistence/postgres"
)

// accountRow is a locked account.
type accountRow struct {
	id            uuid.UUID
	account       Account
	asset         money.Asset
	allowNegative bool
	balance       int64
	lastSeq       int64
}

type slot struct {
	account Account
	asset   money.Asset
}

func (s slot) less(o slot) bool {
	if s.account.Owner != o.account.Owner {
		return s.account.Owner < o.account.Owner
	}
	if c := bytes.Compare(s.account.OwnerID[:], o.account.OwnerID[:]); c != 0 {
		return c < 0
	}
	if s.asset != o.asset {
		return s.asset < o.asset
	}
	return s.account.Purpose < o.account.Purpose
}

// Post writes t in the caller's transaction tx: it checks t (Validate), returns the earlier
// post if t.Reference was already posted (Posted.Replayed; ErrReferenceConflict if with other
// postings), creates missing accounts, locks every account touched (SELECT ... FOR UPDATE in
// id order, all in one statement, so concurrent posts on overlapping accounts cannot
// deadlock each other), refuses a post that would take an account below zero unless it
// AllowsNegative (*InsufficientBalanceError), then writes the transaction, its entries (with
// per-account sequence numbers and running balances) and the new balances.
//
// Missing accounts are created before any of t's accounts is locked, never while holding
// them: a post that created an account (its row uncommitted until the commit) never waits
// for a lock held by one waiting to create that account. The same holds only for a database
// transaction that posts once: one that posts several times (or locks accounts itself, then
// posts) takes its locks in several rounds, and two such transactions can each hold an
// account the other's next round needs. Post such transactions with one PostAll.
//
// Errors: *InvalidTransactionError, *UnbalancedError, *InsufficientBalanceError,
// ErrReferenceConflict, or the database's. The validation and balance errors are found
// before anything is written, so tx stays usable; after any other error roll tx back.
func Post(ctx context.Context, tx pgx.Tx, t Transaction) (Posted, error) {
	ps, err := PostAll(ctx, tx, t)
	if err != nil {
		return Posted{}, err
	}
	return ps[0], nil
}

// PostAll posts the transactions ts in tx, in order, each as Post would (its own reference,
// replay, entries and balances, and its own shard of the system accounts), but locks every
// account they touch at once: for each merchant and environment in turn (in the order of
// their ids), the missing accounts created first, then all of them locked in one statement,
// in id order. Every database transaction that posts more than once must post through one
// PostAll: all of its ledger locks are then taken in one order that every transaction
// shares, so no two can deadlock on them (issue 27).
//
// Every transaction is checked (Validate, replay, balances) before anything is written: the
// validation and balance errors leave tx usable, as Post's do. The balances are checked in
// order, so a transaction may spend what an earlier one of ts credited. Errors as Post's;
// after any but those roll tx back.
func PostAll(ctx context.Context, tx pgx.Tx, ts ...Transaction) ([]Posted, error) {
	ps := make([]*prepared, len(ts))
	for i, t := range ts {
		p, err := prepare(t)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}

	// Each merchant's accounts are its own rows: lock them merchant by merchant, in one
	// order, each merchant's in one round.
	groups := map[tenant][]*prepared{}
	var tenants []tenant
	refs := map[tenant]map[string]bool{}
	for _, p := range ps {
		k := tenant{p.t.MerchantID, p.t.Environment}
		if _, ok := groups[k]; !ok {
			tenants = append(tenants, k)
			refs[k] = map[string]bool{}
		}
		if refs[k][p.t.Reference] {
			return nil, invalid("reference %q is posted twice", p.t.Reference)
		}
		refs[k][p.t.Reference] = true
		groups[k] = append(groups[k], p)
	}
	sort.Slice(tenants, func(i, j int) bool { return tenants[i].less(tenants[j]) })
	for _, k := range tenants {
		if err := lockTenant(ctx, tx, k, groups[k]); err != nil {
			return nil, err
		}
	}

	// Every balance checked, in order, before anything is written.
	type key struct {
		tenant
		slot
	}
	balances := map[key]int64{}
	for _, p := range ps {
		if p.replay != nil {
			continue
		}
		k := tenant{p.t.MerchantID, p.t.Environment}
		// What the transactions of ts before p left, else the locked row's.
		balance := func(s slot) int64 {
			if b, ok := balances[key{k, s}]; ok {
				return b
			}
			return p.rows[s].balance
		}
		if err := p.checkEntries(balance); err != nil {
			return nil, err
		}
		for _, s := range p.slots {
			b := balance(s)
			if err := p.check(s, p.rows[s], b); err != nil {
				return nil, err
			}
			balances[key{k, s}] = b + p.net[s]
		}
	}

	out := make([]Posted, len(ps))
	for i, p := range ps {
		if p.replay != nil {
			out[i] = *p.replay
			continue
		}
		var err error
		if out[i], err = p.write(ctx, tx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// tenant is one merchant's books in one environment.
type tenant struct {
	merchantID uuid.UUID
	env        string
}

func (a tenant) less(b tenant) bool {
	if c := bytes.Compare(a.merchantID[:], b.merchantID[:]); c != 0 {
		return c < 0
	}
	return a.env < b.env
}

// prepared is a transaction checked for posting: its postings' net change per account (its
// system accounts on its shard), and, once locked, its accounts' rows (shared with the
// other transactions of the same PostAll and merchant) or the earlier post it replays.
type prepared struct {
	t      Transaction
	hash   []byte
	shard  shardID
	net    map[slot]int64
	slots  []slot // net's keys, in slot order
	rows   map[slot]*accountRow
	replay *Posted
}

func prepare(t Transaction) (*prepared, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	// Net change per account and asset, in a fixed order; system accounts on this
	// transaction's shard.
	key := t.Reference
	if t.ShardKey != "" {
		key = t.ShardKey
	}
	p := &prepared{t: t, hash: t.hash(), shard: systemShard(key), net: map[slot]int64{}}
	for _, ps := range t.Postings {
		k := slot{p.shard.of(ps.Account), ps.Amount.Asset}
		s, err := money.New(k.asset, p.net[k]).Add(ps.Amount)
		if err != nil {
			return nil, invalid("net change of %s: %v", ps.Account, err)
		}
		p.net[k] = s.Minor
	}
	for k := range p.net {
		p.slots = append(p.slots, k)
	}
	sort.Slice(p.slots, func(i, j int) bool { return p.slots[i].less(p.slots[j]) })
	return p, nil
}

// check refuses the net change of slot s on row r from balance b: an overflow, or a
// negative balance the account does not allow.
func (p *prepared) check(s slot, r *accountRow, b int64) error {
	n := p.net[s]
	nb := b + n
	if (n > 0 && nb < b) || (n < 0 && nb > b) {
		return invalid("balance of %s %s would overflow", s.account, s.asset)
	}
	if nb < 0 && !r.allowNegative {
		return &InsufficientBalanceError{Account: s.account, Asset: s.asset, Balance: b, Change: n}
	}
	return nil
}

// checkEntries refuses p when the balance after one of its entries, in order from the
// balances from gives, would pass int64. The net checks bound only each account's final
// balance, and an account moved up and down in one transaction passes through the balances
// between (issue 32). Checked with the others, before anything is written: an error after
// the transaction row would leave it in a tx said to be usable, without its entries, its
// reference replaying as posted.
func (p *prepared) checkEntries(from func(slot) int64) error {
	run := map[slot]int64{}
	for i, e := range p.t.Postings {
		s := slot{p.shard.of(e.Account), e.Amount.Asset}
		b, ok := run[s]
		if !ok {
			b = from(s)
		}
		after, err := money.New(s.asset, b).Add(e.Amount)
		if err != nil {
			return invalid("balance of %s %s would overflow after entry %d", e.Account, e.Amount.Asset, i+1)
		}
		run[s] = after.Minor
	}
	return nil
}

// lockTenant locks the accounts of one merchant's transactions ps (all of them, in one
// statement, in id order) and reads their references' earlier posts, in one round trip:
// after the lock, so a post of the same reference that held one of the accounts is seen.
// When an account is missing, that statement locks none: the missing accounts are created
// (holding no lock on the merchant's accounts: see Post) and all are locked then.
func lockTenant(ctx context.Context, tx pgx.Tx, k tenant, ps []*prepared) error {
	var slots []slot
	seen := map[slot]bool{}
	refs := make([]string, len(ps))
	for i, p := range ps {
		refs[i] = p.t.Reference
		for _, s := range p.slots {
			if !seen[s] {
				seen[s] = true
				slots = append(slots, s)
			}
		}
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i].less(slots[j]) })
	rows, stored, err := lockAndReplay(ctx, tx, k, slots, refs)
	if err != nil {
		return err
	}
	if len(rows) < len(slots) {
		if all, err := replays(ps, stored); err != nil || all {
			return err // nothing to post: no account to create
		}
		if err := createAccounts(ctx, tx, k.merchantID, k.env, slots); err != nil {
			return err
		}
		if rows, stored, err = lockAndReplay(ctx, tx, k, slots, refs); err != nil {
			return err
		}
		if len(rows) < len(slots) {
			return fmt.Errorf("ledger: %d of %d accounts after creating them", len(rows), len(slots))
		}
	}
	for _, p := range ps {
		p.rows = rows
	}
	_, err = replays(ps, stored)
	return err
}

// replays marks the transactions of ps already posted (their reference in stored) as
// replays, and reports whether all are; ErrReferenceConflict for one posted with other
// postings.
func replays(ps []*prepared, stored map[string]storedTx) (bool, error) {
	all := true
	for _, p := range ps {
		s, ok := stored[p.t.Reference]
		if !ok {
			all = false
			continue
		}
		if !bytes.Equal(s.hash, p.hash) {
			return false, fmt.Errorf("%w: %q", ErrReferenceConflict, p.t.Reference)
		}
		p.replay = &Posted{ID: s.id, Replayed: true, CreatedAt: s.createdAt}
	}
	return all, nil
}

// write writes p, its accounts locked and its balances checked: the transaction row, its
// entries and its accounts' new balances (in p.rows, for the next transaction of the same
// PostAll).
func (p *prepared) write(ctx context.Context, tx pgx.Tx) (Posted, error) {
	t, rows := p.t, p.rows
	// Checked again as written: a transaction before it in its PostAll that was posted
	// concurrently (below) left the balances as they were.
	for _, k := range p.slots {
		if err := p.check(k, rows[k], rows[k].balance); err != nil {
			return Posted{}, err
		}
	}
	if err := p.checkEntries(func(s slot) int64 { return rows[s].balance }); err != nil {
		return Posted{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Posted{}, err
	}
	meta := []byte("{}")
	if len(t.Metadata) > 0 {
		if meta, err = json.Marshal(t.Metadata); err != nil {
			return Posted{}, err
		}
	}
	var createdAt time.Time
	err = tx.QueryRow(ctx, `insert into ledger_transactions
			(id, merchant_id, environment, reference, kind, description, postings_hash, metadata)
		values ($1, $2, $3, $4, $5, $6, $7, $8)
		on conflict (merchant_id, environment, reference) do nothing
		returning created_at`,
		id, t.MerchantID, t.Environment, t.Reference, t.Kind, t.Description, p.hash, meta).Scan(&createdAt)
	if errors.Is(err, pgx.ErrNoRows) {
		// Posted concurrently by a transaction that committed while we waited for the locks.
		if r, ok, err := replay(ctx, tx, t, p.hash); err != nil || ok {
			return r, err
		}
		return Posted{}, errors.New("ledger: reference conflict without a row")
	}
	if err != nil {
		return Posted{}, fmt.Errorf("ledger: insert transaction: %w", err)
	}

	// Entries in posting order; each gets its account's next sequence number.
	n := len(t.Postings)
	var (
		eIDs     = make([]uuid.UUID, n)
		eAccts   = make([]uuid.UUID, n)
		eAssets  = make([]string, n)
		eAmounts = make([]int64, n)
		eSeqs    = make([]int64, n)
		eAfter   = make([]int64, n)
		eRefs    = make([]string, n) // the postings' memos ("": the transaction's)
		eKinds   = make([]string, n)
		eDescs   = make([]string, n)
	)
	for i, ps := range t.Postings {
		r := rows[slot{p.shard.of(ps.Account), ps.Amount.Asset}]
		r.lastSeq++
		r.balance += ps.Amount.Minor // checked above (checkEntries)
		if eIDs[i], err = uuid.NewV7(); err != nil {
			return Posted{}, err
		}
		eAccts[i], eAssets[i], eAmounts[i], eSeqs[i], eAfter[i] = r.id, string(ps.Amount.Asset), ps.Amount.Minor, r.lastSeq, r.balance
		eRefs[i], eKinds[i], eDescs[i] = ps.Memo.Reference, ps.Memo.Kind, ps.Memo.Description
	}
	aIDs := make([]uuid.UUID, len(p.slots))
	aBal := make([]int64, len(p.slots))
	aSeq := make([]int64, len(p.slots))
	posted := Posted{ID: id, CreatedAt: createdAt, Balances: make([]Balance, len(p.slots))}
	for i, k := range p.slots {
		r := rows[k]
		aIDs[i], aBal[i], aSeq[i] = r.id, r.balance, r.lastSeq
		posted.Balances[i] = Balance{Account: k.account.unsharded(), Amount: money.New(k.asset, r.balance), UpdatedAt: createdAt}
	}

	b := &pgx.Batch{}
	b.Queue(`insert into ledger_entries (id, transaction_id, account_id, asset, amount, seq, balance_after, created_at,
			reference, kind, description)
		select e.id, $1, e.account_id, e.asset, e.amount, e.seq, e.balance_after, $2,
			nullif(e.reference, ''), nullif(e.kind, ''), nullif(e.description, '')
		from unnest($3::uuid[], $4::uuid[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[], $10::text[], $11::text[])
			as e(id, account_id, asset, amount, seq, balance_after, reference, kind, description)`,
		id, createdAt, eIDs, eAccts, eAssets, eAmounts, eSeqs, eAfter, eRefs, eKinds, eDescs)
	b.Queue(`update ledger_accounts a set balance = u.balance, last_seq = u.last_seq, updated_at = $1
		from unnest($2::uuid[], $3::bigint[], $4::bigint[]) as u(id, balance, last_seq)
		where a.id = u.id`, createdAt, aIDs, aBal, aSeq)
	queueFXIntents(b, t, id, p.net)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		if isNegativeBalance(err) { // the database's own guard (should be unreachable)
			return Posted{}, &InsufficientBalanceError{}
		}
		return Posted{}, fmt.Errorf("ledger: write entries: %w", err)
	}
	return posted, nil
}

// queueFXIntents queues, with the entries, the treasury's hedge intents of a transaction
// that moves system:fx (issue 27): per asset the desk gave out (-) or took in (+), a row
// telling the treasury (payments/treasury) to buy back what fx gave, or sell what it took,
// on the book; the NGN side rides on the first row. Written here, in the posting's own
// transaction, so no conversion can reach the ledger without its hedge, whichever service
// posts it; the ledger is the table's only writer.
func queueFXIntents(b *pgx.Batch, t Transaction, id uuid.UUID, net map[slot]int64) {
	fx := map[money.Asset]int64{}
	for k, v := range net {
		if k.account.Owner == OwnerSystem && k.account.Purpose == FX && v != 0 {
			fx[k.asset] += v
		}
	}
	if len(fx) == 0 {
		return
	}
	var assets []string
	for a := range fx {
		if a != money.NGN {
			assets = append(assets, string(a))
		}
	}
	sort.Strings(assets)
	if len(assets) == 0 {
		assets = []string{string(money.NGN)}
	}
	qty, ngn, refs := make([]int64, len(assets)), make([]int64, len(assets)), make([]string, len(assets))
	for i, a := range assets {
		if a != string(money.NGN) {
			qty[i] = -fx[money.Asset(a)]
		}
		refs[i] = "ledger:" + id.String() + ":" + a
	}
	ngn[0] = fx[money.NGN]
	b.Queue(`insert into treasury_intents (environment, asset, qty, ngn, reference)
		select $1, u.asset, u.qty, u.ngn, u.reference from unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[]) as u(asset, qty, ngn, reference)`,
		t.Environment, assets, qty, ngn, refs)
}

// SystemShards is how many rows each system account of a merchant and environment is kept
// in (issue 22). Every deposit, withdrawal and transfer of a merchant posts to the same few
// system accounts (system:external, system:incoming, system:fx, ...), and Post locks each
// account row it touches until the commit: one row per system account made all of a
// merchant's money movements wait for each other. A transaction's system postings go to the
// shard its reference picks (shard 0 is the account's original row, owner id uuid.Nil;
// shard k has k in the owner id's last byte). System accounts may go negative, so a shard
// needs no balance of its own; an account's balance is the sum of its shards (GetBalance,
// OwnerBalances), and Verify checks every row as before.
const SystemShards = 16

// shardID is the owner id of a system account's shard k.
type shardID uuid.UUID

func systemShard(reference string) shardID {
	h := sha256.Sum256([]byte(reference))
	var id shardID
	id[15] = h[0] % SystemShards
	return id
}

// of is a on the shard when a is a system account, else a.
func (k shardID) of(a Account) Account {
	if a.Owner == OwnerSystem {
		a.OwnerID = uuid.UUID(k)
	}
	return a
}

// unsharded is a without its shard: what the caller named.
func (a Account) unsharded() Account {
	if a.Owner == OwnerSystem {
		a.OwnerID = uuid.Nil
	}
	return a
}

// ownerCond matches the owner id param of owner's accounts: every shard of a system
// account (the param, uuid.Nil, is then only read for its type), one owner's otherwise.
func ownerCond(owner OwnerType, alias, param string) string {
	if owner == OwnerSystem {
		return "(" + param + "::uuid is not null)"
	}
	return alias + "owner_id = " + param
}

func isNegativeBalance(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23514" && pgErr.ConstraintName == "ledger_accounts_non_negative"
}

func replay(ctx context.Context, q postgres.Querier, t Transaction, hash []byte) (Posted, bool, error) {
	return replayed(q.QueryRow(ctx, replaySQL, t.MerchantID, t.Environment, t.Reference), t, hash)
}

const replaySQL = `select id, postings_hash, created_at from ledger_transactions
		where merchant_id = $1 and environment = $2 and reference = $3`

// storedTx is a transaction already posted under a reference.
type storedTx struct {
	id        uuid.UUID
	hash      []byte
	createdAt time.Time
}

// replaysSQL reads the posts of references $3.
const replaysSQL = `select reference, id, postings_hash, created_at from ledger_transactions
		where merchant_id = $1 and environment = $2 and reference = any($3::text[])`

// lockAndReplay locks the accounts of slots (all or none: lockSQL) and then reads the
// earlier posts of refs, in one round trip.
func lockAndReplay(ctx context.Context, tx pgx.Tx, k tenant, slots []slot, refs []string) (map[slot]*accountRow, map[string]storedTx, error) {
	b := &pgx.Batch{}
	owners, ownerIDs, assets, purposes := slotArrays(slots)
	b.Queue(lockSQL, k.merchantID, k.env, owners, ownerIDs, assets, purposes, len(slots))
	b.Queue(replaysSQL, k.merchantID, k.env, refs)
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	rs, err := br.Query()
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: lock accounts: %w", err)
	}
	rows, err := scanAccounts(rs, len(slots))
	if err != nil {
		return nil, nil, err
	}
	rs, err = br.Query()
	if err != nil {
		return nil, nil, fmt.Errorf("ledger: read references: %w", err)
	}
	defer rs.Close()
	stored := map[string]storedTx{}
	for rs.Next() {
		var (
			ref string
			s   storedTx
		)
		if err := rs.Scan(&ref, &s.id, &s.hash, &s.createdAt); err != nil {
			return nil, nil, fmt.Errorf("ledger: read references: %w", err)
		}
		stored[ref] = s
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("ledger: read references: %w", err)
	}
	rs.Close()
	if err := br.Close(); err != nil {
		return nil, nil, fmt.Errorf("ledger: lock accounts: %w", err)
	}
	return rows, stored, nil
}

// replayed reads replaySQL's row: a transaction already posted under t's reference is a
// replay with the same postings, ErrReferenceConflict with others.
func replayed(row pgx.Row, t Transaction, hash []byte) (Posted, bool, error) {
	var (
		id        uuid.UUID
		stored    []byte
		createdAt time.Time
	)
	err := row.Scan(&id, &stored, &createdAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Posted{}, false, nil
	}
	if err != nil {
		return Posted{}, false, fmt.Errorf("ledger: read reference: %w", err)
	}
	if !bytes.Equal(stored, hash) {
		return Posted{}, false, fmt.Errorf("%w: %q", ErrReferenceConflict, t.Reference)
	}
	return Posted{ID: id, Replayed: true, CreatedAt: createdAt}, true, nil
}

func slotArrays(slots []slot) (owners []string, ownerIDs []uuid.UUID, assets, purposes []string) {
	for _, s := range slots {
		owners = append(owners, string(s.account.Owner))
		ownerIDs = append(ownerIDs, s.account.OwnerID)
		assets = append(assets, string(s.asset))
		purposes = append(purposes, string(s.account.Purpose))
	}
	return
}

// lockSQL locks the accounts of the keys, in id order, when every one of them exists ($7 of
// them), and locks nothing otherwise: a post creates its missing accounts holding no lock on
// its merchant's accounts (Post). Accounts are never deleted, so once created all are
// locked.
const lockSQL = `with k as (select * from unnest($3::text[], $4::uuid[], $5::text[], $6::text[]) as k(owner_type, owner_id, asset, purpose))
		select a.id, a.owner_type, a.owner_id, a.asset, a.purpose, a.allow_negative, a.balance, a.last_seq
		from ledger_accounts a
		join k on a.owner_type = k.owner_type and a.owner_id = k.owner_id and a.asset = k.asset and a.purpose = k.purpose
		where a.merchant_id = $1 and a.environment = $2
		  and (select count(*) from ledger_accounts c
			join k on c.owner_type = k.owner_type and c.owner_id = k.owner_id and c.asset = k.asset and c.purpose = k.purpose
			where c.merchant_id = $1 and c.environment = $2) = $7
		order by a.id
		for update of a`

// scanAccounts reads lockSQL's rows by slot.
func scanAccounts(rows pgx.Rows, n int) (map[slot]*accountRow, error) {
	defer rows.Close()
	out := make(map[slot]*accountRow, n)
	for rows.Next() {
		r := &accountRow{}
		var owner, asset, purpose string
		if err := rows.Scan(&r.id, &owner, &r.account.OwnerID, &asset, &purpose, &r.allowNegative, &r.balance, &r.lastSeq); err != nil {
			return nil, fmt.Errorf("ledger: lock accounts: %w", err)
		}
		r.account.Owner, r.account.Purpose, r.asset = OwnerType(owner), Purpose(purpose), money.Asset(asset)
		out[slot{r.account, r.asset}] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: lock accounts: %w", err)
	}
	return out, nil
}

// createAccounts inserts the missing accounts of slots (in slot order, so concurrent
// creators wait for each other in the same order).
func createAccounts(ctx context.Context, tx pgx.Tx, merchantID uuid.UUID, env string, slots []slot) error {
	ids := make([]uuid.UUID, len(slots))
	neg := make([]bool, len(slots))
	ord := make([]int32, len(slots))
	for i, s := range slots {
		var err error
		if ids[i], err = uuid.NewV7(); err != nil {
			return err
		}
		neg[i] = s.account.AllowsNegative()
		ord[i] = int32(i)
	}
	owners, ownerIDs, assets, purposes := slotArrays(slots)
	_, err := tx.Exec(ctx, `insert into ledger_accounts (id, merchant_id, environment, owner_type, owner_id, asset, purpose, allow_negative)
		select k.id, $1, $2, k.owner_type, k.owner_id, k.asset, k.purpose, k.allow_negative
		from unnest($3::uuid[], $4::text[], $5::uuid[], $6::text[], $7::text[], $8::bool[], $9::int[])
			as k(id, owner_type, owner_id, asset, purpose, allow_negative, ord)
		order by k.ord
		on conflict (merchant_id, environment, owner_type, owner_id, asset, purpose) do nothing`,
		merchantID, env, ids, owners, ownerIDs, assets, purposes, neg, ord)
	if err != nil {
		return fmt.Errorf("ledger: create accounts: %w", err)
	}
	return nil
}

// GetBalance returns the balance of one account in one asset; an account never posted to
// has a zero balance (and a zero UpdatedAt).
func GetBalance(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, env string, a Account, asset money.Asset) (Balance, error) {
	b := Balance{Account: a, Amount: money.Zero(asset)}
	// A system account is the sum of its shards (SystemShards).
	err := q.QueryRow(ctx, `select sum(balance)::bigint, max(updated_at) from ledger_accounts
		where merchant_id = $1 and environment = $2 and owner_type = $3 and `+ownerCond(a.Owner, "", "$4")+`
		  and asset = $5 and purpose = $6
		having count(*) > 0`,
		merchantID, env, string(a.Owner), a.OwnerID, string(asset), string(a.Purpose)).Scan(&b.Amount.Minor, &b.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, nil
	}
	if err != nil {
		return b, fmt.Errorf("ledger: read balance: %w", err)
	}
	return b, nil
}

// OwnerBalances lists every account of one owner (all assets and purposes), by asset then
// purpose.
func OwnerBalances(ctx context.Context, q postgres.Querier, merchantID uuid.UUID, env string, owner OwnerType, ownerID uuid.UUID) ([]Balance, error) {
	rows, err := q.Query(ctx, `select asset, purpose, sum(balance)::bigint, max(updated_at) from ledger_accounts
		where merchant_id = $1 and environment = $2 and owner_type = $3 and `+ownerCond(owner, "", "$4")+`
		group by asset, purpose
		order by asset, purpose`, merchantID, env, string(owner), ownerID)
	if err != nil {
		return nil, fmt.Errorf("ledger: read balances: %w", err)
	}
	defer rows.Close()
	var out []Balance
	for rows.Next() {
		var (
			asset, purpose string
			b              Balance
		)
		if err := rows.Scan(&asset, &purpose, &b.Amount.Minor, &b.UpdatedAt); err != nil {
			return nil, fmt.Errorf("ledger: read balances: %w", err)
		}
		b.Amount.Asset = money.Asset(asset)
		b.Account = Account{Owner: owner, OwnerID: ownerID, Purpose: Purpose(purpose)}
		out = append(out, b)
	}
	return out, rows.Err()
}

// ListEntries returns a page of the entries on the accounts f selects, newest first, and
// the total count.
func ListEntries(ctx context.Context, q postgres.Querier, f EntryFilter, limit, offset int) ([]Entry, int64, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	if offset < 0 || offset > math.MaxInt32 {
		offset = 0
	}
	where := `from ledger_entries e
		join ledger_accounts a on a.id = e.account_id
		join ledger_transactions t on t.id = e.transaction_id
		where a.merchant_id = $1 and a.environment = $2 and a.owner_type = $3 and ` + ownerCond(f.Owner, "a.", "$4") + `
		  and ($5 = '' or a.asset = $5) and ($6 = '' or a.purpose = $6)`
	args := []any{f.MerchantID, f.Environment, string(f.Owner), f.OwnerID, string(f.Asset), string(f.Purpose)}
	var total int64
	if err := q.QueryRow(ctx, `select count(*) `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("ledger: count entries: %w", err)
	}
	rows, err := q.Query(ctx, `select e.id, e.transaction_id, coalesce(e.reference, t.reference), coalesce(e.kind, t.kind),
			coalesce(e.description, t.description), a.purpose,
			e.asset, e.amount, e.balance_after, e.seq, e.created_at `+where+`
		order by e.created_at desc, e.id desc limit $7 offset $8`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("ledger: list entries: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var (
			e              Entry
			purpose, asset string
		)
		if err := rows.Scan(&e.ID, &e.TransactionID, &e.Reference, &e.Kind, &e.Description, &purpose,
			&asset, &e.Amount.Minor, &e.BalanceAfter.Minor, &e.Seq, &e.CreatedAt); err != nil {
			return nil, 0, fmt.Errorf("ledger: list entries: %w", err)
		}
		e.Amount.Asset, e.BalanceAfter.Asset = money.Asset(asset), money.Asset(asset)
		e.Account = Account{Owner: f.Owner, OwnerID: f.OwnerID, Purpose: Purpose(purpose)}
		out = append(out, e)
	}
	return out, total, rows.Err()
}
