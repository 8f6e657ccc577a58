#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A whole memory cluster with membership-alpha restarted, inside a private network namespace:
# 3 acceptors and 2 proposers deliver values, then every one of them is stopped with SIGTERM
# and started again on the same files. The configuration history kept in storage-path speaks
# of the old log's instances, so no new log begins by itself: the acceptors withhold their
# votes, and say why and what to do in their logs; paxos-admin status names them as
# withholding, and no value is delivered. Then what the logs say is done: every process again
# without its membership file, the proposers without their epoch files. The acceptors begin a
# new log above the old one's generation (a start the proposers call their first keeps the
# generation, and would name the new log like the old), and a learner that ran through it all
# says "new log G" before it delivers the new log from instance 1.
# Usage: e2e_new_log_membership.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e 's/^membership-alpha .*/membership-alpha 256/' "$(base_conf)" >"$CONF"
grep -q "^membership-alpha 256" "$CONF" && grep -q "^storage *memory" "$CONF" ||
	fail "cannot write the test configuration"

start_cluster() { # start_cluster SUFFIX
	for i in 0 1; do start "proposer$i$1" paxos-proposer -c "$CONF" -i $i; done
	for i in 0 1 2; do start "acceptor$i$1" paxos-acceptor -c "$CONF" -i $i; done
}

start_cluster a
start learner paxos-learner -c "$CONF" -o "$WORK/learner.out"
"$BUILD/paxos-client" -c "$CONF" --count 200 --outstanding 16 --size 32 --time-limit 60 \
	>"$WORK/client0.log" 2>&1 || fail "the first start did not deliver 200 values"
echo "e2e_new_log_membership: first start: 200 values delivered"

for name in proposer0 proposer1 acceptor0 acceptor1 acceptor2; do stop_one "${name}a"; done
start_cluster b
# Said every 5 s while they wait (30 s: a loaded machine is slow).
for i in 0 1 2; do
	wait_log "acceptor${i}b" "acceptor $i: every other acceptor recovers too.*With membership-alpha no new log begins by itself.*membership file"
done
"$BUILD/paxos-admin" -c "$CONF" status >"$WORK/admin.out" 2>&1 &&
	fail "paxos-admin status said the cluster votes: $(cat "$WORK/admin.out")"
grep -q "acceptors withholding their votes: 0,1,2" "$WORK/admin.out" ||
	fail "paxos-admin status did not name the acceptors that wait: $(cat "$WORK/admin.out")"
grep -q "with membership-alpha no new log begins by itself" "$WORK/admin.out" ||
	fail "paxos-admin status did not say why no new log begins: $(cat "$WORK/admin.out")"
echo "e2e_new_log_membership: paxos-admin status: $(grep withholding "$WORK/admin.out")"
"$BUILD/paxos-client" -c "$CONF" --count 10 --size 32 --time-limit 3 \
	>"$WORK/client1.log" 2>&1 && fail "a value was delivered in a log the acceptors did not begin"
grep -q "began a new log" "$WORK"/acceptor?b.log && fail "an acceptor began a new log"
echo "e2e_new_log_membership: the acceptors wait and say why; nothing is delivered"

# What the acceptors' logs say to do: every process again without its membership file, the
# proposers without their epoch files.
for name in proposer0 proposer1 acceptor0 acceptor1 acceptor2; do stop_one "${name}b"; done
rm -f "$WORK"/store/*/membership "$WORK"/store/proposer-*/epoch
start_cluster c
# One acceptor (or more) begins it; the others may join it through its answer.
for i in 0 1 2; do
	wait_log "acceptor${i}c" "recovered: .*(log generation 1)"
done
grep -q "began a new log, generation 1," "$WORK"/acceptor?c.log || fail "no acceptor began the new log"
"$BUILD/paxos-client" -c "$CONF" --count 100 --outstanding 16 --size 32 --time-limit 60 \
	>"$WORK/client2.log" 2>&1 || fail "the new log did not deliver 100 values"
# The learner that ran through: the old log's values from instance 1, "new log 1", then the new
# log's from instance 1 again.
delivered() { [ "$(counter learner "learner 0" values_delivered)" -ge 300 ]; }
eventually 30 delivered || fail "the learner did not deliver the 300 values of both logs"
stop_one learner # its output is complete once it exits
grep -q "^new log 1\$" "$WORK/learner.out" || fail "the learner did not say that the new log began"
sed -n '1,/^new log 1$/p' "$WORK/learner.out" | sed '$d' >"$WORK/old.out"
sed -n '/^new log 1$/,$p' "$WORK/learner.out" | sed '1d' >"$WORK/new.out"
[ "$(grep -c '^new log' "$WORK/learner.out")" -eq 1 ] || fail "the learner saw more than one new log"
[ "$(wc -l <"$WORK/old.out")" -ge 200 ] || fail "the learner delivered $(wc -l <"$WORK/old.out") values of the old log"
consecutive "$WORK/old.out" || fail "the old log's instances are not consecutive from 1"
[ "$(wc -l <"$WORK/new.out")" -ge 100 ] || fail "the learner delivered $(wc -l <"$WORK/new.out") values of the new log"
consecutive "$WORK/new.out" || fail "the new log's instances are not consecutive from 1"
echo "e2e_new_log_membership: a new log, generation 1: the learner delivered $(wc -l <"$WORK/old.out") values, then said so, then $(wc -l <"$WORK/new.out") from instance 1"
stop_all
