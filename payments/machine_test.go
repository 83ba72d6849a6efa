package payments_test

import (
	"errors"
	"fmt"
	"testing"

	"svc/payments"
)

func TestMachineCheck(t *testing.T) {
	m := payments.Machine{Name: "thing", Moves: map[string][]string{"A": {"B", "C"}, "B": {"C"}}}
	if got, want := m.Statuses(), []string{"A", "B", "C"}; len(got) != len(want) || got[0] != "A" || got[2] != "C" {
		t.Fatalf("Statuses = %v, want %v", got, want)
	}
	if got := m.From("C"); len(got) != 2 || got[0] != "A" || got[1] != "B" {
		t.Errorf("From(C) = %v, want [A B]", got)
	}
	if m.Change("C", "C") != nil || m.Change("C", "A") == nil {
		t.Error("Change: keeping a status is no move; C -> A is illegal")
	}
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"A", "B", true}, {"A", "C", true}, {"B", "C", true},
		{"B", "A", false}, {"C", "A", false}, {"A", "A", false}, {"X", "A", false}, {"A", "X", false},
	} {
		err := m.Check(c.from, c.to)
		if (err == nil) != c.ok || m.Can(c.from, c.to) != c.ok {
			t.Errorf("%s -> %s: Check = %v, Can = %v, want allowed %v", c.from, c.to, err, m.Can(c.from, c.to), c.ok)
		}
		if c.ok {
			continue
		}
		var ill *payments.IllegalMoveError
		if !errors.As(err, &ill) || ill.From != c.from || ill.To != c.to || ill.Machine != "thing" || !errors.Is(err, payments.ErrIllegalMove) {
			t.Errorf("%s -> %s: error %#v is not the typed illegal move", c.from, c.to, err)
		}
		if ill.APICode() != "INVALID_STATE" {
			t.Errorf("APICode = %q", ill.APICode())
		}
	}
}

// TestDue: a job's step runs only on a record still at its starting status; a record gone
// or moved on is done without an error, and a load's other error is the step's.
func TestDue(t *testing.T) {
	notFound, down := errors.New("not found"), errors.New("database down")
	for _, c := range []struct {
		name    string
		err     error
		status  string
		due     bool
		wantErr error
	}{
		{"at its status", nil, "PENDING", true, nil},
		{"moved on", nil, "SETTLED", false, nil},
		{"gone", notFound, "", false, nil},
		{"gone, wrapped", fmt.Errorf("load: %w", notFound), "", false, nil},
		{"load failed", down, "", false, down},
	} {
		due, err := payments.Due(c.err, notFound, c.status, "PENDING")
		if due != c.due || !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
			t.Errorf("%s: %v %v, want %v %v", c.name, due, err, c.due, c.wantErr)
		}
	}
}
