#!/usr/bin/env bash
# Interleaved benchmark rounds for noisy machines: every round runs each
# named sub-benchmark once, in its own process, reversing the order on even
# rounds so drift in machine load falls on every side alike.
#
#   go test -c -o /tmp/bench.test . && ./interleave.sh /tmp/out.txt 8 'BenchmarkA/x' 'BenchmarkA/y'
set -euo pipefail
out=$1 rounds=$2
shift 2
: >"$out"
for round in $(seq 1 "$rounds"); do
	list=("$@")
	if ((round % 2 == 0)); then
		list=()
		for ((i = $#; i > 0; i--)); do list+=("${!i}"); done
	fi
	for b in "${list[@]}"; do
		SHARDKEY_REQUIRE_DB=1 /tmp/bench.test -test.run '^$' -test.bench "^${b}\$" -test.benchmem -test.count 1 -test.benchtime "${BENCHTIME:-1s}" |
			grep -E '^Benchmark' >>"$out"
	done
done
