#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A rolling restart must complete (inside a private network namespace, memory storage):
# 30,000 values at 3,000/s, then acceptors 0, 1 and 2 in turn are killed (kill -9), restarted
# and given until they recovered, as an operator would (it answers for its own state only once
# it holds one; 30 s at most), and
# a client that starts afterwards must get its 1,000 values delivered. It used to get none:
# its learner started at an old instance that another learner's repeat had named, below what
# any acceptor still held, and waited there for good. The learner that ran throughout must
# deliver consecutive instances, and say nothing is missing.
# Usage: e2e_rolling_restart.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$(base_conf)" >"$CONF"
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
start learner0 paxos-learner -c "$CONF" -o "$WORK/learner0.out"
sleep 0.3
"$BUILD/paxos-client" -c "$CONF" --count 30000 --rate 3000 --size 16 --time-limit 120 \
	>"$WORK/client1.log" 2>&1 || fail "the first client did not deliver its 30,000 values"

forget() { PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' '); }
for i in 0 1 2; do
	eval "pid=\$PID_acceptor$i"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	forget "$pid"
	start acceptor${i}b paxos-acceptor -c "$CONF" -i $i
	eventually 30 grep -q "acceptor $i: recovered: votes again above instance" \
		"$WORK/acceptor${i}b.log" || fail "acceptor $i did not recover"
done
"$BUILD/paxos-client" -c "$CONF" --count 1000 --outstanding 16 --size 16 --time-limit 30 \
	>"$WORK/client2.log" 2>&1 ||
	fail "the client after the rolling restart: $(grep -m1 delivered "$WORK/client2.log")"
for i in 0 1 2; do
	grep -h "recovered:" "$WORK/acceptor${i}b.log" | sed 's/^/e2e_rolling_restart: /'
done
# The learner's file is flushed every 100 ms (60 s: later on a busy machine).
wait_lines "$WORK/learner0.out" 31000 60 || true
stop_all
consecutive "$WORK/learner0.out" || fail "the learner that ran throughout skipped an instance"
[ "$(wc -l <"$WORK/learner0.out")" -ge 31000 ] ||
	fail "the learner that ran throughout delivered $(wc -l <"$WORK/learner0.out") values"
echo "e2e_rolling_restart: $(grep -m1 delivered "$WORK/client2.log")"
