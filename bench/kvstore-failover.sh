#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# How long a kvstore put waits when its partition's leader dies. 2 partitions, 3 acceptors,
# proposers 0 and 1 (paxos-proposer: each leads one partition and follows the other lean, so
# it never reads the puts submitted there), one kvstore replica (a learner), and kvstore-load
# with CLIENTS closed-loop clients (default 20) for 6 s, inside a private network namespace.
# At 2.5 s proposer 1, the leader of partition 1, is killed (kill -9). Prints per partition
# kvstore-load's slowest put, its puts held back (a full leader or session window) and sent
# later (resubmits) and those sent again on a replica's new-leader notice (told), medians of
# ROUNDS (default 3) rounds on fresh processes.
# BASE_BUILD=DIR runs each round a second time with that build's replica, interleaved (the
# load client is always BUILD's: it times the puts), to compare before and after a change.
# HEARTBEAT_TIMEOUT_MS (default 100) and HEARTBEAT_INTERVAL_MS (20) replace paxos.conf's.
# Writes BUILD_DIR/bench-results/<date>/kvstore-failover.md (OUT_DIR to change it).
# Usage: bench/kvstore-failover.sh BUILD_DIR [OUT_DIR]
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
KV=sample/kvstore
BASE=${BASE_BUILD:+$(cd "$BASE_BUILD" && pwd)}
for b in "$BUILD" ${BASE:+"$BASE"}; do
	[ -x "$b/$KV/kvstore-replica" ] || fail "$b/$KV/kvstore-replica is not built"
done
CLIENTS=${CLIENTS:-20}
CONF=$WORK/paxos.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" -e "s|^partitions .*|partitions 2|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
	-e "s|^heartbeat-timeout-ms .*|heartbeat-timeout-ms ${HEARTBEAT_TIMEOUT_MS:-100}|" \
	-e "s|^heartbeat-interval-ms .*|heartbeat-interval-ms ${HEARTBEAT_INTERVAL_MS:-20}|" \
	"$(base_conf)" >"$CONF"
KCONF=$WORK/kvstore.conf
sed -e "s|^snapshot-every .*|snapshot-every 0|" -e "s|^trim .*|trim off|" \
	"$SRC/$KV/kvstore.conf" >"$KCONF"
resubmit_ms=$(awk '$1 == "resubmit-ms" { print $2 }' "$KCONF")
timeout_ms=$(awk '$1 == "heartbeat-timeout-ms" { print $2 }' "$CONF")

# field NAME: that field of kvstore-load's line
field() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p" "$WORK/load.out"; }

# round R WHICH REPLICA_BUILD: one run on fresh processes; appends "slowest0 slowest1
# resubmits told" to $WORK/WHICH.
round() {
	rm -rf "$WORK/store" "$WORK/replica"
	PIDS=""
	for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
	for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
	saved=$BUILD
	BUILD=$3
	start replica $KV/kvstore-replica -c "$CONF" -k "$KCONF" -i 0 -d "$WORK/replica"
	BUILD=$saved
	sleep 1
	"$BUILD/$KV/kvstore-load" -c "$CONF" -k "$KCONF" --clients "$CLIENTS" --seconds 6 \
		>"$WORK/load.out" 2>"$WORK/load.err" &
	load=$!
	sleep 2.5
	kill -9 "$PID_proposer1"
	wait "$PID_proposer1" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_proposer1" | tr '\n' ' ')
	wait "$load" || fail "kvstore-load failed: $(tail -n 3 "$WORK/load.err")"
	stop_all
	grep -q "partition 1: leader is now 0" "$WORK/proposer0.log" ||
		fail "proposer 0 did not take partition 1 over"
	echo "$(field slowest_ms0) $(field slowest_ms1) $(field resubmits) $(field told)" \
		>>"$WORK/$2"
	echo "round $1 $2: $(tail -n 1 "$WORK/$2") ($(cat "$WORK/load.out"))" >&2
}

ROUNDS=${ROUNDS:-3}
: >"$WORK/after"
: >"$WORK/before"
for r in $(seq "$ROUNDS"); do
	[ -z "$BASE" ] || round "$r" before "$BASE"
	round "$r" after "$BUILD"
done
# median FILE COLUMN
median() { awk -v c="$2" '{ print $c }' "$WORK/$1" | sort -n |
	awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
row() { echo "| $2 | $(median "$1" 1) | $(median "$1" 2) | $(median "$1" 3) | $(median "$1" 4) |"; }
MD=$OUT/kvstore-failover.md
{
	echo "| replica | partition 0: slowest put, ms | partition 1 (leader killed): slowest put, ms | puts submitted again after resubmit-ms | puts submitted again on a notice |"
	echo "| --- | --- | --- | --- | --- |"
	[ -z "$BASE" ] || row before "before ($BASE)"
	row after "after ($BUILD)"
	echo
	echo "Medians of $ROUNDS rounds; $CLIENTS clients, resubmit-ms $resubmit_ms," \
		"heartbeat-timeout-ms $timeout_ms; $(nproc) cores, load average" \
		"$(cut -d' ' -f1-3 /proc/loadavg) at the end. Each round (slowest put of partition" \
		"0 and 1 in ms, resubmits, told):"
	echo
	for w in before after; do
		[ -s "$WORK/$w" ] && sed "s/^/    $w: /" "$WORK/$w"
	done
} >"$MD"
cat "$MD"
