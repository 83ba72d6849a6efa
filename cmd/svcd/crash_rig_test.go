package main

// The process side of the crash test: build the binaries, start svcd on a free port,
// read the demo key from its output, SIGKILL or SIGTERM it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"svc/engine"
	"svc/persistence/postgres/pgtest"
	"svc/testport"
)

// buildBinaries builds svcd and svc once into dir.
func buildBinaries(t *testing.T, dir string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("crash test needs the go command to build svcd: %v", err)
	}
	start := time.Now()
	cmd := exec.Command(goBin, "build", "-o", dir+string(filepath.Separator), "svc/cmd/svcd", "svc/cmd/svc")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build svcd svc: %v\n%s", err, out)
	}
	t.Logf("built svcd and svc in %s", time.Since(start).Round(time.Millisecond))
}

// fileJournalSvcd builds svcd and makes a process of it (not started yet) on a fresh
// database and a file journal, with the demo merchant; extra flags follow the common ones.
// The process is killed at cleanup, and its log is printed when the test failed.
func fileJournalSvcd(t *testing.T, extra ...string) (*svcdProc, *pgxpool.Pool) {
	t.Helper()
	bin := t.TempDir()
	buildBinaries(t, bin)
	pool, dbURL := pgtest.New(t)
	dir := t.TempDir()
	args := append([]string{"--database-url", dbURL, "--demo", "--access-log=false", "--log-format", "text",
		"--journal", "file", "--journal-dir", filepath.Join(dir, "journal"),
		"--snapshot-dir", filepath.Join(dir, "snapshots"), "--shutdown-timeout", "5s"}, extra...)
	p := &svcdProc{t: t, bin: filepath.Join(bin, "svcd"), env: baseEnv(), args: args}
	t.Cleanup(func() {
		if p.cmd != nil {
			p.kill()
		}
		if t.Failed() {
			p.dumpLog()
		}
	})
	return p, pool
}

// svcdProc is one svcd process at a time, restarted on a fresh port each time.
type svcdProc struct {
	t     *testing.T
	bin   string
	args  []string // everything but --addr
	env   []string
	runs  int
	logMu sync.Mutex
	log   []string // the last lines of every run's output, for failures

	mu      sync.RWMutex
	base    string // http://127.0.0.1:PORT of the current run
	demoKey string

	cmd    *exec.Cmd
	exited chan struct{}
}

// baseEnv is the test's environment without anything svcd would read as configuration.
func baseEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SVC_") || strings.HasPrefix(kv, "DATABASE_URL=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

var demoKeyLine = regexp.MustCompile(`API key:\s+(svc_sk_test_\S+)`)

// lineSink receives the process's output line by line.
type lineSink struct {
	p       *svcdProc
	run     int
	partial []byte
	key     chan string
}

func (s *lineSink) Write(b []byte) (int, error) {
	s.partial = append(s.partial, b...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(s.partial[:i])
		s.partial = s.partial[i+1:]
		if m := demoKeyLine.FindStringSubmatch(line); m != nil {
			select {
			case s.key <- m[1]:
			default:
			}
		}
		s.p.logMu.Lock()
		s.p.log = append(s.p.log, fmt.Sprintf("[run %d] %s", s.run, line))
		if len(s.p.log) > 400 {
			s.p.log = s.p.log[len(s.p.log)-300:]
		}
		s.p.logMu.Unlock()
	}
}

// start runs svcd and returns once it has printed the demo key and /ready answers 200.
func (p *svcdProc) start() time.Duration {
	t := p.t
	t.Helper()
	p.runs++
	began := time.Now()
	addr := fmt.Sprintf("127.0.0.1:%d", testport.Free(t))
	cmd := exec.Command(p.bin, append([]string{"--addr", addr}, p.args...)...)
	cmd.Env = p.env
	sink := &lineSink{p: p, run: p.runs, key: make(chan string, 1)}
	cmd.Stdout = sink
	cmd.Stderr = &lineSink{p: p, run: p.runs, key: make(chan string, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start svcd: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited

	deadline := time.After(60 * time.Second)
	var key string
	select {
	case key = <-sink.key:
	case <-exited:
		p.fail("svcd exited during start-up (%v)", cmd.ProcessState)
	case <-deadline:
		p.fail("svcd printed no demo API key within 60s")
	}
	base := "http://" + addr
	for {
		resp, err := http.Get(base + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			p.fail("svcd exited before it was ready (%v)", cmd.ProcessState)
		case <-deadline:
			p.fail("svcd not ready within 60s")
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.mu.Lock()
	p.base, p.demoKey = base, key
	p.mu.Unlock()
	return time.Since(began)
}

// current is the address and demo key of the running svcd.
func (p *svcdProc) current() (base, demoKey string) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.base, p.demoKey
}

// call sends a JSON request with key to the running svcd, with extra headers as name,
// value pairs, and returns its status, headers and the envelope's data (nil when the body
// is not one); err is the transport's or reading the body's.
func (p *svcdProc) call(client *http.Client, key, method, path string, body any, headers ...string) (int, http.Header, map[string]any, error) {
	base, _ := p.current()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var env struct {
		Data map[string]any `json:"data"`
	}
	raw, err := io.ReadAll(resp.Body)
	if err == nil {
		_ = json.Unmarshal(raw, &env)
	}
	return resp.StatusCode, resp.Header, env.Data, err
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *svcdProc) kill() {
	p.signal(syscall.SIGKILL)
}

// stop sends SIGTERM (graceful shutdown: drain, final snapshot) and waits.
func (p *svcdProc) stop() {
	p.signal(syscall.SIGTERM)
}

func (p *svcdProc) signal(sig syscall.Signal) {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.fail("svcd did not exit within 30s of %v", sig)
	}
	p.cmd = nil
}

// dumpLog writes the collected output to the test log.
func (p *svcdProc) dumpLog() {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	lines := p.log
	if len(lines) > 150 {
		lines = lines[len(lines)-150:]
	}
	p.t.Logf("last %d lines of svcd output:\n%s", len(lines), strings.Join(lines, "\n"))
}

func (p *svcdProc) fail(format string, args ...any) {
	p.t.Helper()
	p.dumpLog()
	p.t.Fatalf(format, args...)
}

// runCmd runs a binary with a timeout and returns its combined output.
func runCmd(t *testing.T, timeout time.Duration, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = baseEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// checkBalances reads every client's balances through the API, fails the test on a negative
// one or on an asset whose total differs from what was funded, and returns them by merchant
// for the comparison with a replay of the journal. after names the event, for the message.
func checkBalances(t *testing.T, clients []*crashClient, funded [engine.NumAssets]int64, after string) map[uuid.UUID]engine.Balances {
	t.Helper()
	apiBalances := map[uuid.UUID]engine.Balances{}
	var held [engine.NumAssets]int64
	for _, c := range clients {
		b := c.balances(t)
		for a := range b {
			held[a] += b[a].Available + b[a].Locked
			if b[a].Available < 0 || b[a].Locked < 0 {
				t.Errorf("%s %s: negative balance %+v", c.name, engine.Asset(a), b[a])
			}
		}
		apiBalances[c.id] = b
	}
	for a := engine.NGN; int(a) < engine.NumAssets; a++ {
		if held[a] != funded[a] {
			t.Errorf("%s not conserved: funded %s, held %s %s", a, engine.FormatAmount(a, funded[a]), engine.FormatAmount(a, held[a]), after)
		}
	}
	return apiBalances
}

// fundClients points every client at proc through hc and funds its trading account with
// crashFunding; it returns what the accounts hold in all, including what they held before
// (--demo may fund its merchant): conservation is checked against it.
func fundClients(t *testing.T, clients []*crashClient, hc *http.Client, proc *svcdProc) [engine.NumAssets]int64 {
	t.Helper()
	var funded [engine.NumAssets]int64
	for _, c := range clients {
		c.http, c.proc = hc, proc
		for a, b := range c.balances(t) {
			funded[a] += b.Available + b.Locked
		}
		for _, f := range crashFunding {
			status, body, err := c.do(http.MethodPost, "/v1/trading/sandbox/fund", map[string]string{"asset": f.asset.String(), "amount": f.amount})
			if err != nil || status != http.StatusCreated {
				t.Fatalf("fund %s %s: %d %v %s", c.name, f.asset, status, err, body)
			}
			funded[f.asset] += mustUnits(t, f.asset, f.amount)
		}
	}
	return funded
}
