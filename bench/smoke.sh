#!/usr/bin/env bash
# bench/smoke.sh: every Go benchmark of the module runs once (`-benchtime 1x`), so a benchmark
# that stops working (a setup that needs what it no longer gets, a panic, a b.Fatal) fails
# `make test` and CI instead of rotting until the next `make bench`. Figures are not looked
# at here; bench/run.sh measures. The packages are the ones holding a `func Benchmark`,
# found afresh each run, so a new benchmark is covered without editing this list.
#
#   DATABASE_URL=postgres://... ./bench/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t pkgs < <(git ls-files -- '*_test.go' | xargs grep -l '^func Benchmark' | xargs -n1 dirname | sort -u | sed 's|^|./|')
if [ "${#pkgs[@]}" = 0 ]; then
	echo "bench/smoke.sh: no benchmarks found" >&2
	exit 1
fi
echo "benchmark smoke run (1 iteration each) in ${#pkgs[@]} packages"
# The recovery benchmark's data set is the smallest it accepts; the rest run as written.
SVC_RECOVERY_EVENTS=${SVC_RECOVERY_EVENTS:-1000} ${GO:-go} test -count=1 -run '^$' -bench . -benchtime 1x -timeout 10m "${pkgs[@]}"
