package api

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString: the hand encoder writes exactly what encoding/json writes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "\n\t\r\x00\x1f", "<a&b>", "\u2028\u2029", "\xff\xfe", "ünïcödé 日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
