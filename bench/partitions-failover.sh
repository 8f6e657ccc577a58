#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A partition whose leader dies must not stall the others: 2 partitions (learner-merge yes),
# 3 acceptors, proposers 0 and 1 each leading one, a client per partition (10 values of 500 B
# outstanding, resubmitting after 3 s), inside a private network namespace. paxos-monitor
# times deliveries per 100 ms three times over: partition 0 alone, partition 1 alone, and the
# merged order of both. At 3 s proposer 1, the leader of partition 1, is killed (kill -9).
# Prints, per monitor, the longest pause between two deliveries before the crash (baseline)
# and within 1 s after it, medians of ROUNDS (default 3) runs on fresh processes. Expected:
# partition 0 as before, partition 1 and the merged order about heartbeat-timeout-ms (the
# merged order waits for partition 1's segments). Instances flow on while values wait (an
# idle leader closes instances with skips), so the clients' longest latency per partition is
# printed too: the values that waited on the dead leader go again when the client sees the
# new one (docs/operating.md, "Lean followers"), about heartbeat-timeout-ms, not after
# --resubmit-ms.
# Writes BUILD_DIR/bench-results/<date>/partitions-failover.md (OUT_DIR to change it).
# Usage: bench/partitions-failover.sh BUILD_DIR [OUT_DIR]
# PAXOS_TRANSPORT=unicast runs it on the unicast transport (tests/e2e/cluster.sh base_conf).
# HEARTBEAT_TIMEOUT_MS and HEARTBEAT_INTERVAL_MS replace paxos.conf's: the pause of the killed
# leader's partition is about the detector's timeout plus a phase 1 and 2, so a faster
# detector (at the price of false suspicions on a loaded machine) shortens it.
set -eu
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${2:-$BUILD/bench-results/$(date +%Y-%m-%d)}
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	mkdir -p "$OUT"
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD" "$(cd "$OUT" && pwd)"
fi
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=$WORK/paxos.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" -e "s|^partitions .*|partitions 2|" \
	-e "s|^learner-merge .*|learner-merge yes|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
	-e "s|^heartbeat-timeout-ms .*|heartbeat-timeout-ms ${HEARTBEAT_TIMEOUT_MS:-100}|" \
	-e "s|^heartbeat-interval-ms .*|heartbeat-interval-ms ${HEARTBEAT_INTERVAL_MS:-20}|" \
	"$(base_conf)" >"$CONF"
timeout_ms=$(awk '$1 == "heartbeat-timeout-ms" { print $2 }' "$CONF")
interval_ms=$(awk '$1 == "heartbeat-interval-ms" { print $2 }' "$CONF")
phase_ms=$(awk '$1 == "phase1-timeout-ms" { a = $2 } $1 == "phase2-timeout-ms" { b = $2 }
	END { print a "/" b }' "$CONF")
skip_ms=$(awk '$1 == "merge-skip-ms" { print $2 }' "$CONF")

# pauses CSV AT: the longest pause from 0.7 s to the crash, and in the second after it
pauses() {
	awk -F, -v at="$1" 'NR > 1 { t = $1 + 0; p = $6 + 0
		if (t > 0.7 && t <= at - 0.1 && p > base) base = p
		if (t > at - 0.1 && t <= at + 1.0 && p > after) after = p }
		END { printf "%.1f %.1f", base, after }' "$2"
}

# latency CLIENT max|p99: that latency (ms) of the client's values, from its report
latency() { sed -n "s/^latency ms: .* $2 \([0-9.]*\) .*/\1/p" "$WORK/$1.log" | grep . || echo -; }

# round R: one run on fresh processes; appends "R AT m0 m1 merged" pauses to $WORK/rounds.
round() {
	rm -rf "$WORK/store" "$WORK"/*.csv
	PIDS=""
	for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
	for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
	sleep 0.5
	T0=$(date +%s.%N)
	start monitor0 paxos-monitor -c "$CONF" --partition 0 --interval-ms 100 --csv "$WORK/m0.csv"
	start monitor1 paxos-monitor -c "$CONF" --partition 1 --interval-ms 100 --csv "$WORK/m1.csv"
	start merged paxos-monitor -c "$CONF" --interval-ms 100 --csv "$WORK/merged.csv"
	# Real-time priority where allowed (root), as in bench/reconfig.sh: on 2 cores shared by
	# ten processes a monitor otherwise records its own waits for a CPU as pauses of the
	# cluster's deliveries. MONITOR_RT=0 runs them as any process.
	if [ "${MONITOR_RT:-1}" != 0 ]; then
		for m in "$PID_monitor0" "$PID_monitor1" "$PID_merged"; do
			chrt -f -p 1 "$m" 2>/dev/null || true
		done
	fi
	for p in 0 1; do
		start client$p paxos-client -c "$CONF" --partition $p --count 100000000 --outstanding 10 \
			--size 500 --resubmit-ms 3000 --time-limit 7
	done
	sleep 3
	kill -9 "$PID_proposer1"
	AT=$(awk -v t0="$T0" -v now="$(date +%s.%N)" 'BEGIN { printf "%.3f", now - t0 }')
	wait "$PID_proposer1" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_proposer1" | tr '\n' ' ')
	# The clients end at their time limit, with their reports (a signal could cut one).
	wait "$PID_client0" "$PID_client1" || true
	stop_all
	grep -q "partition 1: leader is now 0" "$WORK/proposer0.log" ||
		fail "proposer 0 did not take partition 1 over"
	echo "$1 $AT $(pauses "$AT" "$WORK/m0.csv") $(pauses "$AT" "$WORK/m1.csv")" \
		"$(pauses "$AT" "$WORK/merged.csv") $(latency client0 max)" \
		"$(latency client1 max) $(latency client0 p99)" >>"$WORK/rounds"
}

ROUNDS=${ROUNDS:-3}
for r in $(seq "$ROUNDS"); do round "$r"; done
# median COLUMN: the median over the rounds of that column of $WORK/rounds
median() { awk -v c="$1" '{ print $c }' "$WORK/rounds" | sort -n |
	awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
MD=$OUT/partitions-failover.md
{
	echo "| monitor | longest pause before, ms | longest pause in the second after, ms |"
	echo "| --- | --- | --- |"
	echo "| partition 0 (its leader lives) | $(median 3) | $(median 4) |"
	echo "| partition 1 (its leader killed) | $(median 5) | $(median 6) |"
	echo "| merged order of both | $(median 7) | $(median 8) |"
	echo
	echo "Longest latency of a client value (ms, over the run): partition 0 $(median 9)," \
		"partition 1 $(median 10) (clients resubmit after 3000 ms). Partition 0's p99" \
		"latency $(median 11) ms: the target is a longest pause after the crash" \
		"below twice that."
	echo
	echo "Medians of $ROUNDS rounds; heartbeat-timeout-ms $timeout_ms (interval $interval_ms)," \
		"phase timeouts $phase_ms ms, merge-skip-ms $skip_ms;" \
		"$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end. Each round:" \
		"round, crash at (s), then before and after (ms) for partition 0, partition 1, merged," \
		"then the longest latency (ms) of partition 0's and partition 1's client, and partition" \
		"0's p99 latency (ms):"
	echo
	sed 's/^/    /' "$WORK/rounds"
} >"$MD"
cat "$MD"
