package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// latencySummary is a histogram's figures in microseconds.
type latencySummary struct {
	Count                    int64
	Min, P50, P90, P99, P999 int64
	Max                      int64
	Mean                     float64
}

func summarize(h *hdrhistogram.Histogram) latencySummary {
	if h == nil || h.TotalCount() == 0 {
		return latencySummary{}
	}
	return latencySummary{
		Count: h.TotalCount(),
		Min:   h.Min(),
		P50:   h.ValueAtQuantile(50),
		P90:   h.ValueAtQuantile(90),
		P99:   h.ValueAtQuantile(99),
		P999:  h.ValueAtQuantile(99.9),
		Max:   h.Max(),
		Mean:  h.Mean(),
	}
}

// fmtMicros prints a latency in µs as µs below 1 ms and as ms with two decimals above.
func fmtMicros(us int64) string {
	if us < 1000 {
		return strconv.FormatInt(us, 10) + "µs"
	}
	return strconv.FormatFloat(float64(us)/1000, 'f', 2, 64) + "ms"
}

func (s latencySummary) String() string {
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (n=%d)",
		fmtMicros(s.P50), fmtMicros(s.P90), fmtMicros(s.P99), fmtMicros(s.P999), fmtMicros(s.Max), s.Count)
}

// statusLine is "201 x 1000, 429 x 3" in code order, with the errors after.
func statusLine(status map[int]int64, errs map[string]int64) string {
	codes := make([]int, 0, len(status))
	for c := range status {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d x %d", c, status[c]))
	}
	msgs := make([]string, 0, len(errs))
	for m := range errs {
		msgs = append(msgs, m)
	}
	sort.Strings(msgs)
	for _, m := range msgs {
		parts = append(parts, fmt.Sprintf("error %q x %d", m, errs[m]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func printResult(w io.Writer, r *runResult) {
	mode := "closed loop"
	if r.Rate > 0 {
		mode = fmt.Sprintf("open loop %.0f req/s offered", r.Rate)
	}
	fmt.Fprintf(w, "%-18s %9.0f req/s  %s, %d conns, %s\n", r.Name, r.RPS(), mode, r.Conns, r.Window)
	fmt.Fprintf(w, "  all     %s\n", r.Summary())
	if r.Cancel.TotalCount() > 0 {
		fmt.Fprintf(w, "  place   %s\n", summarize(r.Place))
		fmt.Fprintf(w, "  cancel  %s\n", summarize(r.Cancel))
	}
	fmt.Fprintf(w, "  status  %s\n", statusLine(r.Status, r.Errors))
	if r.Late > 0 {
		fmt.Fprintf(w, "  late    %d requests started > 1ms after their slot (the client could not keep up with the offered rate; their latency includes the wait)\n", r.Late)
	}
	if n := r.Failures(); n > 0 {
		fmt.Fprintf(w, "  !!! %d of %d requests failed or were not 2xx !!!\n", n, r.Requests)
	}
}
