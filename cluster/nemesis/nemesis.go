//go:build linux

// Package nemesis owns the network of the partition harness (issue 29; in Jepsen, the
// "nemesis" is the part of a test that injects faults): one Linux network namespace per
// role of a cluster, each joined by a veth pair to a router namespace that forwards between
// them, and nftables rules in the router that cut the traffic between two roles (a
// partition) until Heal. Processes run in a role's namespace through Command; pausing them
// is a signal the caller sends.
//
// Nothing here touches the host's network: the namespaces have no link to the namespace the
// harness runs in, so traffic flows only between the namespaces one Net made. Their
// addresses come from 198.18.0.0/15, reserved for benchmarking networks (RFC 2544), and
// exist only inside them: role i (from 1) is 198.18.i.2/30, its router end 198.18.i.1.
//
// Root only (Available says why not). Namespace names start with "svcp<pid>-" (the pid of
// the process that made them): CleanStale removes those of processes that are gone (a run
// that was killed), with the processes still in them; Close removes a Net's own.
package nemesis

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// prefixHead starts every namespace name this package makes.
const prefixHead = "svcp"

// Net is a set of namespaces: a router and one per role.
type Net struct {
	prefix string
	nft    string
	roles  []string
}

// Available is nil when this process can build a Net: root, ip (iproute2) and nft found.
// nft is the nft command (.ci/nft path prints it).
func Available(nft string) error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root (run as root, as CI does)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("ip (iproute2) not found")
	}
	if nft == "" {
		return errors.New("nft not found (.ci/nft installs Debian's nftables)")
	}
	if _, err := os.Stat(nft); err != nil {
		return fmt.Errorf("nft: %w", err)
	}
	return nil
}

// Prefix is the namespace-name prefix of a Net made by this process.
func Prefix() string { return prefixHead + strconv.Itoa(os.Getpid()) + "-" }

// CleanStale deletes the namespaces of earlier runs whose process is gone, killing what
// still runs in them, and returns their names.
func CleanStale() []string {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return nil
	}
	var gone []string
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, prefixHead)
		if !ok {
			continue
		}
		pidStr, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			continue // its run is alive
		}
		deleteNS(name)
		gone = append(gone, name)
	}
	return gone
}

// killIn SIGKILLs every process in namespace name.
func killIn(name string) {
	out, _ := exec.Command("ip", "netns", "pids", name).Output()
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func deleteNS(name string) {
	for range 20 {
		killIn(name)
		out, _ := exec.Command("ip", "netns", "pids", name).Output()
		if len(strings.TrimSpace(string(out))) == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = exec.Command("ip", "netns", "del", name).Run()
}

// New makes the router and one namespace per role, links and addresses them, and sets
// up the (empty) nftables table in the router. On error it removes what it made.
func New(prefix, nft string, roles []string) (n *Net, err error) {
	if len(roles) == 0 || len(roles) > 250 {
		return nil, errors.New("nemesis: 1 to 250 roles")
	}
	n = &Net{prefix: prefix, nft: nft, roles: roles}
	defer func() {
		if err != nil {
			n.Close()
			n = nil
		}
	}()
	r := n.router()
	steps := [][]string{
		{"ip", "netns", "add", r},
		{"ip", "-n", r, "link", "set", "lo", "up"},
		{"ip", "netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
	}
	for i, role := range roles {
		ns, k := n.NS(role), i+1
		dev := fmt.Sprintf("v%d", k)
		steps = append(steps,
			[]string{"ip", "netns", "add", ns},
			[]string{"ip", "-n", ns, "link", "set", "lo", "up"},
			[]string{"ip", "-n", r, "link", "add", dev, "type", "veth", "peer", "name", "eth0", "netns", ns},
			[]string{"ip", "-n", r, "addr", "add", fmt.Sprintf("198.18.%d.1/30", k), "dev", dev},
			[]string{"ip", "-n", r, "link", "set", dev, "up"},
			[]string{"ip", "-n", ns, "addr", "add", fmt.Sprintf("198.18.%d.2/30", k), "dev", "eth0"},
			[]string{"ip", "-n", ns, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", ns, "route", "add", "default", "via", fmt.Sprintf("198.18.%d.1", k)},
		)
	}
	steps = append(steps,
		[]string{"ip", "netns", "exec", r, nft, "add", "table", "inet", "nemesis"},
		[]string{"ip", "netns", "exec", r, nft, "add", "chain", "inet", "nemesis", "forward",
			"{ type filter hook forward priority 0 ; policy accept ; }"},
	)
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("nemesis: %s: %v: %s", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return n, nil
}

// Attach is the Net another process made with New (same prefix and roles), for a process
// running inside one of its namespaces: it can Cut, Heal and run Commands; it does not own
// the namespaces (its Close would delete them all the same).
func Attach(prefix, nft string, roles []string) *Net {
	return &Net{prefix: prefix, nft: nft, roles: roles}
}

func (n *Net) router() string { return n.prefix + "router" }

// NS is the namespace of role.
func (n *Net) NS(role string) string { return n.prefix + role }

// Addr is role's address (198.18.i.2), or "" for an unknown role.
func (n *Net) Addr(role string) string {
	for i, r := range n.roles {
		if r == role {
			return fmt.Sprintf("198.18.%d.2", i+1)
		}
	}
	return ""
}

// Cut drops every packet between roles a and b, both ways, until Heal: connections between
// them stay open and go silent, as in a real partition.
func (n *Net) Cut(a, b string) error {
	aa, ba := n.Addr(a), n.Addr(b)
	if aa == "" || ba == "" {
		return fmt.Errorf("nemesis: unknown role %q or %q", a, b)
	}
	for _, p := range [][2]string{{aa, ba}, {ba, aa}} {
		if err := n.nftRun("add", "rule", "inet", "nemesis", "forward", "ip", "saddr", p[0], "ip", "daddr", p[1], "drop"); err != nil {
			return err
		}
	}
	return nil
}

// Heal removes every cut.
func (n *Net) Heal() error { return n.nftRun("flush", "chain", "inet", "nemesis", "forward") }

func (n *Net) nftRun(args ...string) error {
	out, err := exec.Command("ip", append([]string{"netns", "exec", n.router(), n.nft}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("nemesis: nft %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Command is name with args run in role's namespace (ip netns exec). It is killed with
// SIGKILL if the process that started it dies first.
func (n *Net) Command(role, name string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.NS(role), name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// Close kills every process in the namespaces and deletes them.
func (n *Net) Close() {
	for _, role := range n.roles {
		deleteNS(n.NS(role))
	}
	deleteNS(n.router())
}

// Names are the namespaces of the Net: the router's first.
func (n *Net) Names() []string {
	out := []string{n.router()}
	for _, r := range n.roles {
		out = append(out, n.NS(r))
	}
	return out
}

// Do runs fn on a thread switched into role's namespace: a socket fn creates (net.Listen,
// net.Dial with an IP address, which create it on the calling goroutine) stays in that
// namespace. fn must not start goroutines that create sockets.
func (n *Net) Do(role string, fn func() error) error {
	return inNS(filepath.Join("/run/netns", n.NS(role)), fn)
}

func inNS(path string, fn func() error) error {
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer self.Close()
	target, err := os.Open(path)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := setns(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("nemesis: setns %s: %w", path, err)
	}
	ferr := fn()
	if err := setns(self); err != nil {
		// The thread stays locked and dies with this goroutine: no other goroutine may run
		// in the wrong namespace.
		return fmt.Errorf("nemesis: back from %s: %w", path, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

func setns(f *os.File) error {
	if _, _, e := syscall.RawSyscall(sysSetns, f.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
		return e
	}
	return nil
}
