package enginerpc

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	grpcstatus "google.golang.org/grpc/status"

	"svc/engine"
)

// Engine is what the server calls: *engine.Engine satisfies it.
type Engine interface {
	Submit(cmd *engine.Command) (engine.Result, error)
	Order(acct engine.AccountID, id engine.OrderID) (engine.OrderView, bool)
	OrderByClientID(acct engine.AccountID, clientID string) (engine.OrderView, bool)
	Balances(acct engine.AccountID) engine.Balances
	Pairs() []engine.PairConfig
	Depth(symbol string, n int) (engine.Depth, error)
	Offset() uint64
	Err() error
}

var _ Engine = (*engine.Engine)(nil)

// serviceName is the gRPC service of one environment's engine.
const serviceName = "svc.enginerpc.Engine"

// ServerOptions configure a Server.
type ServerOptions struct {
	// TLS, if set, serves TLS (set ClientCAs and ClientAuth for mutual TLS). Without it the
	// listener must be loopback or a private network only the cluster's nodes reach.
	TLS *tls.Config
	Log *slog.Logger // nil: discard
	// Guard, if set, is asked before every call and again before its answer is sent (the
	// engine's lease: lease.Lease.Check). While it fails the server answers nothing from the
	// engine: a call is refused before it runs (codes.Unavailable: not run) or its answer is
	// dropped (codes.Aborted: a command may have run). An engine paused past its lease that
	// wakes up must not serve what it holds before it knows it still leads (issue 29).
	Guard func() error
}

// Server serves one engine to remote gateways and payments workers.
type Server struct {
	eng   Engine
	g     *grpc.Server
	log   *slog.Logger
	guard func() error
}

// NewServer builds a server for eng. It starts nothing; Serve does.
func NewServer(eng Engine, opts ServerOptions) *Server {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	gopts := []grpc.ServerOption{
		grpc.ForceServerCodec(codec{}),
		// Clients ping every Options.Keepalive; allow it, and drop a silent peer.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 10 * time.Second, Timeout: 5 * time.Second}),
		grpc.MaxRecvMsgSize(1 << 20),
	}
	if opts.TLS != nil {
		gopts = append(gopts, grpc.Creds(credentials.NewTLS(opts.TLS)))
	}
	s := &Server{eng: eng, g: grpc.NewServer(gopts...), log: log, guard: opts.Guard}
	s.g.RegisterService(&serviceDesc, s)
	return s
}

// Serve accepts connections on lis until Stop; it returns nil after Stop.
func (s *Server) Serve(lis net.Listener) error {
	s.log.Info("engine rpc listening", "addr", lis.Addr().String())
	err := s.g.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Stop stops accepting calls and waits for those in flight (each ends when the engine has
// answered, which it always does) until ctx is done, then closes every connection.
func (s *Server) Stop(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.g.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.g.Stop()
		<-done
	}
}

// Kill stops at once: every connection is closed and calls in flight fail (the engine
// can no longer serve; its clients should move to the one that took over).
func (s *Server) Kill() { s.g.Stop() }

// st is the status part of every reply.
func (s *Server) st(err error) status {
	st := status{kind: kindOf(err), failed: s.eng.Err() != nil, offset: s.eng.Offset()}
	if st.kind == errOther {
		st.msg = err.Error()
	}
	return st
}

func (s *Server) submit(m *commandMsg) *submitReply {
	res, err := s.eng.Submit(&m.c)
	return &submitReply{st: s.st(err), res: res}
}

func (s *Server) order(m *orderReq) *orderReply {
	var r orderReply
	if m.byClient {
		r.view, r.ok = s.eng.OrderByClientID(m.acct, m.clientID)
	} else {
		r.view, r.ok = s.eng.Order(m.acct, m.id)
	}
	r.st = s.st(nil)
	return &r
}

func (s *Server) balances(m *accountReq) *balancesReply {
	return &balancesReply{bal: s.eng.Balances(m.acct), st: s.st(nil)}
}

func (s *Server) pairs(*empty) *pairsReply {
	return &pairsReply{pairs: s.eng.Pairs(), st: s.st(nil)}
}

func (s *Server) status(*empty) *statusReply { return &statusReply{st: s.st(nil)} }

func (s *Server) depth(m *depthReq) *depthReply {
	d, err := s.eng.Depth(m.symbol, m.n)
	return &depthReply{d: d, st: s.st(err)}
}

// checkGuard is nil while the guard passes (or there is none), else a gRPC error of code.
func (s *Server) checkGuard(code codes.Code) error {
	if s.guard == nil {
		return nil
	}
	if err := s.guard(); err != nil {
		return grpcstatus.Error(code, "engine not serving: "+err.Error())
	}
	return nil
}

// unary adapts a method of Server to gRPC's handler shape.
func unary[Req any, PReq interface {
	*Req
	message
}, Rep message](name string, call func(*Server, PReq) Rep) grpc.MethodDesc {
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
			req := PReq(new(Req))
			if err := dec(req); err != nil {
				return nil, err
			}
			s := srv.(*Server)
			guarded := func(req PReq) (any, error) {
				if err := s.checkGuard(codes.Unavailable); err != nil {
					return nil, err
				}
				rep := call(s, req)
				if err := s.checkGuard(codes.Aborted); err != nil {
					return nil, err
				}
				return rep, nil
			}
			if icpt == nil {
				return guarded(req)
			}
			info := &grpc.UnaryServerInfo{Server: s, FullMethod: "/" + serviceName + "/" + name}
			return icpt(ctx, req, info, func(_ context.Context, req any) (any, error) {
				return guarded(req.(PReq))
			})
		},
	}
}

// serviceDesc is the hand-written description of the service (no protoc here).
var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		unary(mSubmit, (*Server).submit),
		unary(mOrder, (*Server).order),
		unary(mBalances, (*Server).balances),
		unary(mPairs, (*Server).pairs),
		unary(mStatus, (*Server).status),
		unary(mDepth, (*Server).depth),
	},
}

// Method names.
const (
	mSubmit   = "Submit"
	mOrder    = "Order"
	mBalances = "Balances"
	mPairs    = "Pairs"
	mStatus   = "Status"
	mDepth    = "Depth"
)
