package deposits

import "testing"

// A step's postings take their batch's ledger shard key from the step's batchItem (issue 32
// item 8: it rode on a context value); outside a batch there is none and the posting's
// reference picks the shard.
func TestBatchItemCarriesTheShardKey(t *testing.T) {
	var alone *batchItem
	if k := alone.key(); k != "" {
		t.Fatalf("a step outside a batch has shard key %q", k)
	}
	b := &batchItem{shardKey: "deposits:batch:0192"}
	if k := b.key(); k != "deposits:batch:0192" {
		t.Fatalf("shard key %q", k)
	}
}
