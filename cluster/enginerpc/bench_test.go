package enginerpc

import (
	"slices"
	"testing"
	"time"

	"svc/engine"
)

// BenchmarkSubmit measures what the transport adds to a command: one caller submits IOC
// buys that find no seller (each is accepted, journaled and cancelled, so the book stays
// empty) straight into the engine and through a Client on 127.0.0.1, and reports each
// call's p50 and p99. The journal is in memory, so the difference is the transport.
//
//	go test -run '^$' -bench Submit -benchtime 20000x ./cluster/enginerpc/
func BenchmarkSubmit(b *testing.B) {
	r := newRig(b)
	fund(b, r.eng, alice, engine.NGN, "1000000000", 1)
	for _, bc := range []struct {
		name string
		ex   interface {
			Submit(*engine.Command) (engine.Result, error)
		}
	}{{"direct", r.eng}, {"rpc", r.client}} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			cmd := engine.Command{Kind: engine.CmdPlace, Account: alice, Symbol: "USDT-NGN", Side: engine.Buy,
				Type: engine.Limit, TIF: engine.IOC, Price: 150000, Qty: 100}
			var n uint64
			b.ResetTimer()
			for b.Loop() {
				n++
				cmd.OrderID = engine.OrderID{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24), byte(n >> 32), 0xbe, bc.name[0]}
				cmd.Time = int64(n)
				start := time.Now()
				res, err := bc.ex.Submit(&cmd)
				lat = append(lat, time.Since(start))
				if err != nil || res.Code != engine.OK {
					b.Fatalf("%+v %v", res, err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
		})
	}
}
