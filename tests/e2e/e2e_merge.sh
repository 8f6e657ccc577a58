#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Learners merging two partitions (paxos.conf "learner-merge yes") into one total order, on a
# cluster of 3 acceptors and 2 proposers with an auth-key-file, inside a private network
# namespace:
#  1. values on partition 0 alone are delivered although partition 1 is idle (its leader's
#     skips end its segments);
#  2. both partitions under load at once;
#  3. the leader of partition 1 is killed (kill -9): the merged order waits for partition 1
#     until proposer 0 leads it, then goes on;
# and two learners running throughout, and a third started at the end (it learns everything
# from the acceptors, in another rhythm), deliver the same merged sequence, line for line.
# A learner that hosts one partition only is refused with the reason.
# Usage: e2e_merge.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^partitions .*|partitions 2|" -e "s|^learner-merge .*|learner-merge yes|" \
	-e "s|^merge-segment .*|merge-segment 8|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 200|" "$(base_conf)" >"$CONF"
grep -q "^learner-merge yes$" "$CONF" || fail "cannot set learner-merge in paxos.conf"
# With a key: each partition tags its datagrams under a key of its own (lib/net/auth_key.h).
"$BUILD/paxos-keygen" "$WORK/key" >/dev/null
echo "auth-key-file $WORK/key" >>"$CONF"

# A merging learner needs every partition.
if "$BUILD/paxos-learner" -c "$CONF" --partitions 1 -o "$WORK/one.out" >"$WORK/one.log" 2>&1; then
	fail "a merging learner of partition 1 alone started"
fi
grep -q "learner-merge: partition 0 is not hosted here" "$WORK/one.log" ||
	fail "no reason given: $(cat "$WORK/one.log")"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start proposer1 paxos-proposer -c "$CONF" -i 1
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5

lines() { # lines FILE PARTITION: values of that partition in a learner's output
	awk -v p="$2" '$1 == p' "$1" | wc -l
}
settled() { # settled COUNT: wait until both learners wrote COUNT lines (30 s: a loaded
	# learner's file may lag)
	for _ in $(seq 300); do
		[ "$(wc -l <"$WORK/learner0.out")" -ge "$1" ] &&
			[ "$(wc -l <"$WORK/learner1.out")" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "the learners wrote $(wc -l <"$WORK/learner0.out") and $(wc -l <"$WORK/learner1.out") lines, want $1"
}

# 1. Partition 0 alone: partition 1's leader closes its idle instances with skips.
partition_client c0 0 1000
clients_served c0
settled 1000
# Once each while the leaders stay (see leader_moved).
n=$(lines "$WORK/learner0.out" 0)
[ "$n" -eq 1000 ] || { [ "$n" -gt 1000 ] && leader_moved "$WORK"/proposer*.log; } ||
	fail "learner 0 delivered $n values of partition 0, want 1000"
echo "e2e_merge: 1. 1000 values of partition 0 delivered merged while partition 1 was idle"

# 2. Both partitions at once.
partition_client c1 0 2000
partition_client c2 1 2000
clients_served c1 c2
settled 5000
echo "e2e_merge: 2. 2000 values on each partition delivered merged"

# 3. Partition 1's leader dies: the merged order waits for it, then goes on.
kill -9 "$PID_proposer1"
wait "$PID_proposer1" 2>/dev/null || true
partition_client c3 0 500
partition_client c4 1 500
clients_served c3 c4
settled 6000
echo "e2e_merge: 3. after partition 1's leader died, 500 values on each delivered merged"

# A third learner, started now, learns both logs from the acceptors and merges them alike.
start learner2 paxos-learner -c "$CONF" -o "$WORK/learner2.out"
same_order() {
	cmp -s "$WORK/learner0.out" "$WORK/learner1.out" &&
		cmp -s "$WORK/learner0.out" "$WORK/learner2.out"
}
# 60 s: a loaded learner is slow to learn both logs.
eventually 60 same_order || true
total=$(wc -l <"$WORK/learner0.out")
for i in 1 2; do
	cmp -s "$WORK/learner0.out" "$WORK/learner$i.out" ||
		fail "learner $i's merged order differs from learner 0's: $(cmp "$WORK/learner0.out" "$WORK/learner$i.out" 2>&1 | head -n 1)"
done
# The order interleaves the partitions (how often depends on the clients' timing): at least
# partition 0 (phase 1), then 1, then 0 again.
runs=$(awk '{ print $1 }' "$WORK/learner0.out" | uniq | wc -l)
[ "$runs" -ge 3 ] || fail "only $runs runs of one partition in the merged order"
# Counters are printed every 200 ms: the count shows in time.
eventually 30 grep -q "^paxos: counters partition 1 learner.*skips_delivered=[1-9]" \
	"$WORK/learner0.log" || fail "learner 0 counted no skips of partition 1"
skips=$(grep "^paxos: counters partition 1 learner" "$WORK/learner0.log" | tail -n 1 |
	sed -n 's/.*skips_delivered=\([0-9]*\).*/\1/p')
echo "e2e_merge: 3 learners delivered the same merged order of $total values ($runs runs, $skips skips of partition 1 seen by learner 0)"
stop_all
