package engine

import (
	"bytes"
	"slices"
	"sync"
)

// Balance of one asset in one account, in the asset's engine units.
type Balance struct {
	Available int64
	Locked    int64 // held by open orders
}

// Balances of one account, indexed by Asset (index 0, AssetNone, is always zero).
type Balances [numAssets]Balance

// account is one trading account. Every runner may touch any account, so each account
// has its own mutex; a runner never holds two account mutexes at once, and holds one
// only for a few field updates (no matching, no journal, no allocation in steady state).
//
// Layout (issue 33): every place and cancel reads mu, id and the order index's header, so
// they fill the first 64 bytes, and the struct is padded to 256 bytes, a size class whose
// objects start on a cache line: one line for them, the next for the balances of the
// first assets. TestAccountHotLine checks it.
type account struct {
	mu         sync.Mutex
	id         AccountID
	orders     orderIndex // open and recently closed orders, for views and cancel routing
	bal        Balances
	marks      []uint64   // per runner, the last batch of it that changed the account (sequence.go)
	byClient   orderIndex // the indexed orders that have a client order id, by its hash (clientid.go)
	clientDups []*order   // replay only: indexed orders whose client id byClient gives another
	transfers  map[TransferID]struct{}
	_          [16]byte // to 256 bytes (see above)
}

// empty reports whether a holds nothing worth snapshotting.
func (a *account) empty() bool {
	return a.bal == Balances{} && a.orders.len() == 0 && len(a.transfers) == 0
}

const accountShards = 64

// accountTable finds accounts by id. Accounts are created on first use and never
// removed; runners cache the pointers they have seen, so the shard locks are taken
// only on a runner's first sight of an account.
type accountTable struct {
	shards [accountShards]struct {
		mu sync.RWMutex
		m  map[AccountID]*account
		_  [32]byte // keep neighbouring shard locks off one cache line
	}
}

func shardOf(id AccountID) int { return int(id[15]^id[7]) % accountShards }

func (t *accountTable) get(id AccountID) *account {
	s := &t.shards[shardOf(id)]
	s.mu.RLock()
	a := s.m[id]
	s.mu.RUnlock()
	return a
}

func (t *accountTable) getOrCreate(id AccountID) *account {
	if a := t.get(id); a != nil {
		return a
	}
	s := &t.shards[shardOf(id)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.m[id]; a != nil {
		return a
	}
	if s.m == nil {
		s.m = make(map[AccountID]*account)
	}
	a := &account{id: id}
	s.m[id] = a
	return a
}

// all returns every account, in no order (sorted orders them by id).
func (t *accountTable) all() []*account {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	all := make([]*account, 0, n)
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.RLock()
		for _, a := range s.m {
			all = append(all, a)
		}
		s.mu.RUnlock()
	}
	return all
}

// sorted returns every account ordered by id.
func (t *accountTable) sorted() []*account {
	all := t.all()
	slices.SortFunc(all, func(x, y *account) int { return bytes.Compare(x.id[:], y.id[:]) })
	return all
}

// accountCache is a runner's private map of accounts it has seen, keyed by the fold of
// the id (a uint64 key hashes and compares far faster than [16]byte). An account whose
// fold collides with a cached one is looked up in the table each time.
type accountCache struct {
	table *accountTable
	m     map[uint64]*account
	front [1 << accountFrontBits]*account
	sq    *seqState // the owning runner's causal ordering; nil without a runner (sequence.go)
}

// frontSlot returns the fold of id and its slot in c.front.
func (c *accountCache) frontSlot(id *AccountID) (uint64, **account) {
	k := foldID((*[16]byte)(id))
	return k, &c.front[((k^k>>29)*fib)>>(64-accountFrontBits)]
}

func (c *accountCache) get(id AccountID) *account {
	k, f := c.frontSlot(&id)
	if a := *f; a != nil && a.id == id {
		return a
	}
	a := c.m[k]
	if a == nil || a.id != id {
		a = c.table.getOrCreate(id)
		if c.m[k] == nil {
			c.m[k] = a
		}
	}
	*f = a
	return a
}

// lookup is get for an account that may not exist: nil instead of creating it.
func (c *accountCache) lookup(id AccountID) *account {
	k, f := c.frontSlot(&id)
	if a := *f; a != nil && a.id == id {
		return a
	}
	if a := c.m[k]; a != nil && a.id == id {
		*f = a
		return a
	}
	a := c.table.get(id)
	if a != nil {
		*f = a
	}
	return a
}

// accountFrontBits sizes accountCache.front: a direct-mapped array of the accounts a
// runner used last, checked before the map (a Go map lookup was a fifth of a passive
// place or a cancel on a shallow book).
const accountFrontBits = 10

// apply adds d to a's balance of asset; the caller holds a.mu.
func (a *account) apply(asset Asset, avail, locked int64) {
	b := &a.bal[asset]
	b.Available += avail
	b.Locked += locked
}
