package journal

import (
	"context"
	"testing"
)

func TestCommitStats(t *testing.T) {
	j, err := OpenFile(FileOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Start(); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.Append(context.Background(), [][]byte{[]byte("a"), []byte("b"), []byte("c")}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(context.Background(), [][]byte{[]byte("d")}); err != nil {
		t.Fatal(err)
	}
	st := j.CommitStats()
	if st.Commits < 1 || st.Commits > 2 || st.RecordsSum != 4 || st.SecondsSum <= 0 {
		t.Fatalf("stats %+v: want 1 or 2 commits of 4 records taking some time", st)
	}
	var n, recs uint64
	for i := range st.SecondsBuckets {
		n += st.SecondsBuckets[i]
		recs += st.RecordsBuckets[i]
	}
	if n != st.Commits || recs != st.Commits {
		t.Fatalf("buckets %v %v do not add up to %d commits", st.SecondsBuckets, st.RecordsBuckets, st.Commits)
	}
	if got := len(CommitSecondsBounds()); got != len(st.SecondsBuckets)-1 {
		t.Fatalf("%d bounds for %d buckets", got, len(st.SecondsBuckets))
	}
}

func TestBucket(t *testing.T) {
	bounds := []float64{1, 2, 4}
	for _, c := range []struct {
		v    float64
		want int
	}{{0, 0}, {1, 0}, {1.5, 1}, {4, 2}, {5, 3}} {
		if got := bucket(bounds, c.v); got != c.want {
			t.Errorf("bucket(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}
