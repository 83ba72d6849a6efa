#!/usr/bin/env bash
# bench/run.sh: what `make bench` runs. Go benchmarks of the engine, the journal and the
# gateway skeleton, then the HTTP order load: svcd with the file journal on a free port,
# loaded by `svcbench orders` in alternating rounds with two anchors (bare fasthttp, and a durable
# bare server writing each body through the journal's group commit); then `svcbench ws`, the hub
# beside a bare broadcaster. The summary table lists every target of issues 21 and 33.
#
#   DATABASE_URL=postgres://... BENCH_OUT=bench/out ./bench/run.sh
#
# Every step has a time limit (the whole run stays under 10 minutes). Results go to
# $BENCH_OUT (git-ignored): one .txt per step and the latency plot orders-latency.png.
# Knobs: SVCBENCH_CONNS (128), SVCBENCH_DURATION (8s), SVCBENCH_ROUNDS (3),
# SVCBENCH_MERCHANTS (4), SVCBENCH_WS_CONNS (10000), SVCBENCH_WS_DURATION (5s), BENCH_SKIP_GO=1
# (only the load generators), BENCH_SKIP_WS=1, SVCD_BIN (a prebuilt svcd
# instead of building ./cmd/svcd from the working tree).
set -euo pipefail

cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-bench/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CONNS=${SVCBENCH_CONNS:-128}
DURATION=${SVCBENCH_DURATION:-8s}
ROUNDS=${SVCBENCH_ROUNDS:-3}
MERCHANTS=${SVCBENCH_MERCHANTS:-4}

if [ -z "${DATABASE_URL:-}" ] && [ -x .ci/pg ]; then
	DATABASE_URL=$(.ci/pg url)
fi
if [ -z "${DATABASE_URL:-}" ]; then
	echo "bench/run.sh: DATABASE_URL is not set (svcd needs PostgreSQL; try make bench)" >&2
	exit 2
fi
export DATABASE_URL

{
	echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "nproc:   $(nproc)"
	echo "cpu:     $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
	echo "go:      $(go version)"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine.txt"

step() { echo; echo "=== $1 ==="; }
# A step that fails or times out fails the run (exit 1 after the summary): a benchmark that
# stopped working must not leave an "n/a" in a table that otherwise looks fine.
failed=()
fail() { echo "!!! $1" >&2; failed+=("$1"); }

if [ "${BENCH_SKIP_GO:-0}" != 1 ]; then
	step "engine (go test -bench . -count 5 ./engine) -> $OUT/engine.txt"
	timeout 200 go test -run '^$' -bench . -benchmem -count 5 -benchtime 0.5s ./engine 2>&1 | tee "$OUT/engine.txt" || fail "engine benchmarks failed or timed out"

	step "journal (go test -bench . ./persistence/journal) -> $OUT/journal.txt"
	timeout 120 go test -run '^$' -bench . -benchmem ./persistence/journal 2>&1 | tee "$OUT/journal.txt" || fail "journal benchmarks failed or timed out"

	step "gateway skeleton (BenchmarkSkeleton) -> $OUT/gateway.txt"
	timeout 60 go test -run '^$' -bench BenchmarkSkeleton -benchmem ./gateway 2>&1 | tee "$OUT/gateway.txt" || fail "gateway benchmark failed or timed out"

	step "recovery, 1 M journaled events (BenchmarkRecovery; the 10 M command is in bench/RESULTS.md) -> $OUT/recovery.txt"
	SVC_RECOVERY_EVENTS=${SVC_RECOVERY_EVENTS:-1000000} timeout 300 go test -run '^$' -bench BenchmarkRecovery -benchtime 1x -count 3 -timeout 5m ./cmd/svcd 2>&1 | tee "$OUT/recovery.txt" || fail "recovery benchmark failed or timed out"

	step "payments: idempotent creates (onramps, customers, withdrawals, transfers), sandbox deposits settled (issue 22) -> $OUT/payments.txt"
	timeout 300 go test -run '^$' -bench 'OnrampCreate$|CustomerCreate$|SandboxDepositSettle$' -benchtime 500x -count 3 ./gateway/deposits 2>&1 | tee "$OUT/payments.txt" || fail "payments benchmarks failed or timed out"
	timeout 300 go test -run '^$' -bench 'WithdrawalCreate' -benchtime 500x -count 3 ./gateway/withdrawals 2>&1 | tee -a "$OUT/payments.txt" || fail "withdrawal benchmarks failed or timed out"
	timeout 300 go test -run '^$' -bench 'TransferCreate' -benchtime 500x -count 3 ./gateway/transfers 2>&1 | tee -a "$OUT/payments.txt" || fail "transfer benchmarks failed or timed out"
fi

step "svcd + svcbench orders -> $OUT/svcbench-orders.txt"
BIN=$(mktemp -d)
DATA=$(mktemp -d -p "$OUT" svcd-data.XXXXXX) # on the same disk as the repo: fsync is real
SVCD_PID=
# svcd gets a database of its own each run: its journal is fresh, and a database whose order
# history was projected from an earlier run's journal is refused at start (rightly).
BENCH_DB="svc_bench_$(date +%s)_$$"
dburl() { python3 -c 'import sys,urllib.parse as u; p=u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/"+sys.argv[2])))' "$DATABASE_URL" "$1"; }
psql -Xq "$(dburl postgres)" -c "create database \"$BENCH_DB\"" || { echo "bench/run.sh: cannot create database $BENCH_DB" >&2; exit 1; }
SVCD_DB=$(dburl "$BENCH_DB")
cleanup() {
	if [ -n "$SVCD_PID" ] && kill -0 "$SVCD_PID" 2>/dev/null; then
		kill -TERM "$SVCD_PID" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$SVCD_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$SVCD_PID" 2>/dev/null || true
	fi
	rm -rf "$BIN" "$DATA"
	psql -Xq "$(dburl postgres)" -c "drop database if exists \"$BENCH_DB\" with (force)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
if [ -n "${SVCD_BIN:-}" ]; then
	cp "$SVCD_BIN" "$BIN/svcd"
else
	timeout 180 go build -o "$BIN/svcd" ./cmd/svcd
fi
timeout 180 go build -o "$BIN/svcbench" ./cmd/svcbench
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN/svcd" --addr "127.0.0.1:$PORT" --journal-dir "$DATA/journal" --snapshot-dir "$DATA/snapshots" \
	--demo --access-log=false --log-level warn --database-url "$SVCD_DB" >"$OUT/svcd.log" 2>&1 &
SVCD_PID=$!
up=
for _ in $(seq 150); do
	if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then up=1; break; fi
	kill -0 "$SVCD_PID" 2>/dev/null || break
	sleep 0.2
done
if [ -z "$up" ]; then
	echo "!!! svcd did not come up on :$PORT; its log:" >&2
	tail -20 "$OUT/svcd.log" >&2
	exit 1
fi
# Keys: seeded bench merchants (distinct accounts, so crossing orders trade; 10M
# requests/minute each, so the rate limiter never caps the run). The demo key svcd printed
# (--keys-from "$OUT/svcd.log") is left out: its 100,000/minute limit would answer 429.
rc=0
DATABASE_URL="$SVCD_DB" timeout 300 "$BIN/svcbench" orders --url "http://127.0.0.1:$PORT" \
	--seed-merchants "$MERCHANTS" --conns "$CONNS" --duration "$DURATION" --rounds "$ROUNDS" \
	--durable-dir "$DATA/durable-bare" --half-peak --plot "$OUT/orders-latency.png" 2>&1 | tee "$OUT/svcbench-orders.txt" || rc=$?

if [ "${BENCH_SKIP_WS:-0}" != 1 ]; then
	step "svcbench ws (hub beside the bare broadcaster, alternating rounds) -> $OUT/svcbench-ws.txt"
	timeout 900 "$BIN/svcbench" ws --conns "${SVCBENCH_WS_CONNS:-10000}" --duration "${SVCBENCH_WS_DURATION:-5s}" --rounds "$ROUNDS" \
		--interval "${SVCBENCH_WS_INTERVALS:-default,100ms,1000ms}" 2>&1 |
		tee "$OUT/svcbench-ws.txt" || fail "svcbench ws failed or timed out"
fi

echo
echo "results: $OUT/{machine,engine,journal,gateway,svcbench-orders,svcbench-ws}.txt, plot $OUT/orders-latency.png, svcd log $OUT/svcd.log"

# median FILE BENCHMARK UNIT: the median of UNIT over the runs (-count) of BENCHMARK in a
# go test -bench output file; "n/a" when it is not there.
median() {
	[ -f "$1" ] || { echo n/a; return; }
	awk -v name="$2" -v unit="$3" '
		$1 ~ "^Benchmark" name "(-[0-9]+)?$" { for (i = 2; i < NF; i++) if ($(i+1) == unit) v[n++] = $i }
		END {
			if (n == 0) { print "n/a"; exit }
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			m = v[int((n - 1) / 2)]
			if (m >= 1e6) printf "%.2f M", m / 1e6; else if (m >= 1e4) printf "%.1f k", m / 1e3; else printf "%.3g", m
		}' "$1"
}
# line FILE REGEX SED: the first line of FILE matching REGEX, reduced by SED; "n/a" if none.
line() {
	local l
	l=$([ -f "$1" ] && grep -m1 -E "$2" "$1" | sed -E "$3")
	echo "${l:-n/a}"
}
row() { printf '| %-52s | %-22s | %-34s |\n' "$1" "$2" "$3"; }
orders="$OUT/svcbench-orders.txt"
{
	echo
	echo "=== summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)) ==="
	row "target" "figure" "goal"
	row "----" "----" "----"
	row "HTTP orders: svcd / durable bare req/s, same run" "$(line "$orders" '^== ratio svcd/durable' 's/.*: ([0-9.]+%).*/\1/')" ">= 80% (median of round ratios)"
	row "HTTP orders: svcd / durable bare p99, same run" "$(line "$orders" '^== p99 svcd/durable' 's/.*: ([0-9.]+x).*/\1/')" "<= 2x (median of round ratios)"
	row "HTTP orders: svcd / bare fasthttp, same run" "$(line "$orders" '^== ratio svcd/bare' 's/.*per-round ratios: ([0-9.]+%).*/\1/')" "(anchor: no disk)"
	row "HTTP orders: durable bare / bare fasthttp" "$(line "$orders" '^== ratio durable' 's/.*: ([0-9.]+%).*/\1/')" "(what the fdatasync costs)"
	row "HTTP orders: svcd req/s (median of rounds)" "$(line "$orders" '^== svcd:' 's/^== svcd: ([0-9]+ req\/s).*/\1/')" "(bare $(line "$orders" '^== bare' 's/^== bare fasthttp: ([0-9]+) req\/s.*/\1/'), durable $(line "$orders" '^== durable bare:' 's/^== durable bare: ([0-9]+) req\/s.*/\1/'))"
	row "HTTP orders: last round / first round" "$(line "$orders" '^== decay' 's/.* is ([0-9.]+%) of the first.*/\1/')" ">= 90% (no decay)"
	row "HTTP orders: p99 at half of the peak rate" "$(line "$orders" '^== p99 at half' 's/.*\): ([0-9.]+[mµu]?s) .*/\1/')" "<= 5 ms"
	row "engine AddCancelShallow (ops/s)" "$(median "$OUT/engine.txt" AddCancelShallow ops/s)" ">= 1.5x geseq Throughput (by hand)"
	row "engine AddCancelDeep (ops/s)" "$(median "$OUT/engine.txt" AddCancelDeep ops/s)" ">= 1.0x geseq ThroughputDeep (by hand)"
	row "engine Mixed (cmds/s)" "$(median "$OUT/engine.txt" Mixed cmds/s)" "(see bench/RESULTS.md)"
	row "engine MixedLatency p99 (ns)" "$(median "$OUT/engine.txt" MixedLatency p99-ns)" "(see bench/RESULTS.md)"
	row "engine RingOneProducer (cmds/s)" "$(median "$OUT/engine.txt" RingOneProducer cmds/s)" "(see bench/RESULTS.md)"
	for s in 1 2 3 4; do
		v=$(median "$OUT/engine.txt" "RingSymbols/symbols=$s" cmds/s)
		[ "$v" != n/a ] && row "engine RingSymbols, $s symbol(s) (cmds/s)" "$v" "grows with symbols where cores allow"
	done
	row "journal FileAppend, 64 appenders (events/s)" "$(median "$OUT/journal.txt" 'FileAppend/appenders=64/batch=16' events/s)" "(group commit, fdatasync)"
	row "gateway skeleton (req/s)" "$(median "$OUT/gateway.txt" 'Skeleton/gateway' req/s)" "(in-process; bare: $(median "$OUT/gateway.txt" 'Skeleton/bare' req/s))"
	row "payments onramp creates (creates/s)" "$(median "$OUT/payments.txt" OnrampCreate creates/s)" ">= 1,000/s"
	row "payments onramp creates p99 (ms)" "$(median "$OUT/payments.txt" OnrampCreate p99-ms)" "<= 25 ms"
	row "payments sandbox deposits settled (settled/s)" "$(median "$OUT/payments.txt" SandboxDepositSettle settled/s)" ">= 500/s"
	row "recovery from scratch, svcd start (events/s)" "$(median "$OUT/recovery.txt" 'Recovery/snapshot=none' events/s)" ">= 3 M events/s"
	row "recovery from scratch, svcd start (events per CPU-second)" "$(median "$OUT/recovery.txt" 'Recovery/snapshot=none' events/cpu-s)" "(both cores when free: replay applies each symbol on its own)"
	row "recovery, replay loop alone (events/s)" "$(median "$OUT/recovery.txt" 'Recovery/eventlog.Replay' events/s)" ">= 3 M events/s"
	row "recovery, replay loop (events per CPU-second)" "$(median "$OUT/recovery.txt" 'Recovery/eventlog.Replay' events/cpu-s)" "(CPU, not wall: the box is shared)"
	row "recovery, engine apply alone (events per CPU-second)" "$(median "$OUT/engine.txt" 'Apply' events/cpu-s)" "(BenchmarkApply: no journal, no decoding)"
	row "recovery, start with the 90% snapshot (ms)" "$(median "$OUT/recovery.txt" 'Recovery/snapshot=90pct' startup-ms)" "(1 M events here; 10 M in bench/RESULTS.md)"
	row "recovery, first order answered after that start (ms)" "$(median "$OUT/recovery.txt" 'Recovery/snapshot=90pct' first-order-ms)" "<= 1000 ms at 10 M events"
	# Other load generators (svcbench ws, ...) print their targets on "== " lines.
	for f in "$OUT"/svcbench-*.txt; do
		[ -f "$f" ] && [ "$f" != "$orders" ] || continue
		grep -E '^== ' "$f" | sed "s|^== |  $(basename "$f" .txt): |"
	done
} | tee "$OUT/summary.txt"

if [ "$rc" != 0 ]; then
	fail "svcbench orders exited with $rc"
fi
if [ "${#failed[@]}" != 0 ]; then
	echo >&2
	echo "bench/run.sh: ${#failed[@]} step(s) failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
