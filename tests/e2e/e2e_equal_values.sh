#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two submitters' equal bytes are two values (3 acceptors, 2 proposers, a learner, memory
# storage, in a private network namespace). "INCR x" (naming no submission) and "INCR y"
# (submission 5) are delivered while proposer 1 is down; proposer 1 then starts and learns
# them without having queued them, and takes over when proposer 0 is killed. Then:
#  - another submitter's "INCR x", and "INCR y" as submission 6, must be delivered: they are
#    not the values delivered before (a proposer used to drop them as such, by their bytes);
#  - a late copy of submission 5 is not delivered again.
# Usage: e2e_equal_values.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 100|" "$SRC/paxos.conf" >"$CONF"
grep -q "^counters-interval-ms 100" "$CONF" || fail "cannot write the configuration"
SUBMIT=$(awk '$1 == "submit-group" { print $2 }' "$CONF")
CLIENT=94cd5058060300                  # header: [magic, version 6, client, 0]
INCR_X=9209c406494e43522078             # [client value, "INCR x"]: names no submission
INCR_Y=c406494e43522079                 # "INCR y"
END_MARK=9209c403454e44                 # [client value, "END"]
submit() { "$BUILD/paxos-send" "$SUBMIT" "$CLIENT$1" >/dev/null || fail "paxos-send $1"; }
incr_y() { submit "9309${INCR_Y}cf$(printf %016x "$1")"; } # [client value, "INCR y", id]
count_of() { grep -c " $1\$" "$WORK/learner.out" || true; } # count_of HEX: deliveries of value HEX

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start learner paxos-learner -c "$CONF" -o "$WORK/learner.out"
wait_log proposer0 "leader is 0 at start" >/dev/null
sleep 0.3
submit "$INCR_X"
incr_y 5
wait_lines "$WORK/learner.out" 2 30 || fail "the first values were not delivered"

# Proposer 1 starts after their delivery: its learner delivers them, not its list.
start proposer1 paxos-proposer -c "$CONF" -i 1
INSTANCES=$(cut -d' ' -f1 "$WORK/learner.out" | sort -u | wc -l)
learned() { [ "$(counter proposer1 "learner 0" instances_delivered)" -ge "$INSTANCES" ] 2>/dev/null; }
eventually 30 learned || fail "proposer 1 did not learn the first values"
kill -KILL "$PID_proposer0"
wait "$PID_proposer0" 2>/dev/null || true
eventually 30 grep -q "proposer 1: leader is now 1" "$WORK/proposer1.log" ||
	fail "proposer 1 did not take over"

submit "$INCR_X" # another submitter's equal bytes
incr_y 6         # another submission of equal bytes
incr_y 5         # a late copy of a submission delivered already
submit "$END_MARK"
wait_lines "$WORK/learner.out" 5 30 ||
	fail "only $(wc -l <"$WORK/learner.out") values delivered, want 5 or more"
eventually 30 grep -q " 454e44\$" "$WORK/learner.out" || fail "END was not delivered"
[ "$(count_of 494e43522078)" -eq 2 ] || fail "INCR x delivered $(count_of 494e43522078) times, want 2"
[ "$(count_of 494e43522079)" -eq 2 ] || fail "INCR y delivered $(count_of 494e43522079) times, want 2"
echo "e2e_equal_values: equal bytes of two submitters delivered twice; a late copy once"
