package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// percentileXY is the latency distribution of r as points (x = 1/(1-q), y = ms), the usual
// HdrHistogram percentile plot: x on a log scale spreads 90%, 99%, 99.9% evenly.
func percentileXY(r *runResult) plotter.XYs {
	var pts plotter.XYs
	for _, b := range r.All.CumulativeDistribution() {
		q := b.Quantile / 100
		if q >= 0.99999 {
			q = 0.99999
		}
		x := 1 / (1 - q)
		if len(pts) > 0 && x <= pts[len(pts)-1].X {
			continue
		}
		pts = append(pts, plotter.XY{X: x, Y: float64(b.ValueAt) / 1000})
		if q >= 0.99999 {
			break
		}
	}
	return pts
}

var plotColors = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// writePlot draws the runs' latency distributions to path (a PNG); "" draws nothing.
func writePlot(path string, out io.Writer, runs []*runResult) error {
	if path == "" {
		return nil
	}
	p := plot.New()
	p.Title.Text = "svcbench orders: latency by percentile"
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (ms)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{
		{Value: 1, Label: "0%"}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"},
		{Value: 100, Label: "99%"}, {Value: 1000, Label: "99.9%"}, {Value: 10000, Label: "99.99%"},
		{Value: 100000, Label: "99.999%"},
	})
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	for i, r := range runs {
		pts := percentileXY(r)
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotColors[i%len(plotColors)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		s := r.Summary()
		p.Legend.Add(fmt.Sprintf("%s %.0f req/s, p99 %s", r.Name, r.RPS(), fmtMicros(s.P99)), l)
	}
	if math.IsInf(p.Y.Max, 0) || p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	p.Y.Min = 0
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
		return err
	}
	fmt.Fprintf(out, "plot: %s\n", path)
	return nil
}
