#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Leader election and failover over real multicast, or unicast with PAXOS_TRANSPORT=unicast
# (inside a private network namespace): 3 acceptors, 2 proposers, 2 learners, and a client
# under load that resubmits values not delivered within 200 ms.
#  (b) the oracle moves the leadership to proposer 1, then back to election (proposer 0);
#  (a) proposer 0, the leader, is killed with SIGKILL: proposer 1 must take over.
# One client runs through all of it and must get every value delivered; both learners'
# outputs must be identical and hold every submitted value (a leader change may deliver a
# value twice). Then, on a fresh cluster,
#  (c) both proposers are configured to lead (manual election, each its own `leader`), as a
#      partition could make them believe: outputs must still be identical.
# Usage: e2e_failover.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=100000
CONF=$(base_conf)

start_cluster() { # start_cluster PROPOSER0_CONF PROPOSER1_CONF: a new cluster
	# Proposers that ran before (their epoch files) would tell the memory acceptors, rightly,
	# that a cluster ran whose state they lost: a new cluster starts without them.
	rm -rf "$WORK"/*.out "$WORK/store"
	for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
	start proposer0 paxos-proposer -c "$1" -i 0
	start proposer1 paxos-proposer -c "$2" -i 1
	for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
	sleep 0.5
}

# check_learners COUNT WHAT: both learners converged on identical outputs holding every value
# in $WORK/submitted (see converged in tests/e2e/cluster.sh).
check_learners() {
	converged "$1" "$WORK/submitted" "$WORK/learner0.out" "$WORK/learner1.out"
	echo "e2e_failover: $2: $1 values delivered identically by 2 learners" \
		"($((LINES - $1)) delivered twice)"
}

start_cluster "$CONF" "$CONF"
# One client keeps the cluster loaded through every change, until drained after the last.
# The changes are triggered by its progress (COUNT the scale of its steps): it logs a new
# value each time one of its values is delivered (learners' files may lag far behind on a
# busy machine).
: >"$WORK/submitted"
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --outstanding 8 --size 16 \
	--resubmit-ms 200 --time-limit 120 --log "$WORK/submitted"
progress() { # progress FRACTION_NUM FRACTION_DEN WHAT
	wait_lines "$WORK/submitted" $((COUNT * $1 / $2)) 30 || fail "no progress $3"
}

# (b) forced change to proposer 1 and back to election (proposer 0)
progress 1 5 "before the forced change"
"$BUILD/paxos-oracle" -c "$CONF" --leader 1 || fail "paxos-oracle --leader 1 failed"
eventually 30 grep -q "proposer 1: leader is now 1 (was 0)" "$WORK/proposer1.log" ||
	fail "proposer 1 did not log its forced leadership"
progress 2 5 "under proposer 1"
"$BUILD/paxos-oracle" -c "$CONF" --auto || fail "paxos-oracle --auto failed"
eventually 30 grep -q "proposer 0: leader is now 0 (was 1)" "$WORK/proposer0.log" ||
	fail "proposer 0 did not get the leadership back"
progress 3 5 "after returning to election"

# (a) the leader crashes. Counted from here: on a loaded machine a late heartbeat may already
# have made proposer 1 lead for a moment (and give it back) before.
took_over=$(grep -c "proposer 1: leader is now 1 (was 0)" "$WORK/proposer1.log" || true)
kill -9 "$PID_proposer0"
wait "$PID_proposer0" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_proposer0" | tr '\n' ' ')
took() { [ "$(grep -c "proposer 1: leader is now 1 (was 0)" "$WORK/proposer1.log")" -gt "$1" ]; }
eventually 30 took "$took_over" || fail "proposer 1 did not take over after the crash"
progress 4 5 "under proposer 1 after the crash"
client_drain || fail "paxos-client did not get all its values delivered: $(tail -n 3 "$WORK/client.log")"
grep -E "latency|resubmits" "$WORK/client.log"
check_learners "$(wc -l <"$WORK/submitted")" "forced change, back, crash"

# (c) two proposers that both lead
for i in 0 1; do
	sed -e 's/^election .*/election manual/' -e "s/^leader .*/leader $i/" "$CONF" \
		>"$WORK/leader$i.conf"
done
start_cluster "$WORK/leader0.conf" "$WORK/leader1.conf"
eventually 30 grep -q "proposer 1: leader is 1 at start" "$WORK/proposer1.log" ||
	fail "proposer 1 does not lead"
"$BUILD/paxos-client" -c "$CONF" --count 10000 --outstanding 8 --size 16 --resubmit-ms 200 \
	--time-limit 20 --log "$WORK/submitted" >"$WORK/client.log" 2>&1 ||
	fail "paxos-client did not get all values delivered with two leaders"
check_learners 10000 "two leaders"
