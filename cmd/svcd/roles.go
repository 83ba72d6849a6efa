package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
)

// role is one part of svcd a process can run (--roles). docs/cluster.md draws them.
type role uint8

const (
	roleEngine     role = 1 << iota // the matching engine of each environment, its journal, snapshots and lease; serves the engine RPC
	roleGateway                     // the HTTP API: auth, trading (forwarded to the engine without the engine role), payments routes
	roleMarketData                  // books, klines and ticker from the journal; REST market data and the WebSocket stream
	roleProjector                   // the journal -> PostgreSQL order and trade history, with its lag in /metrics
	roleWorkers                     // the payments job queue: deposit, withdrawal and transfer steps, webhook deliveries, housekeeping
)

// roleNames in the order they are printed.
var roleNames = []struct {
	r    role
	name string
}{{roleEngine, "engine"}, {roleGateway, "gateway"}, {roleMarketData, "marketdata"}, {roleProjector, "projector"}, {roleWorkers, "workers"}}

// roles is a set of roles. The zero value is every role, like --roles=all (a config built
// without parseConfig runs the single process).
type roles uint8

// allRoles is the single process of `make run`.
const allRoles = roles(roleEngine | roleGateway | roleMarketData | roleProjector | roleWorkers)

func (rs roles) has(r role) bool { return rs == 0 || rs&roles(r) != 0 }

func (rs roles) String() string {
	if rs == allRoles || rs == 0 {
		return "all"
	}
	var names []string
	for _, n := range roleNames {
		if rs.has(n.r) {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// parseRoles reads --roles: "all" or a comma-separated subset of engine, gateway,
// marketdata, projector, workers.
func parseRoles(s string) (roles, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return allRoles, nil
	}
	var rs roles
	for _, p := range strings.Split(s, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if p == "all" {
			return 0, errors.New(`-roles: "all" stands alone (it is every role)`)
		}
		found := false
		for _, n := range roleNames {
			if n.name == p {
				rs |= roles(n.r)
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("-roles: unknown role %q: want all or a comma-separated subset of engine, gateway, marketdata, projector, workers", p)
		}
	}
	if rs == 0 {
		return 0, errors.New("-roles: empty")
	}
	return rs, nil
}

// environments the cluster flags name.
var clusterEnvs = []string{"sandbox", "live"}

// parseEnvAddrs reads "sandbox=host:port,live=host:port"; every environment needs one.
func parseEnvAddrs(flagName, s string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range splitList(s) {
		env, addr, ok := strings.Cut(p, "=")
		env, addr = strings.TrimSpace(env), strings.TrimSpace(addr)
		if !ok || env == "" || addr == "" {
			return nil, fmt.Errorf("-%s %q: want env=host:port pairs, e.g. sandbox=127.0.0.1:7101,live=127.0.0.1:7102", flagName, p)
		}
		if env != "sandbox" && env != "live" {
			return nil, fmt.Errorf("-%s: unknown environment %q: want sandbox and live", flagName, env)
		}
		if _, dup := out[env]; dup {
			return nil, fmt.Errorf("-%s: %s given twice", flagName, env)
		}
		for _, a := range strings.Split(addr, "|") { // the leader's and its standbys'
			if _, port, err := net.SplitHostPort(strings.TrimSpace(a)); err != nil || port == "" {
				return nil, fmt.Errorf("-%s %s=%q: want host:port (several for -engine-addr: host:port|host:port)", flagName, env, addr)
			}
		}
		out[env] = addr
	}
	var missing []string
	for _, env := range clusterEnvs {
		if _, ok := out[env]; !ok {
			missing = append(missing, env)
		}
	}
	if len(missing) > 0 && len(out) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("-%s: no address for %s (every environment needs one)", flagName, strings.Join(missing, " and "))
	}
	return out, nil
}

// clusterConfig is how a process takes part in a cluster (docs/cluster.md).
type clusterConfig struct {
	RolesFlag    string
	Roles        roles
	EngineAddr   map[string]string // env -> engine RPC address this process calls (without the engine role)
	EngineListen map[string]string // env -> address the engine RPC listens on (engine role; none: not served)

	// Engine RPC TLS (both sides): this process's certificate and key (PEM), and the CA
	// that signs the other side's. None: plaintext, for loopback or a private network.
	EngineTLSCert, EngineTLSKey, EngineTLSCA string

	// SharedRateLimit counts each merchant's per-minute limit across every gateway in
	// PostgreSQL (gateway/ratelimit.Shared) instead of per node.
	SharedRateLimit bool
}

func (c *clusterConfig) flags(fs *flag.FlagSet, env *envDefaults) {
	fs.BoolVar(&c.SharedRateLimit, "rate-limit-shared", env.bool("rate-limit-shared", true),
		"count each merchant's per-minute limit across every gateway in PostgreSQL, from allowances held in memory (no round trip per request); false: each gateway counts its own")
	c.RolesFlag = env.str("roles", "all")
	if rs, err := parseRoles(c.RolesFlag); err == nil {
		c.Roles = rs
	} else if env.err == nil {
		env.err = fmt.Errorf("%s: %w", envName("roles"), err)
	}
	fs.Func("roles", "what this process runs: all (one process, as make run; the default) or a comma-separated subset of engine, gateway, marketdata, projector, workers (also SVC_ROLES)", func(s string) error {
		rs, err := parseRoles(s)
		if err != nil {
			return err
		}
		c.RolesFlag, c.Roles = s, rs
		return nil
	})
	fs.Func("engine-addr", "engine RPC address of each environment for a process without the engine role, e.g. sandbox=127.0.0.1:7101,live=127.0.0.1:7102 (also SVC_ENGINE_ADDR)", func(s string) (err error) {
		c.EngineAddr, err = parseEnvAddrs("engine-addr", s)
		return err
	})
	fs.Func("engine-listen", "with the engine role: where each environment's engine RPC listens, e.g. sandbox=127.0.0.1:7101,live=127.0.0.1:7102 (also SVC_ENGINE_LISTEN; loopback or a private network: the RPC has no authentication of its own)", func(s string) (err error) {
		c.EngineListen, err = parseEnvAddrs("engine-listen", s)
		return err
	})
	fs.StringVar(&c.EngineTLSCert, "engine-tls-cert", env.str("engine-tls-cert", ""), "engine RPC over TLS: this process's certificate (PEM); the engine serves it, a client presents it (mutual TLS)")
	fs.StringVar(&c.EngineTLSKey, "engine-tls-key", env.str("engine-tls-key", ""), "the private key (PEM) of -engine-tls-cert")
	fs.StringVar(&c.EngineTLSCA, "engine-tls-ca", env.str("engine-tls-ca", ""), "engine RPC over TLS: the CA (PEM) that signs the other side's certificate; on the engine it makes client certificates required")
	// SVC_* defaults; flags given later overwrite them.
	if v := env.str("engine-addr", ""); v != "" {
		m, err := parseEnvAddrs("engine-addr", v)
		if err != nil && env.err == nil {
			env.err = fmt.Errorf("%s: %w", envName("engine-addr"), err)
		}
		c.EngineAddr = m
	}
	if v := env.str("engine-listen", ""); v != "" {
		m, err := parseEnvAddrs("engine-listen", v)
		if err != nil && env.err == nil {
			env.err = fmt.Errorf("%s: %w", envName("engine-listen"), err)
		}
		c.EngineListen = m
	}
}

// validate checks that what the roles need is configured (the flags parsed the roles).
// journal is --journal: nodes that read the journal of an engine in another process need
// Kafka.
func (c clusterConfig) validate(journal string) error {
	rs := c.Roles
	if rs == 0 {
		rs = allRoles
	}
	var errs []error
	remote := !rs.has(roleEngine)
	if remote && (rs.has(roleGateway) || rs.has(roleMarketData) || rs.has(roleWorkers)) && len(c.EngineAddr) == 0 {
		errs = append(errs, fmt.Errorf("-roles=%s without engine needs -engine-addr (sandbox=host:port,live=host:port): the engine runs in another process", rs))
	}
	if !remote && len(c.EngineAddr) > 0 {
		errs = append(errs, errors.New("-engine-addr is for a process without the engine role; this one runs the engines (use -engine-listen to serve them)"))
	}
	for env, a := range c.EngineListen {
		if strings.Contains(a, "|") {
			errs = append(errs, fmt.Errorf("-engine-listen %s=%q: one address", env, a))
		}
	}
	if remote && len(c.EngineListen) > 0 {
		errs = append(errs, errors.New("-engine-listen needs the engine role"))
	}
	if rs.has(roleEngine) && rs != allRoles && len(c.EngineListen) == 0 {
		errs = append(errs, fmt.Errorf("-roles=%s: the engine serves the other roles' processes, so it needs -engine-listen (sandbox=host:port,live=host:port)", rs))
	}
	if (c.EngineTLSCert == "") != (c.EngineTLSKey == "") {
		errs = append(errs, errors.New("-engine-tls-cert and -engine-tls-key go together"))
	}
	if rs.has(roleEngine) && c.EngineTLSCA != "" && c.EngineTLSCert == "" && len(c.EngineListen) > 0 {
		errs = append(errs, errors.New("-engine-tls-ca on the engine needs its own -engine-tls-cert and -engine-tls-key to serve TLS"))
	}
	// The journal is read by other processes only through Kafka: a file journal belongs
	// to the one process that writes it.
	if journal != "kafka" {
		if remote && (rs.has(roleMarketData) || rs.has(roleProjector)) {
			errs = append(errs, fmt.Errorf("-roles=%s reads the journal of an engine in another process: that needs -journal=kafka", rs))
		}
		if !remote && (!rs.has(roleProjector) || !rs.has(roleMarketData)) {
			errs = append(errs, fmt.Errorf("-roles=%s leaves the projector or market data to another process, which reads the journal: that needs -journal=kafka", rs))
		}
	}
	return errors.Join(errs...)
}

// serverTLS is the engine RPC's server TLS (nil: plaintext): TLS 1.3 with this process's
// certificate, and client certificates signed by -engine-tls-ca required when it is set.
func (c clusterConfig) serverTLS() (*tls.Config, error) {
	if c.EngineTLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.EngineTLSCert, c.EngineTLSKey)
	if err != nil {
		return nil, fmt.Errorf("-engine-tls-cert/-engine-tls-key: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	if c.EngineTLSCA != "" {
		pool, err := loadCA(c.EngineTLSCA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// clientTLS is the engine RPC's client TLS (nil: plaintext): the engine's certificate
// checked against -engine-tls-ca (or the system's roots), this process's presented.
func (c clusterConfig) clientTLS() (*tls.Config, error) {
	if c.EngineTLSCA == "" && c.EngineTLSCert == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS13}
	if c.EngineTLSCA != "" {
		pool, err := loadCA(c.EngineTLSCA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if c.EngineTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(c.EngineTLSCert, c.EngineTLSKey)
		if err != nil {
			return nil, fmt.Errorf("-engine-tls-cert/-engine-tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func loadCA(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-engine-tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-engine-tls-ca %s: no PEM certificate in it", file)
	}
	return pool, nil
}
