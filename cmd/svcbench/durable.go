package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"time"

	"github.com/valyala/fasthttp"

	"svc/persistence/journal"
)

// durableServer is the durable bare anchor of `svcbench orders`: a bare fasthttp handler
// that appends each request body to the project's own file journal (group commit,
// fdatasync) and answers the fixed body only once the record is durable. No
// authentication, JSON, engine or projection: what svcd does beyond this is what svcd costs
// on top of the disk.
type durableServer struct {
	ln  net.Listener
	srv *fasthttp.Server
	j   *journal.File
	dir string
	tmp bool // dir was made here: removed at Close
}

// startDurable opens a journal in dir (a fresh temporary folder when dir is ""; give one on
// the disk svcd's journal is on, or the comparison is of two disks).
func startDurable(dir string) (*durableServer, error) {
	tmp := false
	if dir == "" {
		d, err := os.MkdirTemp("", "svcbench-durable-")
		if err != nil {
			return nil, err
		}
		dir, tmp = d, true
	} else if err := os.RemoveAll(dir); err != nil { // a fresh journal each run
		return nil, err
	}
	j, err := journal.OpenFile(journal.FileOptions{Dir: dir})
	if err != nil {
		return nil, err
	}
	if err := j.Start(); err != nil {
		_ = j.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = j.Close()
		return nil, err
	}
	d := &durableServer{ln: ln, j: j, dir: dir, tmp: tmp}
	d.srv = &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := j.Append(c, [][]byte{ctx.PostBody()})
			cancel()
			if err != nil {
				ctx.Error(err.Error(), fasthttp.StatusServiceUnavailable)
				return
			}
			ctx.SetStatusCode(fasthttp.StatusCreated)
			ctx.SetContentType("application/json")
			ctx.SetBody(bareBody)
		},
		NoDefaultServerHeader: true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           time.Minute,
	}
	go func() { _ = d.srv.Serve(ln) }()
	return d, nil
}

func (d *durableServer) Addr() string { return d.ln.Addr().String() }

func (d *durableServer) String() string {
	return fmt.Sprintf("durable bare server on %s, journal %s", d.Addr(), d.dir)
}

func (d *durableServer) Close() {
	_ = d.srv.Shutdown()
	_ = d.j.Close()
	if d.tmp {
		_ = os.RemoveAll(d.dir)
	}
}

// medianP99Ratio is the median over rounds of svc's p99 over the anchor's p99.
func medianP99Ratio(svc, anchor []*runResult) float64 {
	var rs []float64
	for i := range svc {
		if i < len(anchor) && anchor[i].Summary().P99 > 0 {
			rs = append(rs, float64(svc[i].Summary().P99)/float64(anchor[i].Summary().P99))
		}
	}
	if len(rs) == 0 {
		return 0
	}
	sort.Float64s(rs)
	return rs[(len(rs)-1)/2]
}
