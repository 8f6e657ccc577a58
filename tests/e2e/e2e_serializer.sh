#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# End to end over real multicast (inside a private network namespace): the serializer in
# place of the acceptors and proposers, 2 unmodified learners and an unmodified client
# submitting 10000 values. Both learners must write identical sequences holding every
# submitted value exactly once, and a third learner started afterwards must catch up through
# the serializer's announcements (tick) and repeats. Then the same on LMDB across a restart
# of the serializer: it recovers its store and goes on numbering where it stopped.
# Usage: e2e_serializer.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=10000
CONF=$SRC/paxos.conf

client() { # client COUNT LOG
	"$BUILD/paxos-client" -c "$CONF" --count "$1" --outstanding 64 --size 64 \
		--resubmit-ms 2000 --time-limit 120 --log "$2" >>"$WORK/client.log" 2>&1 ||
		fail "paxos-client did not get all $1 values delivered"
}

start serializer paxos-serializer -c "$CONF"
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5
client $COUNT "$WORK/submitted"
cat "$WORK/client.log"
start learner2 paxos-learner -c "$CONF" -o "$WORK/learner2.out"
for i in 0 1 2; do wait_lines "$WORK/learner$i.out" $COUNT 60 || true; done
stop_all
grep -q "paxos-serializer: serializer, storage memory" "$WORK/serializer.log" ||
	fail "the serializer did not say which storage it uses"
# Once each, unless a loaded machine held a value past the resubmit (at-least-once).
if resubmitted "$WORK/client.log"; then
	at_least_once "$WORK/submitted" "$WORK/learner0.out" "$WORK/learner1.out" "$WORK/learner2.out"
else
	check_outputs $COUNT "$WORK/submitted" "$WORK/learner0.out" "$WORK/learner1.out" \
		"$WORK/learner2.out"
fi
echo "e2e_serializer: $COUNT values delivered identically by 2 learners and a late one"

# Durable: 2 x 2000 values with a restart of the serializer in between.
HALF=2000
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^#durability .*|durability nosync|" "$SRC/paxos.conf" >"$WORK/lmdb.conf"
CONF=$WORK/lmdb.conf
rm -f "$WORK"/learner*.out "$WORK/client.log"
start serializer paxos-serializer -c "$CONF" --fresh
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5
client $HALF "$WORK/submitted1"
kill -TERM "$PID_serializer"
wait "$PID_serializer" || fail "the serializer did not stop cleanly"
start serializer2 paxos-serializer -c "$CONF"
sleep 0.3
client $HALF "$WORK/submitted2"
for i in 0 1; do wait_lines "$WORK/learner$i.out" $((2 * HALF)) 60 || true; done
stop_all
grep -q "storage lmdb, durability nosync, .*(recovered: accepted up to instance [1-9]" "$WORK/serializer2.log" ||
	fail "the restarted serializer did not recover its store"
cat "$WORK/submitted1" "$WORK/submitted2" >"$WORK/submitted"
if resubmitted "$WORK/client.log"; then
	at_least_once "$WORK/submitted" "$WORK/learner0.out" "$WORK/learner1.out"
else
	check_outputs $((2 * HALF)) "$WORK/submitted" "$WORK/learner0.out" "$WORK/learner1.out"
fi
echo "e2e_serializer: $((2 * HALF)) values across a serializer restart on lmdb, no instance reused"
