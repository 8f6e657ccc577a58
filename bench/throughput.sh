#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Measured side by side: Paxos (3 acceptors, 1 proposer, 1 client) and the
# serializer under one client, for each workload, ROUNDS rounds (default 3) interleaved (every
# system runs once per round, in turn), then medians. With BASE_BUILD=DIR, the Paxos of another
# build (e.g. the previous release) runs too, in the same rounds, from BASE_CONF (default this
# tree's paxos.conf; give the base's own when it lacks keys of this one). For each run it also sums
# bytes_received over every process (client included) and divides by the values delivered,
# and takes each process's CPU time while the client ran (user + system, from
# /proc/PID/task/*/sched to the nanosecond, see cluster-client.sh; the client's from getrusage,
# its whole life) per delivered value: "busiest" is the largest among the role
# processes (acceptors and proposer, or the serializer), "all" the sum over every process
# with the client, and 1 / busiest the rate one host per process could reach ("projected").
# ONLY=WORKLOAD runs that workload alone. KEEP_LOGS=DIR keeps each run's logs, cpu.log (each
# process's CPU) among them.
# Usage: bench/throughput.sh BUILD_DIR [ROUNDS]
# Prints one line per run, then a table of medians (values/s, p50, p99, bytes/value).
set -eu
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# name count size outstanding
WORKLOADS="64B-k64 500000 64 64
1000B-k64 200000 1000 64
64B-k1 5000 64 1"
[ -z "${ONLY:-}" ] || WORKLOADS=$(echo "$WORKLOADS" | grep "^$ONLY ")
SYSTEMS="paxos serializer"
[ -z "${BASE_BUILD:-}" ] || SYSTEMS="base $SYSTEMS"

# run SYSTEM COUNT SIZE K: prints "values/s p50 p99 bytes/value busiest_us all_us projected"
run() {
	build=$BUILD system=$1 conf=$SRC/paxos.conf
	[ "$1" = base ] && build=$(cd "$BASE_BUILD" && pwd) system=paxos conf=${BASE_CONF:-$conf}
	rm -rf "$TMP/logs" && mkdir "$TMP/logs"
	# A client without --counters (an older build) counts without its own bytes.
	extra=--counters
	"$build/paxos-client" --help 2>&1 | grep -q -- --counters || extra=
	PAXOS_CONF=$conf PAXOS_SYSTEM=$system PAXOS_LOG_DIR=$TMP/logs \
		"$SRC/bench/cluster-client.sh" "$build" \
		--count "$2" --size "$3" --outstanding "$4" $extra >"$TMP/out" 2>"$TMP/err" || true
	rate=$(sed -n 's/.*: \([0-9]*\) values\/s$/\1/p' "$TMP/out")
	p50=$(sed -n 's/.* p50 \([0-9.]*\) .*/\1/p' "$TMP/out")
	p99=$(sed -n 's/.* p99 \([0-9.]*\) .*/\1/p' "$TMP/out")
	delivered=$(sed -n 's/^delivered \([0-9]*\) of.*/\1/p' "$TMP/out")
	# The last transport line of each process, the client's from its stderr.
	bytes=$(for f in "$TMP"/logs/*.log "$TMP/err"; do
		grep "counters transport:" "$f" | tail -n 1
	done | sed -n 's/.*bytes_received=\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	client_cpu=$(sed -n 's/^client cpu \([0-9.]*\) s.*/\1/p' "$TMP/out")
	# KEEP_LOGS=DIR: each run's process logs and cpu.log in DIR/ROUND-WORKLOAD-SYSTEM.
	if [ -n "${KEEP_LOGS:-}" ]; then
		mkdir -p "$KEEP_LOGS/$r-$name-$1" && cp "$TMP"/logs/* "$TMP/out" "$KEEP_LOGS/$r-$name-$1/"
	fi
	cpu=$(awk -v d="${delivered:-0}" -v c="${client_cpu:-0}" '
		{ us = $2 * 1e6 / $3; all += us; if (us > busiest) busiest = us }
		END { if (d == 0) { print "0 0 0"; exit }
			all += c * 1e6
			printf "%.3f %.3f %.0f", busiest / d, all / d, (busiest > 0 ? d * 1e6 / busiest : 0) }' \
		"$TMP/logs/cpu.log" 2>/dev/null || echo "0 0 0")
	echo "${rate:-0} ${p50:-0} ${p99:-0} $(awk -v b="$bytes" -v d="${delivered:-0}" \
		'BEGIN { printf "%.0f", (d > 0 ? b / d : 0) }') $cpu"
}

echo "round workload system values/s p50_ms p99_ms bytes_received/value busiest_us/value all_us/value projected_values/s"
r=1
while [ $r -le "$ROUNDS" ]; do
	echo "$WORKLOADS" | while read -r name count size k; do
		for system in $SYSTEMS; do
			echo "$r $name $system $(run "$system" "$count" "$size" "$k")"
		done
	done
	r=$((r + 1))
done | tee "$TMP/runs"

echo
echo "medians of $ROUNDS rounds ($(nproc) cores, $(uname -r)):"
echo "| workload | system | values/s | p50 ms | p99 ms | bytes received/value | busiest us/value | all us/value | projected values/s |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
echo "$WORKLOADS" | while read -r name count size k; do
	for system in $SYSTEMS; do
		line="| $name | $system |"
		for col in 4 5 6 7 8 9 10; do
			m=$(awk -v n="$name" -v s="$system" -v c=$col '$2 == n && $3 == s { print $c }' \
				"$TMP/runs" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
			line="$line $m |"
		done
		echo "$line"
	done
done
