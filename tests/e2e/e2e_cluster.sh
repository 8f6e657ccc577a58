#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# End to end over real multicast, or unicast with PAXOS_TRANSPORT=unicast (inside a private
# network namespace): 3 acceptors, 2 proposers (0 leads), 2 learners and a client submitting
# 10000 values. Both learners must write identical sequences holding every submitted value
# exactly once.
# Usage: e2e_cluster.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=10000
CONF=$(base_conf)

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5

"$BUILD/paxos-client" -c "$CONF" --count $COUNT --outstanding 64 --size 64 \
	--resubmit-ms 2000 --time-limit 120 --log "$WORK/submitted" >"$WORK/client.log" 2>&1 ||
	fail "paxos-client did not get all $COUNT values delivered"
cat "$WORK/client.log"
converged $COUNT "$WORK/submitted" "$WORK/learner0.out" "$WORK/learner1.out"
# Exactly once while proposer 0 leads throughout and nothing was resubmitted (see
# leader_moved and resubmitted).
if leader_moved "$WORK/proposer0.log" "$WORK/proposer1.log" || resubmitted "$WORK/client.log"
then
	echo "e2e_cluster: $COUNT values delivered identically by 2 learners" \
		"($((LINES - COUNT)) twice: a leader moved or values were resubmitted under load)"
	exit 0
fi
check_outputs $COUNT "$WORK/submitted" "$WORK/learner0.out" "$WORK/learner1.out"
echo "e2e_cluster: $COUNT values delivered identically by 2 learners"
