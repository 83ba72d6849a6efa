package engine

import (
	"reflect"
	"testing"
)

// FuzzAppendRecord: AppendRecord decodes a record to the events DecodeRecord gives, or
// fails where it fails, leaving what dst held untouched; a slot it reuses never leaks
// into the event decoded there.
func FuzzAppendRecord(f *testing.F) {
	f.Add(AppendBatch(nil, sampleEvents()))
	f.Add(AppendEvent(nil, &sampleEvents()[0]))
	f.Add(AppendBatchPart(nil, sampleEvents(), 0, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e Event
		var want []Event
		wantErr := DecodeRecord(b, &e, func(e *Event) error { want = append(want, *e); return nil })
		// dst holds one event and spare slots that hold stale events.
		stale := sampleEvents()
		dst := append(make([]Event, 0, 64), stale...)
		dst = dst[:1]
		got, err := AppendRecord(dst, b)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("AppendRecord: %v, DecodeRecord: %v", err, wantErr)
		}
		if len(got) == 0 || !reflect.DeepEqual(got[0], stale[0]) {
			t.Fatal("the event dst held changed")
		}
		if err != nil {
			if len(got) != 1 {
				t.Fatalf("a bad record appended %d events", len(got)-1)
			}
			return
		}
		if !reflect.DeepEqual(got[1:], want) && !(len(got) == 1 && len(want) == 0) {
			t.Fatalf("AppendRecord %+v\nDecodeRecord %+v", got[1:], want)
		}
	})
}
