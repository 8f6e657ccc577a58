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
# Then, per configuration, catching up: kvstore-load writes through a replica that burns
# nothing, and a fresh replica with the same burn learns and applies that whole log while the
# cluster is idle: its execution threads set the pace (commands/s, CPU per command).
# The acceptors and proposer start with "proposers 1", so no acceptor waits for a second one.
# Writes kvstore-parallel.{csv,md} and kvstore-parallel-catchup.csv to
# BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT). BENCH_DEBUG=1 prints the
# catching-up replica's log.
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
. "$SRC/tests/e2e/cluster.sh"
KV=sample/kvstore
for bin in kvstore-replica kvstore-load; do
	[ -x "$BUILD/$KV/$bin" ] || fail "$BUILD/$KV/$bin is not built"
done
HZ=$(getconf CLK_TCK)
# Not *.conf: run-all compares every configs/*.conf with paxos.conf.
KCONF=$CONFIGS/kvstore-parallel.kvconf
sed -e "s|^replicas .*|replicas 2|" -e "s|^snapshot-every .*|snapshot-every 0|" \
	-e "s|^trim .*|trim off|" "$SRC/$KV/kvstore.conf" >"$KCONF"

ticks() { # ticks STAT_FILE: user + system time so far, in clock ticks
	awk '{ print $14 + $15 }' "$1" 2>/dev/null || echo 0
}

# run PARTITIONS ROUND: one run; appends "puts_per_s replica_us_per_put replica_cores
# busiest_thread_cores others_us_per_put busiest_thread_us_per_put projected_puts_per_s" to
# $WORK/p$PARTITIONS
run() {
	conf=$(bench_conf "kvstore-parallel-$1" partitions "$1" proposers 1)
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

# commands_in DIR: the commands applied by every partition of the replica with that
# directory, from its dumps (0 until every partition wrote one)
commands_in() {
	n=0
	for d in "$1" "$1"/partition-*; do
		[ -d "$d" ] || continue
		c=$(sed -n 's/^commands //p' "$d/dump" 2>/dev/null || true)
		[ -n "$c" ] || { echo 0; return; }
		n=$((n + c))
	done
	echo "$n"
}

# catchup PARTITIONS ROUND: kvstore-load writes through a replica that burns nothing; then a
# fresh replica learns the whole log and applies it, burning as in run(): nothing else is
# busy, so its execution threads set the pace. Appends "commands_per_s replica_us_per_command
# busiest_thread_cores" to $WORK/c$PARTITIONS.
catchup() {
	conf=$(bench_conf "kvstore-parallel-$1" partitions "$1" proposers 1)
	sed -i -e "s|^storage-path .*|storage-path $WORK/cstore$1.$2|" "$conf"
	PIDS=""
	for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$conf" -i $i; done
	start proposer0 paxos-proposer -c "$conf" -i 0
	start writer $KV/kvstore-replica -c "$conf" -k "$KCONF" -i 0 -d "$WORK/w$1.$2"
	sleep 1
	"$BUILD/$KV/kvstore-load" -c "$conf" -k "$KCONF" --clients "$CLIENTS" --seconds "$SECS" \
		>"$WORK/load.out" 2>"$WORK/load.err" || fail "kvstore-load failed: $(tail -n 3 "$WORK/load.err")"
	sleep 0.5
	kill -USR1 "$PID_writer"
	sleep 0.5
	total=$(commands_in "$WORK/w$1.$2")
	[ "$total" -gt 0 ] || fail "the writing replica applied nothing"
	t0=$(date +%s.%N)
	start reader $KV/kvstore-replica -c "$conf" -k "$KCONF" -i 1 -d "$WORK/c$1.$2" \
		--burn-rounds "$ROUNDS_PER_PUT"
	# Its first line comes once SIGUSR1 asks for dumps rather than killing it.
	wait_lines "$WORK/reader.log" 1 10 || fail "the fresh replica did not start"
	i=0
	while :; do
		sleep 0.05
		rm -f "$WORK/c$1.$2/dump" "$WORK/c$1.$2"/partition-*/dump
		kill -USR1 "$PID_reader"
		sleep 0.05
		[ "$(commands_in "$WORK/c$1.$2")" -lt "$total" ] || break
		i=$((i + 1))
		[ $i -lt 2400 ] || fail "the fresh replica did not catch up on $total commands"
	done
	t1=$(date +%s.%N)
	r=$(ticks "/proc/$PID_reader/stat")
	busiest=0
	for t in /proc/"$PID_reader"/task/*; do
		d=$(ticks "$t/stat")
		[ "$d" -gt "$busiest" ] && busiest=$d
	done
	stop_all
	awk -v n="$total" -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v r="$r" \
		-v b="$busiest" -v hz="$HZ" \
		'BEGIN { printf "%.0f %.2f %.2f %d\n", n / t, r * 1e6 / hz / n, b / hz / t, n }' >>"$WORK/c$1"
	echo "catch-up, partitions $1 round $2: $(tail -n 1 "$WORK/c$1")" >&2
	[ -z "${BENCH_DEBUG:-}" ] || cat "$WORK/reader.log" >&2
}

median() { # median FILE COLUMN
	awk -v c="$2" '{ print $c }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
round=1
while [ $round -le "$ROUNDS" ]; do
	run 1 $round
	run 2 $round
	catchup 1 $round
	catchup 2 $round
	round=$((round + 1))
done
CSV=$OUT/kvstore-parallel.csv
echo "partitions,burn_us,burn_rounds,clients,puts_per_s,replica_us_per_put,replica_cores,busiest_thread_cores,busiest_thread_us_per_put,projected_puts_per_s,others_us_per_put" >"$CSV"
for p in 1 2; do
	echo "$p,$BURN,$ROUNDS_PER_PUT,$CLIENTS,$(median "$WORK/p$p" 1),$(median "$WORK/p$p" 2),$(median "$WORK/p$p" 3),$(median "$WORK/p$p" 4),$(median "$WORK/p$p" 6),$(median "$WORK/p$p" 7),$(median "$WORK/p$p" 5)" >>"$CSV"
done
speedup=$(awk -F, 'NR == 2 { one = $5 } NR == 3 { two = $5 } END { printf "%.2f", two / one }' "$CSV")
CATCHUP=$OUT/kvstore-parallel-catchup.csv
echo "partitions,burn_us,burn_rounds,commands,commands_per_s,replica_us_per_command,busiest_thread_cores" >"$CATCHUP"
for p in 1 2; do
	echo "$p,$BURN,$ROUNDS_PER_PUT,$(median "$WORK/c$p" 4),$(median "$WORK/c$p" 1),$(median "$WORK/c$p" 2),$(median "$WORK/c$p" 3)" >>"$CATCHUP"
done
catchup_speedup=$(awk -F, 'NR == 2 { one = $5 } NR == 3 { two = $5 } END { printf "%.2f", two / one }' "$CATCHUP")
projected=$(awk -F, 'NR == 2 { one = $10 } NR == 3 { two = $10 } END { printf "%.2f", two / one }' "$CSV")
{
	bench_md "$CSV"
	echo
	echo "kvstore with 1 and 2 partitions (execution threads in the replica); every applied put"
	echo "burns about $BURN us of CPU (kvstore-replica --burn-us). 3 acceptors (memory), 1"
	echo "proposer (proposers 1), 1 replica, kvstore-load with $CLIENTS closed-loop clients, $SECS s per run,"
	echo "medians of $ROUNDS interleaved rounds, $(nproc) cores shared by every process."
	echo "Load average (1, 5, 15 min) before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "2 partitions / 1 partition: ${speedup}x puts/s measured, ${projected}x projected (a core per"
	echo "execution thread)."
	echo
	echo "Catching up: a fresh replica (the same burn) learns and applies the log kvstore-load"
	echo "wrote through a replica that burned nothing; the rest of the cluster is idle meanwhile."
	echo "Time from its start until its dumps count every command (polled every 0.1 s)."
	echo
	bench_md "$CATCHUP"
	echo
	echo "2 partitions / 1 partition, catching up: ${catchup_speedup}x commands/s."
	echo "Configurations: configs/kvstore-parallel-*.conf and configs/kvstore-parallel.kvconf."
} >"$OUT/kvstore-parallel.md"
cat "$OUT/kvstore-parallel.md"
