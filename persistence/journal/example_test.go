package journal_test

import (
	"context"
	"fmt"
	"os"

	"svc/persistence/journal"
)

// The life cycle: open (recovers the tail), start the committer, append
// batches from any goroutine, replay from an offset, close.
func Example() {
	dir, _ := os.MkdirTemp("", "journal-example-")
	defer os.RemoveAll(dir)

	j, err := journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil {
		panic(err)
	}
	if err := j.Start(); err != nil {
		panic(err)
	}
	defer j.Close()

	ctx := context.Background()
	last, err := j.Append(ctx, [][]byte{[]byte("accepted"), []byte("filled")})
	if err != nil {
		// Sticky: every later Append fails too. The engine fail-stops.
		panic(err)
	}
	fmt.Println("durable up to", last)

	_ = j.ReadFrom(ctx, 2, func(offset uint64, payload []byte) error {
		fmt.Println(offset, string(payload))
		return nil
	})
	// Output:
	// durable up to 2
	// 2 filled
}
