//go:build !linux

package ws

import (
	"net"
	"time"
)

// iovec is unused off Linux.
type iovec struct{}

// poller off Linux reads each connection on a goroutine of its own (Go's netpoller parks
// it); only Linux has the epoll reader.
type poller struct{ srv *Server }

func newPoller(srv *Server) (*poller, error) { return &poller{srv: srv}, nil }

func (p *poller) add(c *conn) error {
	p.srv.wg.Add(1)
	go func() {
		defer p.srv.wg.Done()
		buf := make([]byte, 4096)
		for {
			n, err := c.nc.Read(buf)
			if n > 0 {
				c.received(buf[:n])
			}
			if err != nil {
				p.srv.shutdown(c)
				return
			}
		}
	}()
	return nil
}

func (p *poller) remove(*conn) {}
func (p *poller) run()         {}
func (p *poller) stop()        {}
func (p *poller) release()     {}

// writev off Linux writes with a deadline (net.Buffers uses writev where it can).
func (s *Server) writev(c *conn, w *writerScratch) (int, bool, error) {
	_ = c.nc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	bufs := append(net.Buffers(nil), w.bufs...)
	n, err := bufs.WriteTo(c.nc)
	return int(n), false, err
}
