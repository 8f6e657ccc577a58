#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Gets per second of the sample key-value store, through the log and served locally behind a
# read barrier (kvstore-cli --local-reads, paxos_node_barrier): three replicas (acceptor,
# proposer and learner each) on loopback, KEYS keys written first, then CLIENTS kvstore-cli
# processes at once, each asking GETS gets, one at a time. ROUNDS rounds (default 3), the two
# modes in turn in each; prints one line per run, then the medians.
# Usage: bench/kvstore-reads.sh BUILD_DIR [ROUNDS]  (in a network namespace: it wraps itself
# with tests/netns-run.sh). CLIENTS (default 4) and GETS (default 2000) from the environment.
set -eu
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	exec "$SRC/tests/netns-run.sh" "$0" "$@"
fi
CLIENTS=${CLIENTS:-4}
GETS=${GETS:-2000}
KEYS=200
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
KV=sample/kvstore
BASE=$(base_conf)
CONF=$WORK/paxos.conf
KCONF=$WORK/kvstore.conf
sed -e "s|^proposers .*|proposers 3|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
	"$BASE" >"$CONF"
local_members "$CONF" || fail "cannot write the member addresses"
cp "$SRC/$KV/kvstore.conf" "$KCONF"
. "$SRC/tests/e2e/kvstore.sh"

for r in 0 1 2; do replica kv$r $r; done
: >"$WORK/puts"
for i in $(seq 1 $KEYS); do printf 'put key%s value%s\n' "$i" "$i" >>"$WORK/puts"; done
cli -f "$WORK/puts" >/dev/null || fail "the puts failed"
for c in $(seq 1 "$CLIENTS"); do
	: >"$WORK/gets$c"
	for i in $(seq 1 "$GETS"); do printf 'get key%s\n' $(((i * c) % KEYS + 1)) >>"$WORK/gets$c"; done
done

now_ms() { date +%s%3N; }
# run MODE: gets/s of CLIENTS clients at once (MODE log: through the log; local: behind a
# barrier on replica 2).
run() {
	extra=
	[ "$1" = local ] && extra="--local-reads 2"
	t0=$(now_ms)
	pids=
	for c in $(seq 1 "$CLIENTS"); do
		# shellcheck disable=SC2086 # extra is one option and its argument, or nothing
		cli $extra -f "$WORK/gets$c" >"$WORK/out$c" 2>"$WORK/err$c" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || fail "a $1 client failed: $(tail -n 2 "$WORK/err"*)"; done
	t1=$(now_ms)
	for c in $(seq 1 "$CLIENTS"); do
		[ "$(grep -c '^OK value' "$WORK/out$c")" -eq "$GETS" ] || fail "a $1 client missed values"
	done
	echo $((CLIENTS * GETS * 1000 / (t1 - t0)))
}

: >"$WORK/log.rates"
: >"$WORK/local.rates"
for round in $(seq 1 "$ROUNDS"); do
	for mode in log local; do
		rate=$(run $mode)
		echo "round $round $mode: $rate gets/s"
		echo "$rate" >>"$WORK/$mode.rates"
	done
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "medians of $ROUNDS rounds, $CLIENTS clients x $GETS gets:" \
	"through the log $(median "$WORK/log.rates") gets/s," \
	"local behind a barrier $(median "$WORK/local.rates") gets/s"
