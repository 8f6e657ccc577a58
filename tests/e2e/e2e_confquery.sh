#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Processes started from the ORIGINAL paxos.conf learn the configuration in force from the
# acceptors (docs/operating.md, "Changing the cluster"), over multicast or unicast with
# PAXOS_TRANSPORT=unicast (inside a private network namespace). Acceptors 0..3 run, 0..2 are
# the members at the start (initial-members 3, membership-alpha 256, memory-retention 100: the
# memory acceptors trim as they go). Acceptor 2 is replaced by 3 (configuration 2: acceptors
# 0,1,3) and stopped, values go on until the instances of the change are trimmed, then
# acceptor 1 is stopped too: only 0 and 3 run, a quorum of configuration 2 but not of
# paxos.conf's first one (0,1,2). Then, each without the membership file it kept:
#  - proposer 1 restarts, asks, takes configuration 2 before it leads, and once the leader
#    (proposer 0) is stopped it gets values chosen by acceptors 0 and 3 alone;
#  - a learner started now (the log before the change is trimmed: no replay can tell it)
#    delivers them too;
#  - acceptor 2 comes back with an empty store: it asks, and is refused.
# Usage: e2e_confquery.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=$WORK/confquery.conf
sed -e 's/^acceptors .*/acceptors 4/' -e 's/^membership-alpha .*/membership-alpha 256/' \
	-e 's/^initial-members .*/initial-members 3/' \
	-e 's/^memory-retention .*/memory-retention 100/' "$(base_conf)" >"$CONF"
local_members "$CONF"

load() { # load COUNT NAME: COUNT values of 64 bytes, resubmitted after 1 s, all delivered
	"$BUILD/paxos-client" -c "$CONF" --count "$1" --outstanding 64 --size 64 \
		--resubmit-ms 1000 --time-limit 60 >"$WORK/$2.log" 2>&1 ||
		fail "paxos-client ($2) did not get $1 values delivered: $(tail -n 2 "$WORK/$2.log")"
}

for i in 0 1 2 3; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start proposer1 paxos-proposer -c "$CONF" -i 1
start learner0 paxos-learner -c "$CONF" -o "$WORK/learner0.out"
sleep 0.5
load 3000 client1
retry_admin "$WORK/admin.out" "$WORK/admin.err" \
	"$BUILD/paxos-admin" -c "$CONF" replace-acceptor 2 3 ||
	fail "paxos-admin replace-acceptor 2 3: $(cat "$WORK/admin.err")"
echo "e2e_confquery: $(cat "$WORK/admin.out")"
grep -q "acceptors 0,1,3$" "$WORK/admin.out" || fail "acceptor 2 was not replaced by 3"
stop_one acceptor2
# 20000 more values (about 320 instances): the memory acceptors keep 100, so the change's
# instance is trimmed.
load 20000 client2
sleep 0.5 # a tick of every acceptor: trimmed as far as it goes
stop_one acceptor1

# Proposer 1 without the history it kept: it asks before it leads.
stop_one proposer1
rm -f "$WORK/store/proposer-1/membership"
start proposer1 paxos-proposer -c "$CONF" -i 1
answered="configuration 2 (acceptors 0,1,3, proposers 0,1 from instance [0-9]*), as a quorum of its acceptors answered"
wait_log proposer1 "$answered"
stop_one proposer0
load 2000 client3
echo "e2e_confquery: proposer 1 led with acceptors 0 and 3 alone: $(grep -E "resubmits" "$WORK/client3.log")"

# A learner with no history at all, after the trim.
start learner1 paxos-learner -c "$CONF" -o "$WORK/learner1.out"
wait_log learner1 "$answered"
wait_log learner1 "were trimmed before they were learned"
i=0
until [ -s "$WORK/learner1.out" ] &&
	[ "$(tail -n 1 "$WORK/learner1.out")" = "$(tail -n 1 "$WORK/learner0.out")" ]; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "learner 1 did not deliver up to where learner 0 did"
	sleep 0.1
done
echo "e2e_confquery: a learner started after the trim delivers up to $(tail -n 1 "$WORK/learner1.out" | cut -d' ' -f1), as learner 0"

# Acceptor 2, removed, back with an empty store and the original paxos.conf.
rm -rf "$WORK/store/acceptor-2"
start acceptor2 paxos-acceptor -c "$CONF" -i 2
wait_log acceptor2 "acceptor 2: refused: configuration 2 (acceptors 0,1,3, from instance"
echo "e2e_confquery: OK"
