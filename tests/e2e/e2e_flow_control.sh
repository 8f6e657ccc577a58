#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Flow control end to end, over multicast or unicast (PAXOS_TRANSPORT): the leader's pending
# list holds 16 values while the client keeps 512 outstanding. The leader drops what does not
# fit and says so (refusals_sent); the client's node then holds new values back for a while
# (PAXOS_E_FULL, the client's held_back) rather than sending more into the full list; the
# leader names the values it dropped, and the client sends those again after the hold rather
# than after its resubmit timeout. Every value is delivered, and none twice unless the
# leadership moved meanwhile (a busy leader may miss heartbeats; the new leader proposes what
# it queued too: at-least-once).
# Usage: e2e_flow_control.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=20000
CONF=$WORK/small-list.conf
sed -e 's/^pending-list-size .*/pending-list-size 16/' "$(base_conf)" >"$CONF"
grep -q '^pending-list-size 16$' "$CONF" || fail "cannot set pending-list-size"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
start learner0 paxos-learner -c "$CONF" -o "$WORK/learner0.out"
sleep 0.5

"$BUILD/paxos-client" -c "$CONF" --count $COUNT --outstanding 512 --size 64 --json \
	--time-limit 240 --log "$WORK/submitted" >"$WORK/client.json" 2>"$WORK/client.log" ||
	fail "paxos-client did not get all $COUNT values delivered: $(cat "$WORK/client.json")"
cat "$WORK/client.json"
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$WORK/client.json"; }
moved=$(grep -c 'leader is now' "$WORK/proposer0.log" "$WORK/proposer1.log" | awk -F: '{ s += $2 } END { print s }')
[ "$(field duplicates)" = 0 ] || [ "$moved" -gt 0 ] ||
	fail "values delivered twice with no leader change: $(field duplicates)"
[ "$(field held_back)" -gt 0 ] || fail "the client's node never held a value back"
[ "$(field refused_resends)" -gt 0 ] || fail "the client sent no dropped value again"
# The leader counts its refusals in its counters lines (counters-interval-ms).
i=0
until grep -q 'refusals_sent=[1-9]' "$WORK/proposer0.log" "$WORK/proposer1.log"; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "no proposer counted a refusal"
	sleep 0.1
done
wait_lines "$WORK/learner0.out" $((COUNT + $(field duplicates))) 30 ||
	fail "the learner did not deliver $COUNT values"
stop_all
if [ "$(field duplicates)" = 0 ]; then
	check_outputs $COUNT "$WORK/submitted" "$WORK/learner0.out"
	echo "e2e_flow_control: $COUNT values delivered once each; the client held back $(field held_back) submits"
else
	# At-least-once across the leader changes: every value, consecutive instances.
	consecutive "$WORK/learner0.out" || fail "instances are not consecutive from 1"
	cut -d' ' -f2 "$WORK/learner0.out" | sort -u >"$WORK/delivered.sorted"
	cut -d' ' -f2 "$WORK/submitted" | sort >"$WORK/submitted.sorted"
	cmp -s "$WORK/delivered.sorted" "$WORK/submitted.sorted" ||
		fail "delivered values differ from submitted values"
	echo "e2e_flow_control: $COUNT values delivered ($(field duplicates) twice across $moved leader changes); the client held back $(field held_back) submits"
fi
