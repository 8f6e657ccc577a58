#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# CPU time per delivered value of every process, for one or more builds side by side:
# bench/cluster-client.sh (3 acceptors, proposer 0, one client with 64 values outstanding)
# once per build and round, the builds interleaved in each round. Prints one line per run:
# round, size, system:build, values/s, then NAME=us per value for each role process (user +
# system from /proc/PID/stat at the end of the run, over the values delivered) and the
# client's (its getrusage), and the load average. A build given as ser:DIR runs the serializer
# in place of Paxos. Each build runs with the paxos.conf of its source tree (DIR/..), or this
# tree's when there is none.
# Usage: bench/cpu-per-value.sh SIZE COUNT ROUNDS BUILD_DIR...
# Example: bench/cpu-per-value.sh 1000 200000 3 /tmp/base/build build ser:build
set -eu
[ $# -ge 4 ] || {
	echo "usage: bench/cpu-per-value.sh SIZE COUNT ROUNDS BUILD_DIR..." >&2
	exit 2
}
SRC=$(cd "$(dirname "$0")/.." && pwd)
SIZE=$1 COUNT=$2 ROUNDS=$3
shift 3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for arg in "$@"; do
		system=paxos build=$arg
		case $arg in ser:*) system=serializer build=${arg#ser:} ;; esac
		build=$(cd "$build" && pwd)
		conf=$(dirname "$build")/paxos.conf
		[ -f "$conf" ] || conf=$SRC/paxos.conf
		rm -rf "$TMP/logs" && mkdir "$TMP/logs"
		PAXOS_SYSTEM=$system PAXOS_CONF=$conf PAXOS_LOG_DIR=$TMP/logs \
			"$SRC/bench/cluster-client.sh" "$build" --count "$COUNT" --size "$SIZE" \
			--outstanding 64 >"$TMP/out" 2>/dev/null || true
		rate=$(sed -n 's/.*: \([0-9]*\) values\/s$/\1/p' "$TMP/out")
		delivered=$(sed -n 's/^delivered \([0-9]*\) of.*/\1/p' "$TMP/out")
		client=$(sed -n 's/^client cpu \([0-9.]*\) s.*/\1/p' "$TMP/out")
		cpus=$(awk -v d="${delivered:-0}" 'd > 0 { printf "%s=%.2f ", $1, $2 * 1e6 / $3 / d }' \
			"$TMP/logs/cpu.log" 2>/dev/null || true)
		echo "$r $SIZE $system:$(basename "$(dirname "$build")") ${rate:-0} ${cpus}client=$(awk \
			-v c="${client:-0}" -v d="${delivered:-0}" 'BEGIN { printf "%.2f", (d > 0 ? c * 1e6 / d : 0) }') \
load=$(cut -d' ' -f1 /proc/loadavg)"
	done
	r=$((r + 1))
done
