package payments

import (
	"errors"
	"fmt"
	"sort"
)

// Machine is a record's state machine: the statuses each status may move to. Every status
// change of a payments record in production goes through its machine's Check before the
// row is written (issue 32), so an illegal move is an error, never a silent update; the
// domains declare theirs as package variables:
//
//	var Machine = payments.Machine{Name: "deposit", Moves: map[string][]string{
//		PendingFX: {PendingWithdrawal, Flagged, Failed}, ...}}
//
// A status absent from Moves (or with no moves) is final.
type Machine struct {
	Name  string              // the record, for errors ("deposit", "withdrawal", ...)
	Moves map[string][]string // from -> the statuses it may move to
}

// Can reports whether the machine allows from -> to.
func (m Machine) Can(from, to string) bool {
	for _, s := range m.Moves[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Check returns nil when the machine allows from -> to, and an *IllegalMoveError otherwise.
func (m Machine) Check(from, to string) error {
	if m.Can(from, to) {
		return nil
	}
	return &IllegalMoveError{Machine: m.Name, From: from, To: to}
}

// Change is Check for a write that may keep the status: nil when from == to (no move).
func (m Machine) Change(from, to string) error {
	if from == to {
		return nil
	}
	return m.Check(from, to)
}

// From returns the statuses that may move to `to`, sorted: a compare-and-set update's
// "where status = any(...)" built from the machine instead of written again beside it.
func (m Machine) From(to string) []string {
	var out []string
	for from := range m.Moves {
		if m.Can(from, to) {
			out = append(out, from)
		}
	}
	sort.Strings(out)
	return out
}

// Statuses returns every status the machine names (as a source or a target), sorted: the
// tests enumerate every pair of them.
func (m Machine) Statuses() []string {
	seen := map[string]bool{}
	for from, tos := range m.Moves {
		seen[from] = true
		for _, to := range tos {
			seen[to] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// ErrIllegalMove matches every *IllegalMoveError (errors.Is).
var ErrIllegalMove = errors.New("illegal status move")

// IllegalMoveError is a status change its machine forbids. At the API it is INVALID_STATE
// (the record is not in a state the operation applies to); in a job it means another worker
// or an operator moved the record first, or a bug, and the row is left as it was.
type IllegalMoveError struct {
	Machine  string
	From, To string
}

func (e *IllegalMoveError) Error() string {
	return fmt.Sprintf("%s: illegal status move %s -> %s", e.Machine, e.From, e.To)
}

// APICode is the gateway's code: INVALID_STATE.
func (e *IllegalMoveError) APICode() string { return "INVALID_STATE" }

// Unwrap makes errors.Is(err, ErrIllegalMove) hold.
func (e *IllegalMoveError) Unwrap() error { return ErrIllegalMove }

// Due answers whether a job's step runs on the record it just loaded (err is the load's): a
// record that is gone (notFound) or no longer at the status `at` the step starts from was
// finished by an earlier run, so the step is done (false, nil); another error is the step's.
func Due[S comparable](err, notFound error, status, at S) (bool, error) {
	if errors.Is(err, notFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return status == at, nil
}
