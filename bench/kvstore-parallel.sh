#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Parallel execution in sample/kvstore: the store with 1 and with 2 partitions, i.e. 1 and 2
# execution threads in the replica, each applied put costing about BURN_US microseconds of
# real CPU (kvstore-replica --burn-us: fixed hash rounds, a benchmark aid; the first run
# measures how many, every run burns as many). Cluster: 3
# paxos-acceptor (memory storage) and 1 paxos-proposer, hosting every partition, one
# kvstore-replica (learner only; no snapshots, no trimming), and kvstore-load with CLIENTS
# closed-loop clients (one put in flight each, keys spread over the partitions), for SECONDS;
# all in a private network namespace on this machine, sharing its cores. Rounds interleave
# the two configurations; each figure is the median of ROUNDS.
# Per run: puts answered per second; the replica's CPU (user + system, /proc/PID/stat) per put
# and in cores (CPU seconds per second); its busiest thread's CPU in cores and per put (over
# all puts), and 1e6 / that: the puts/s the replica's execution could sustain with a core per
# thread ("projected"); the CPU per put of the acceptors, proposer and load client together
# ("others"). On a machine with fewer cores than processes, puts/s is bounded by the CPU of
# all of them together, which more execution threads do not lower: the projection is what
# parallel execution buys.
# Writes kvstore-parallel.{csv,md} to bench/results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/kvstore-parallel.sh BUILD_DIR [BURN_US [SECONDS [ROUNDS [CLIENTS [OUT_DIR]]]]]
#        (defaults 20 5 3 256)
set -eu
[ -z "${BENCH_TRACE:-}" ] || set -x
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD_ARG=$(cd "$1" && pwd)
BURN=${2:-20}
SECS=${3:-5}
ROUNDS=${4:-3}
CLIENTS=${5:-256}
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD_ARG" "$BURN" "$SECS" "$ROUNDS" "$CLIENTS" \
		"${6:-}"
fi
. "$SRC/bench/lib.sh"
bench_setup "$BUILD_ARG" "${6:-}"
WORK=$TMP
trap 'stop_all; rm -rf "$TMP"' EXIT
. "$SRC/tests/cluster.sh"
KV=sample/kvstore
for bin in kvstore-replica kvstore-load; do
	[ -x "$BUILD/$KV/$bin" ] || fail "$BUILD/$KV/$bin is not built"
done
HZ=$(getconf CLK_TCK)
KCONF=$CONFIGS/kvstore-parallel-kvstore.conf
sed -e "s|^replicas .*|replicas 1|" -e "s|^snapshot-every .*|snapshot-every 0|" \
	-e "s|^trim .*|trim off|" "$SRC/$KV/kvstore.conf" >"$KCONF"

ticks() { # ticks STAT_FILE: user + system time so far, in clock ticks
	awk '{ print $14 + $15 }' "$1" 2>/dev/null || echo 0
}

# run PARTITIONS ROUND: one run; appends "puts_per_s replica_us_per_put replica_cores
# busiest_thread_cores others_us_per_put busiest_thread_us_per_put projected_puts_per_s" to
# $WORK/p$PARTITIONS
run() {
	conf=$(bench_conf "kvstore-parallel-$1" partitions "$1")
	sed -i -e "s|^storage-path .*|storage-path $WORK/store$1.$2|" "$conf"
	PIDS=""
	for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$conf" -i $i; done
	start proposer0 paxos-proposer -c "$conf" -i 0
	# The first run measures the rounds that take BURN_US here; every run then does as many.
	burn="--burn-us $BURN"
	[ -z "${ROUNDS_PER_PUT:-}" ] || burn="--burn-rounds $ROUNDS_PER_PUT"
	# shellcheck disable=SC2086
	start replica $KV/kvstore-replica -c "$conf" -k "$KCONF" -i 0 -d "$WORK/r$1.$2" $burn
	sleep 1
	if [ -z "${ROUNDS_PER_PUT:-}" ]; then
		ROUNDS_PER_PUT=$(sed -n 's/.*--burn-us .*: \([0-9]*\) hash rounds.*/\1/p' \
			"$WORK/replica.log")
		[ -n "$ROUNDS_PER_PUT" ] || fail "the replica did not say how many rounds it burns"
	fi
	r0=$(ticks "/proc/$PID_replica/stat")
	for t in /proc/"$PID_replica"/task/*; do
		echo "$(basename "$t") $(ticks "$t/stat")"
	done >"$WORK/threads0"
	o0=0
	for name in acceptor0 acceptor1 acceptor2 proposer0; do
		eval "pid=\$PID_$name"
		o0=$((o0 + $(ticks "/proc/$pid/stat")))
	done
	"$BUILD/$KV/kvstore-load" -c "$conf" -k "$KCONF" --clients "$CLIENTS" --seconds "$SECS" \
		>"$WORK/load.out" 2>"$WORK/load.err" &
	load=$!
	# The load client's CPU, just before it ends; everything else's right after.
	sleep "$SECS"
	lt=$(ticks "/proc/$load/stat")
	wait "$load" || fail "kvstore-load failed: $(tail -n 3 "$WORK/load.err")"
	r1=$(ticks "/proc/$PID_replica/stat")
	busiest=0
	for t in /proc/"$PID_replica"/task/*; do
		before=$(awk -v t="$(basename "$t")" '$1 == t { print $2 }' "$WORK/threads0")
		d=$(($(ticks "$t/stat") - ${before:-0}))
		[ "$d" -gt "$busiest" ] && busiest=$d
	done
	o1=0
	for name in acceptor0 acceptor1 acceptor2 proposer0; do
		eval "pid=\$PID_$name"
		o1=$((o1 + $(ticks "/proc/$pid/stat")))
	done
	stop_all
	cat "$WORK/load.out" >>"$WORK/loads$1"
	puts=$(sed -n 's/.* puts \([0-9]*\) .*/\1/p' "$WORK/load.out")
	secs=$(sed -n 's/.* seconds \([0-9.]*\) .*/\1/p' "$WORK/load.out")
	[ "${puts:-0}" -gt 0 ] || fail "no put answered with $1 partitions"
	awk -v p="$puts" -v s="$secs" -v r=$((r1 - r0)) -v b="$busiest" -v o=$((o1 - o0 + lt)) \
		-v hz="$HZ" 'BEGIN { us = 1e6 / hz / p
		printf "%.0f %.2f %.2f %.2f %.2f %.2f %.0f\n", p / s, r * us, r / hz / s, b / hz / s,
			o * us, b * us, (b > 0 ? 1e6 / (b * us) : 0) }' \
		>>"$WORK/p$1"
	echo "partitions $1 round $2: $(tail -n 1 "$WORK/p$1")" >&2
}

median() { # median FILE COLUMN
	awk -v c="$2" '{ print $c }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
round=1
while [ $round -le "$ROUNDS" ]; do
	run 1 $round
	run 2 $round
	round=$((round + 1))
done
CSV=$OUT/kvstore-parallel.csv
echo "partitions,burn_us,burn_rounds,clients,puts_per_s,replica_us_per_put,replica_cores,busiest_thread_cores,busiest_thread_us_per_put,projected_puts_per_s,others_us_per_put" >"$CSV"
for p in 1 2; do
	echo "$p,$BURN,$ROUNDS_PER_PUT,$CLIENTS,$(median "$WORK/p$p" 1),$(median "$WORK/p$p" 2),$(median "$WORK/p$p" 3),$(median "$WORK/p$p" 4),$(median "$WORK/p$p" 6),$(median "$WORK/p$p" 7),$(median "$WORK/p$p" 5)" >>"$CSV"
done
speedup=$(awk -F, 'NR == 2 { one = $5 } NR == 3 { two = $5 } END { printf "%.2f", two / one }' "$CSV")
projected=$(awk -F, 'NR == 2 { one = $10 } NR == 3 { two = $10 } END { printf "%.2f", two / one }' "$CSV")
{
	bench_md "$CSV"
	echo
	echo "kvstore with 1 and 2 partitions (execution threads in the replica); every applied put"
	echo "burns about $BURN us of CPU (kvstore-replica --burn-us). 3 acceptors (memory), 1"
	echo "proposer, 1 replica, kvstore-load with $CLIENTS closed-loop clients, $SECS s per run,"
	echo "medians of $ROUNDS interleaved rounds, $(nproc) cores shared by every process."
	echo "Load average (1, 5, 15 min) before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "2 partitions / 1 partition: ${speedup}x puts/s measured, ${projected}x projected (a core per"
	echo "execution thread)."
	echo "Configurations: configs/kvstore-parallel-*.conf."
} >"$OUT/kvstore-parallel.md"
cat "$OUT/kvstore-parallel.md"
