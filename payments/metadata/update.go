package metadata

import (
	"encoding/json"

	"svc/payments"
)

// Update applies an update request's metadata field (raw, parsed as Parse with patch) to
// *stored, the metadata to keep: absent or null keeps it; a field problem goes to p and keeps
// it; a key count past the limit after merging goes to p. Another error (not a field
// problem) is returned.
func Update(p *payments.Problems, raw json.RawMessage, stored *Metadata) error {
	patch, set, err := Parse(raw, true)
	if !p.Merge("", err) {
		return err
	}
	if !set || err != nil {
		return nil
	}
	merged, err := Merge(*stored, patch)
	p.Merge("", err)
	*stored = merged
	return nil
}
