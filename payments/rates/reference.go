package rates

import (
	"math/big"
	"sync"
	"time"

	"svc/payments/money"
)

// Feed is an external price source the reference can follow (an exchange's ticker, a
// vendor's FX rate). Nothing here calls the network: an adapter implements Feed and is given
// to ReferenceConfig.Feed; svcd runs without one. Price returns the NGN price of one unit of
// asset in kobo, the time the source observed it, and ok false when it has none. It is
// called on the quoting path, so it must answer from memory (an adapter polls or subscribes
// in its own goroutine and keeps the last value).
type Feed interface {
	Price(env string, asset money.Asset) (kobo int64, at time.Time, ok bool)
}

// ReferenceConfig says how the reference follows the market.
type ReferenceConfig struct {
	// Smoothing is the time constant of the filter that follows the samples: a step of the
	// market is followed to 63 % after Smoothing. Default 5 minutes. A market drifting at
	// r per hour is followed with a lag of r x Smoothing / 1 h (10 %/h: 0.83 % behind).
	Smoothing time.Duration
	// SampleEvery is the shortest time between two samples of the book (default 1 s).
	SampleEvery time.Duration
	// MaxAge is how long the last accepted sample keeps the reference alive: with no
	// sample for longer (a one-sided or empty book, a silent feed), the operator's value
	// (Config.References) is the reference again. Default 15 minutes.
	MaxAge time.Duration
	// Jump is the relative distance from the current reference beyond which a sample is a
	// jump: it is refused until samples beyond Jump on the same side have persisted for
	// Persist, then the reference moves to them at once. Default: the quoting band.
	Jump *big.Rat
	// Persist: see Jump. Default 3 minutes.
	Persist time.Duration
	// Feed, when set, is sampled before the book: a fresh feed price (younger than
	// MaxAge) is used; the book's mid otherwise.
	Feed Feed
}

// Defaults of ReferenceConfig.
const (
	DefaultSmoothing   = 5 * time.Minute
	DefaultSampleEvery = time.Second
	DefaultMaxAge      = 15 * time.Minute
	DefaultPersist     = 3 * time.Minute
)

// Sources of a reference.
const (
	RefOperator = "operator" // --rate-reference: no recent sample
	RefBook     = "book"     // the book's depth-weighted mid
	RefFeed     = "feed"     // ReferenceConfig.Feed
)

// refScale: the filter keeps the reference in millionths of a kobo, so slow drifts move
// it instead of rounding away.
const refScale = 1_000_000

// reference is the state of one (environment, asset). Guarded by references.mu.
type reference struct {
	value     int64     // micro-kobo; 0 until the first accepted sample
	source    string    // RefBook or RefFeed once a sample was accepted
	accepted  time.Time // last accepted sample
	sampled   time.Time // last sample taken (accepted or not)
	jumpSince time.Time // first of the run of samples beyond Jump; zero when none
	jumpUp    bool      // the side of that run
}

// references follows each (environment, asset)'s market.
type references struct {
	cfg      ReferenceConfig
	operator map[money.Asset]int64
	mu       sync.Mutex
	state    map[string]*reference // env + "/" + asset
}

func newReferences(cfg ReferenceConfig, operator map[money.Asset]int64, band *big.Rat) *references {
	if cfg.Smoothing <= 0 {
		cfg.Smoothing = DefaultSmoothing
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = DefaultSampleEvery
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Persist <= 0 {
		cfg.Persist = DefaultPersist
	}
	if cfg.Jump == nil || cfg.Jump.Sign() <= 0 {
		cfg.Jump = new(big.Rat).Set(band)
	}
	return &references{cfg: cfg, operator: operator, state: map[string]*reference{}}
}

// Reference is the reference price of one asset in one environment.
type Reference struct {
	Price    int64  // kobo per unit
	Source   string // RefOperator, RefBook or RefFeed
	Operator int64  // the operator's value (Config.References)
	Sampled  time.Time
	Accepted time.Time
	// JumpSince is when a run of refused samples beyond the jump threshold began (zero
	// when none): the market moved, and the reference follows once it persists.
	JumpSince time.Time
}

// get returns the reference of asset in env at now, first taking a sample when the last
// one is older than SampleEvery (sample is called without the lock held; it returns the
// market's price in kobo, or ok false).
func (r *references) get(env string, asset money.Asset, now time.Time, sample func() (int64, string, bool)) (Reference, bool) {
	op, ok := r.operator[asset]
	if !ok {
		return Reference{}, false
	}
	key := env + "/" + string(asset)
	r.mu.Lock()
	st := r.state[key]
	if st == nil {
		st = &reference{}
		r.state[key] = st
	}
	due := now.Sub(st.sampled) >= r.cfg.SampleEvery || now.Before(st.sampled)
	if due {
		st.sampled = now // one sampler at a time; the others use the current value
	}
	r.mu.Unlock()
	if due {
		if p, src, ok := sample(); ok && p > 0 {
			r.observe(key, op, p, src, now)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current(st, op, now), true
}

// current is st's reference at now; the caller holds r.mu.
func (r *references) current(st *reference, op int64, now time.Time) Reference {
	out := Reference{Price: op, Source: RefOperator, Operator: op, Sampled: st.sampled, Accepted: st.accepted, JumpSince: st.jumpSince}
	if st.value > 0 && now.Sub(st.accepted) <= r.cfg.MaxAge {
		out.Price, out.Source = (st.value+refScale/2)/refScale, st.source
	}
	return out
}

// observe feeds one market sample p (kobo) taken at now.
func (r *references) observe(key string, op, p int64, src string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state[key]
	cur := r.current(st, op, now)
	sample := p * refScale
	// A sample beyond Jump from the current reference waits until its side persists.
	diff := new(big.Rat).SetFrac64(p-cur.Price, cur.Price)
	if new(big.Rat).Abs(diff).Cmp(r.cfg.Jump) > 0 {
		up := diff.Sign() > 0
		if st.jumpSince.IsZero() || st.jumpUp != up {
			st.jumpSince, st.jumpUp = now, up
		}
		if now.Sub(st.jumpSince) < r.cfg.Persist {
			return
		}
		st.value, st.source, st.accepted, st.jumpSince = sample, src, now, time.Time{}
		return
	}
	st.jumpSince = time.Time{}
	if cur.Source == RefOperator { // first sample, or the last one is stale: start from it
		st.value, st.source, st.accepted = sample, src, now
		return
	}
	// First-order filter over irregular samples: v += (sample - v) x dt / (dt + Smoothing).
	dt := now.Sub(st.accepted)
	if dt < 0 {
		dt = 0
	}
	step := new(big.Int).Mul(big.NewInt(sample-st.value), big.NewInt(int64(dt)))
	step.Quo(step, big.NewInt(int64(dt+r.cfg.Smoothing)))
	st.value += step.Int64()
	st.source, st.accepted = src, now
}
