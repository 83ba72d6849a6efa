package withdrawals

import (
	"slices"
	"testing"
)

func TestStatesAndTheProcessingAlias(t *testing.T) {
	if got := ExpandStatus(Processing); !slices.Equal(got, []string{Pending, Submitted}) {
		t.Fatal(got)
	}
	if ExpandStatus("DONE") != nil || !slices.Equal(ExpandStatus(Settled), []string{Settled}) {
		t.Fatal("expand")
	}
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{Pending, Submitted, true}, {Pending, Failed, true}, {Submitted, Settled, true}, {Submitted, Failed, true},
		{Pending, Settled, false}, {Settled, Failed, false}, {Failed, Pending, false}, {Submitted, Pending, false},
	} {
		if CanMove(c.from, c.to) != c.ok {
			t.Errorf("%s -> %s", c.from, c.to)
		}
	}
}

type fields []string

func (f *fields) Add(field, _ string) { *f = append(*f, field) }

func TestValidateParsesTheAmount(t *testing.T) {
	var f fields
	a := CreateInput{AmountUSD: "12.5", Token: "USDT", Chain: "APTOS",
		DestinationAddress: "0x" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"}.Validate(&f)
	if len(f) != 0 || a.String() != "12.500000" {
		t.Fatal(f, a)
	}
}
