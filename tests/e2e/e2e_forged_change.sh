#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Who may change the cluster (docs/operating.md, "Changing the cluster"), over multicast or unicast with
# PAXOS_TRANSPORT=unicast, no auth-key-file: acceptors 0..2 of ids 0..4 run (initial-members 3,
# membership-alpha 256), proposers 0 and 1, a client under load. Forged without the admin key:
#  - client values whose 16 bytes are membership commands (the proposer set {31}, an id the
#    file lacks; the acceptor set {3,4}, ids it has, not running): delivered as data, and
#    nothing changes;
#  - a change message with a MAC not under the admin key: every proposer refuses it and says
#    why.
# paxos-admin status still says configuration 1 (acceptors 0,1,2, proposers 0,1) and values
# go on being delivered; the proposers restart on their kept state. Unicast: acceptor 1 moves
# to a port where nothing runs (the others a live quorum), while its old process still runs:
# status does not count it as answering, moving acceptor 0 as well is refused (no live
# quorum), and moving 1 back is accepted. Last, with the key, acceptor 3 is added.
# Usage: e2e_forged_change.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
BASE=$(base_conf)
CONF=$WORK/forged.conf
sed -e 's/^acceptors .*/acceptors 5/' -e 's/^membership-alpha .*/membership-alpha 256/' \
	-e 's/^initial-members .*/initial-members 3/' \
	-e 's/^heartbeat-timeout-ms .*/heartbeat-timeout-ms 3000/' "$BASE" >"$CONF"
local_members "$CONF"
grep -q "^admin-key-file $WORK/admin.key" "$CONF" || fail "no admin-key-file in $CONF"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
start learner0 paxos-learner -c "$CONF" -o "$WORK/learner0.out"
sleep 0.5
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --rate 1000 --size 32 \
	--resubmit-ms 5000 --time-limit 200
wait_lines "$WORK/learner0.out" 500 60 || fail "no progress before the forgeries"

# --- forged datagrams (msgpack, lib/net/codec.h): [magic, version 6, client, 0] ---------------
SUBMIT=$(awk '$1 == "submit-group" { print $2 }' "$CONF")
# to_proposers HEX: to the submit group; over unicast, to each proposer, behind the group byte
to_proposers() {
	if is_unicast "$CONF"; then
		for port in 7301 7302; do
			"$BUILD/paxos-send" "127.0.0.1:$port" "03$1" >/dev/null || fail "paxos-send"
		done
	else
		"$BUILD/paxos-send" "$SUBMIT" "$1" >/dev/null || fail "paxos-send"
	fi
}
HDR=94cd50580603 # role 3 (client) ...
HDR=${HDR}00     # ... id 0
# marker, kind (2: proposers, 1: acceptors), configuration 1, the set
ONLY_31=feffffff020000000100000000000080
ONLY_3_4=feffffff010000000100000018000000
for _ in 1 2 3; do
	to_proposers "${HDR}9209c410$ONLY_31"
	to_proposers "${HDR}9209c410$ONLY_3_4"
	# a change (type 21) of the proposers to {0}, force set, and a MAC of zeros
	to_proposers "${HDR}9415c410feffffff02000000010000000100000001c420$(printf '%064d' 0)"
	sleep 0.2
done
for v in $ONLY_31 $ONLY_3_4; do
	eventually 30 grep -q " $v\$" "$WORK/learner0.out" ||
		fail "the client value $v was not delivered as data"
done
echo "e2e_forged_change: both forged commands delivered as client values"
for p in 0 1; do wait_log proposer$p "refused a membership change: its MAC is not the operators'"; done
before=$(wc -l <"$WORK/learner0.out")
wait_lines "$WORK/learner0.out" $((before + 500)) 60 || fail "no delivery after the forgeries"
for name in proposer0 proposer1 learner0 acceptor0; do
	! grep -q "configuration 2 chosen" "$WORK/$name.log" ||
		fail "$name applied a forged change: $(grep "configuration 2" "$WORK/$name.log")"
done

admin() { # admin ARGS...: must succeed
	retry_admin "$WORK/admin.out" "$WORK/admin.err" "$BUILD/paxos-admin" -c "$CONF" "$@" ||
		fail "paxos-admin $*: $(cat "$WORK/admin.err")"
	echo "e2e_forged_change: paxos-admin $*: $(tr '\n' '|' <"$WORK/admin.out")"
}
# status_until PATTERN: paxos-admin status, again until its output has a line matching
# PATTERN (10 s at most): who answers is what each status heard in its few acceptor ticks,
# which a busy machine may delay or which may still hold a moved acceptor's last state.
status_until() {
	su_i=0
	while :; do
		admin status
		grep -q "$1" "$WORK/admin.out" && return 0
		su_i=$((su_i + 1))
		[ "$su_i" -lt 20 ] || return 1
		sleep 0.5
	done
}
admin status
grep -q "^configuration 1 in force from instance 1: acceptors 0,1,2 " "$WORK/admin.out" ||
	fail "the configuration changed"
grep -q "^proposers 0,1$" "$WORK/admin.out" || fail "the proposer set changed"
! grep -q "change in progress" "$WORK/admin.out" || fail "a forged change is in progress"

# The proposers start again on what they kept (a forged set would refuse them).
for p in 1 0; do
	stop_one proposer$p
	start proposer$p paxos-proposer -c "$CONF" -i $p
	wait_log proposer$p "paxos: proposer $p: leader is"
done
before=$(wc -l <"$WORK/learner0.out")
wait_lines "$WORK/learner0.out" $((before + 500)) 60 || fail "no delivery after the restarts"
for p in 0 1; do
	! grep -q "refused: configuration" "$WORK/proposer$p.log" || fail "proposer $p was refused"
done

if is_unicast "$CONF"; then
	admin set-address 1 127.0.0.1:1
	admin status
	grep -q "^acceptor 1 at 127.0.0.1:1 " "$WORK/admin.out" || fail "acceptor 1 did not move"
	status_until "^acceptors answering: 0,2;" ||
		fail "status counts an acceptor where nothing answers: $(grep answering "$WORK/admin.out")"
	rc=0
	"$BUILD/paxos-admin" -c "$CONF" set-address 0 127.0.0.1:2 >"$WORK/admin.out" \
		2>"$WORK/admin.err" || rc=$?
	[ "$rc" -eq 1 ] || fail "moving acceptor 0 too exited $rc: $(cat "$WORK/admin.out")"
	grep -q "would leave no live quorum" "$WORK/admin.err" ||
		fail "moving acceptor 0 too was not refused for the quorum: $(cat "$WORK/admin.err")"
	echo "e2e_forged_change: refused: $(cat "$WORK/admin.err")"
	admin set-address 1 127.0.0.1:7202
	status_until "^acceptors answering: 0,1,2;" ||
		fail "acceptor 1 back home does not answer: $(grep answering "$WORK/admin.out")"
	before=$(wc -l <"$WORK/learner0.out")
	wait_lines "$WORK/learner0.out" $((before + 500)) 60 || fail "no delivery after the moves"
fi

start acceptor3 paxos-acceptor -c "$CONF" -i 3
admin add-acceptor 3
grep -q "acceptors 0,1,2,3$" "$WORK/admin.out" || fail "acceptor 3 was not added with the key"

client_drain || fail "paxos-client did not get all its values delivered: $(tail -n 3 "$WORK/client.log")"
echo "e2e_forged_change: $(wc -l <"$WORK/learner0.out") values delivered; no forged change applied"
