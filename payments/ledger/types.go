package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/google/uuid"

	"svc/payments/money"
)

// OwnerType says whose an account is.
type OwnerType string

const (
	OwnerMerchant OwnerType = "merchant" // the merchant's own balances; OwnerID is the merchant id
	OwnerCustomer OwnerType = "customer" // a customer's balances; OwnerID is the customer id
	OwnerSystem   OwnerType = "system"   // the other side of the books (outside world, FX, fees); OwnerID is uuid.Nil
)

// Purpose names what an account holds. Any lower-case identifier ([a-z][a-z0-9_]{0,39})
// works; these are the ones the service uses.
type Purpose string

const (
	// Available is spendable money of a merchant or customer.
	Available Purpose = "available"
	// Pending is money on its way: received but not settled, or held for a withdrawal or
	// transfer until it settles (available -> pending at creation; pending -> external when
	// sent; pending -> available when it fails).
	Pending Purpose = "pending"
	// Receivable is what a merchant or customer owes the service (e.g. the shortfall of a
	// reversal the balance no longer covers). Purposes starting with "receivable" may go
	// negative: a negative receivable is a debt, kept in the books, not hidden.
	Receivable Purpose = "receivable"

	// System purposes (OwnerSystem): these may go negative.

	// External is money crossing the boundary of the books: a deposit credits a customer and
	// debits external; a withdrawal sent on-chain debits pending and credits external.
	External Purpose = "external"
	// FX is the conversion desk: converting NGN to USDT credits fx in NGN and debits fx in
	// USDT. It bears the rounding of conversions (see package money).
	FX Purpose = "fx"
	// Fees collects the service's fees.
	Fees Purpose = "fees"
	// Trading is the merchant's trading balance as seen from the payments books (money moved
	// to or from the exchange engine).
	Trading Purpose = "trading"
)

var purposeRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// Valid reports whether p is a well-formed purpose.
func (p Purpose) Valid() bool { return purposeRE.MatchString(string(p)) }

// Account is an account address without its asset: the asset of a posting completes it, so
// a posting can never name an account of another asset.
type Account struct {
	Owner   OwnerType
	OwnerID uuid.UUID
	Purpose Purpose
}

// Merchant is an account of the merchant itself.
func Merchant(merchantID uuid.UUID, p Purpose) Account {
	return Account{Owner: OwnerMerchant, OwnerID: merchantID, Purpose: p}
}

// Customer is an account of one customer.
func Customer(customerID uuid.UUID, p Purpose) Account {
	return Account{Owner: OwnerCustomer, OwnerID: customerID, Purpose: p}
}

// System is an account of the system side of a merchant's books.
func System(p Purpose) Account { return Account{Owner: OwnerSystem, Purpose: p} }

// AllowsNegative reports whether the account may hold a negative balance: system accounts
// and receivable-type accounts. Every other account is refused a negative balance by Post
// (ErrInsufficientBalance) and by a CHECK constraint in the database.
func (a Account) AllowsNegative() bool {
	return a.Owner == OwnerSystem || (len(a.Purpose) >= len(Receivable) && a.Purpose[:len(Receivable)] == Receivable)
}

func (a Account) String() string {
	if a.Owner == OwnerSystem {
		return "system:" + string(a.Purpose)
	}
	return string(a.Owner) + ":" + a.OwnerID.String() + ":" + string(a.Purpose)
}

func (a Account) validate() error {
	switch a.Owner {
	case OwnerMerchant, OwnerCustomer:
		if a.OwnerID == uuid.Nil {
			return invalid("account %s has no owner id", a)
		}
	case OwnerSystem:
		if a.OwnerID != uuid.Nil {
			return invalid("system account %s must not carry an owner id", a)
		}
	default:
		return invalid("unknown owner type %q", a.Owner)
	}
	if !a.Purpose.Valid() {
		return invalid("invalid purpose %q", a.Purpose)
	}
	return nil
}

// Posting is one signed movement on one account: a positive amount raises the account's
// balance (a credit), a negative one lowers it (a debit).
type Posting struct {
	Account Account
	Amount  money.Amount
	// Memo, when set, is the business step this entry belongs to in a transaction that
	// carries several (a batch of deposit steps): the entry shows it instead of the
	// transaction's reference, kind and description (ListEntries). Not part of the
	// transaction's identity (its hash).
	Memo Memo
}

// Memo names one business step of a posting: its reference, kind and description.
type Memo struct {
	Reference, Kind, Description string
}

// WithMemo returns the postings with m as their memo.
func WithMemo(m Memo, ps []Posting) []Posting {
	for i := range ps {
		ps[i].Memo = m
	}
	return ps
}

// Move returns the two postings that move amount (> 0) from one account to another: a
// debit of from and a credit of to, in amount's asset.
func Move(from, to Account, amount money.Amount) []Posting {
	return []Posting{{Account: from, Amount: amount.Neg()}, {Account: to, Amount: amount}}
}

// Transaction is one atomic set of postings in one merchant's books and one environment.
type Transaction struct {
	MerchantID  uuid.UUID
	Environment string // "sandbox" or "live"
	// Reference makes the post idempotent: unique per merchant and environment; a second
	// Post with the same reference and postings is a replay (Posted.Replayed), with other
	// postings ErrReferenceConflict. Use a stable name of the business step, e.g.
	// "deposit:<id>:settle" or "withdrawal:<id>:hold".
	Reference   string
	Kind        string // machine-readable kind, e.g. "deposit.settle" (optional)
	Description string // shown in a customer's ledger (optional)
	Postings    []Posting
	Metadata    map[string]string // optional
	// ShardKey, when set, picks the shard of the transaction's system postings instead of
	// the reference (SystemShards): transactions that one database transaction posts
	// together give the same key, so they lock one row per system account between them
	// rather than up to SystemShards, which other transactions then wait for, in an order
	// that could deadlock with another batch. Not part of the postings' identity: a replay
	// under another key is still a replay.
	ShardKey string
}

// Validate checks the transaction without touching the database: tenant and reference set,
// at least two postings, each on a valid account with a known asset and a non-zero amount,
// and the postings summing to zero per asset (ErrUnbalanced).
func (t Transaction) Validate() error {
	if t.MerchantID == uuid.Nil {
		return invalid("merchant id is required")
	}
	if t.Environment != "sandbox" && t.Environment != "live" {
		return invalid("environment must be sandbox or live, not %q", t.Environment)
	}
	if t.Reference == "" || len(t.Reference) > 200 {
		return invalid("reference must be 1 to 200 bytes")
	}
	if len(t.Postings) < 2 {
		return invalid("a transaction needs at least two postings")
	}
	sums := map[money.Asset]money.Amount{}
	for i, p := range t.Postings {
		if err := p.Account.validate(); err != nil {
			return err
		}
		if !p.Amount.Asset.Valid() {
			return invalid("posting %d: unknown asset %q", i, p.Amount.Asset)
		}
		if p.Amount.IsZero() {
			return invalid("posting %d: amount is zero", i)
		}
		s, ok := sums[p.Amount.Asset]
		if !ok {
			s = money.Zero(p.Amount.Asset)
		}
		s, err := s.Add(p.Amount)
		if err != nil {
			return invalid("posting %d: %v", i, err)
		}
		sums[p.Amount.Asset] = s
	}
	for _, a := range money.Assets {
		if s, ok := sums[a]; ok && !s.IsZero() {
			return &UnbalancedError{Asset: a, Sum: s.Minor}
		}
	}
	return nil
}

// hash identifies the postings (order-independent), to tell a replay from a reused reference.
func (t Transaction) hash() []byte {
	lines := make([]string, len(t.Postings))
	for i, p := range t.Postings {
		lines[i] = fmt.Sprintf("%s|%s|%d", p.Account, p.Amount.Asset, p.Amount.Minor)
	}
	sort.Strings(lines)
	h := sha256.New()
	var n [8]byte
	for _, l := range lines {
		binary.BigEndian.PutUint64(n[:], uint64(len(l)))
		h.Write(n[:])
		h.Write([]byte(l))
	}
	return h.Sum(nil)
}

// Posted is the outcome of Post.
type Posted struct {
	ID        uuid.UUID
	Replayed  bool // the reference was already posted; nothing changed
	CreatedAt time.Time
	// Balances after the post, one per account and asset touched (nil on a replay).
	Balances []Balance
}

// Balance is an account's balance.
type Balance struct {
	Account   Account
	Amount    money.Amount // the balance, in the account's asset
	UpdatedAt time.Time    // zero for an account that was never posted to
}

// Find returns the balance of account in asset from a Posted's list.
func (p Posted) Find(a Account, asset money.Asset) (Balance, bool) {
	for _, b := range p.Balances {
		if b.Account == a && b.Amount.Asset == asset {
			return b, true
		}
	}
	return Balance{}, false
}

// Entry is one posting as recorded.
type Entry struct {
	ID            uuid.UUID
	TransactionID uuid.UUID
	Reference     string
	Kind          string
	Description   string
	Account       Account
	Amount        money.Amount // signed: + credit, - debit
	BalanceAfter  money.Amount
	Seq           int64 // 1, 2, 3... per account
	CreatedAt     time.Time
}

// Type is CREDIT for a positive entry and DEBIT for a negative one.
func (e Entry) Type() string {
	if e.Amount.Minor < 0 {
		return "DEBIT"
	}
	return "CREDIT"
}

// EntryFilter selects the entries of one owner's accounts.
type EntryFilter struct {
	MerchantID  uuid.UUID
	Environment string
	Owner       OwnerType
	OwnerID     uuid.UUID
	Asset       money.Asset // "" for every asset
	Purpose     Purpose     // "" for every purpose
}
