#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Changing the acceptor set under load (docs/operating.md, "Changing the cluster"), over multicast or
# unicast with PAXOS_TRANSPORT=unicast (inside a private network namespace): acceptor ids
# 0..4 run, 0..2 are the members at the start (initial-members 3, membership-alpha 256). A
# client submits 5000 values of 64 bytes a second, up to 64 outstanding, resubmitting only
# after 10 s, until the last change and restart are done, while paxos-admin
#  - grows the set to 5 (adds 3, then 4) and shrinks it back to 3 (removes 4, then 3);
#  - replaces acceptor 2 by acceptor 3, and acceptor 2 is stopped;
#  - refuses what it must: an id paxos.conf does not have, a member added again, an acceptor
#    that does not run;
#  - restarts proposer 1 and acceptor 3 with the same paxos.conf: they start from the
#    configuration they kept, not the file's first one; acceptor 2, removed, is refused.
# Every value is delivered once (the client counts 0 duplicates unless it resubmitted, or a
# leader moved: at-least-once), both learners write the same
# file, and a learner started at the end, after acceptor 2 is gone, writes it too. Then, on a
# new cluster, the leader is killed during a change: the change comes into force all the same.
# On a third, the proposer set changes under load: proposer 2 added, the leader (0) removed and
# proposer 1 leads on, proposer 0 restarted is refused, proposer 1 removed too, and removing the
# last one (2) is refused.
# Usage: e2e_reconfig.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=60000
BASE=$(base_conf)
CONF=$WORK/reconfig.conf
# One leader throughout (a late heartbeat on a busy machine would move the leadership, and a
# new leader may deliver a value twice: at-least-once), so that duplicates count only what the
# changes of the acceptor set would cause.
sed -e 's/^acceptors .*/acceptors 5/' -e 's/^membership-alpha .*/membership-alpha 256/' \
	-e 's/^initial-members .*/initial-members 3/' \
	-e 's/^heartbeat-timeout-ms .*/heartbeat-timeout-ms 3000/' "$BASE" >"$CONF"
local_members "$CONF"

for i in 0 1 2 3 4; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start proposer1 paxos-proposer -c "$CONF" -i 1
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5

: >"$WORK/submitted"
# COUNT is the scale of the steps: the client runs until drained after the last change.
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --rate 5000 --outstanding 64 \
	--size 64 --resubmit-ms 10000 --time-limit 200 --log "$WORK/submitted"
# same_outputs COUNT once|twice OUTPUT...: waits until the outputs hold as many lines, COUNT or
# more (files are flushed every 100 ms), stops the cluster; the outputs must be identical, their instances never go back, and they hold
# every submitted value: once, or (twice) at least once. Instances that hold a membership
# command or a skip (which brings a change into force) hold no client value: the files leave
# them out, so instances only grow rather than run 1, 2, 3.
same_outputs() {
	count=$1
	once=$2
	shift 2
	i=0
	while :; do
		ready=1
		# A learner started last may not have made its file yet.
		first=$(cat "$1" 2>/dev/null | wc -l)
		for out in "$@"; do
			[ "$(cat "$out" 2>/dev/null | wc -l)" -eq "$first" ] || ready=0
		done
		[ "$ready" -eq 1 ] && [ "$first" -ge "$count" ] && break
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "learners did not deliver every value ($(wc -l "$@" | tr -s ' \n' ' '))"
		sleep 0.1
	done
	stop_all
	for out in "$@"; do
		cmp -s "$1" "$out" || fail "learner outputs $1 and $out differ"
	done
	sort -c -s -n -k1,1 "$1" || fail "instances in $1 go back"
	LINES=$(wc -l <"$1")
	cut -d' ' -f2 "$1" | sort >"$WORK/delivered.sorted"
	cut -d' ' -f2 "$WORK/submitted" | sort -u >"$WORK/submitted.sorted"
	if [ "$once" = once ]; then
		[ -z "$(uniq -d "$WORK/delivered.sorted")" ] || fail "a value was delivered twice"
		cmp -s "$WORK/delivered.sorted" "$WORK/submitted.sorted" ||
			fail "delivered values differ from submitted values"
	else
		sort -u "$WORK/delivered.sorted" | cmp -s - "$WORK/submitted.sorted" ||
			fail "delivered values differ from submitted values"
	fi
}

# once_unless_moved: ONCE=once while the client resubmitted nothing (it waits 10 s, but a
# loaded machine may take longer) and the proposers logged no leader change (a heartbeat
# missed under load may move the leadership, and a value in flight then may be chosen twice);
# the client's duplicates must then be 0. Else ONCE=twice (at-least-once).
once_unless_moved() {
	ONCE=twice
	grep -q "resubmits 0," "$WORK/client.log" && ! leader_moved "$WORK"/proposer*.log ||
		return 0
	grep -q "resubmits 0, duplicates 0," "$WORK/client.log" ||
		fail "values were delivered twice: $(grep resubmits "$WORK/client.log")"
	ONCE=once
}

progress() { # progress FRACTION_NUM FRACTION_DEN WHAT
	wait_lines "$WORK/submitted" $((COUNT * $1 / $2)) 60 || fail "no progress $3"
	kill -0 "$CLIENT" 2>/dev/null || fail "the client ended $3: $(tail -n 3 "$WORK/client.log")"
}
admin() { # admin WHAT ARGS...: must succeed; prints its line
	what=$1
	shift
	retry_admin "$WORK/admin.out" "$WORK/admin.err" "$BUILD/paxos-admin" -c "$CONF" "$@" ||
		fail "paxos-admin $* ($what): $(cat "$WORK/admin.err")"
	echo "e2e_reconfig: $what: $(cat "$WORK/admin.out")"
}
refused() { # refused STATUS WHAT ARGS...: must exit with STATUS, saying why
	want=$1
	what=$2
	shift 2
	rc=0
	"$BUILD/paxos-admin" -c "$CONF" "$@" >"$WORK/admin.out" 2>"$WORK/admin.err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "paxos-admin $* ($what) exited $rc, want $want"
	echo "e2e_reconfig: refused, $what: $(head -n 1 "$WORK/admin.err")"
}

progress 1 8 "before the first change"
admin "status at the start" status
grep -q "^configuration 1 in force from instance 1: acceptors 0,1,2 " "$WORK/admin.out" ||
	fail "status does not name configuration 1 of acceptors 0,1,2"
admin "grow, 1 of 2" add-acceptor 3
admin "grow, 2 of 2" add-acceptor 4
grep -q "acceptors 0,1,2,3,4$" "$WORK/admin.out" || fail "the set did not grow to 5"
progress 2 8 "with 5 acceptors"
admin "shrink, 1 of 2" remove-acceptor 4
admin "shrink, 2 of 2" remove-acceptor 3
grep -q "acceptors 0,1,2$" "$WORK/admin.out" || fail "the set did not shrink to 3"
progress 3 8 "back to 3 acceptors"
refused 2 "an id paxos.conf does not have" add-acceptor 7
refused 1 "a member added again" add-acceptor 1
admin "replace 2 by 3" replace-acceptor 2 3
grep -q "acceptors 0,1,3$" "$WORK/admin.out" || fail "acceptor 2 was not replaced by 3"
stop_one acceptor2
stop_one acceptor4
sleep 1 # their last state messages are older than paxos-admin looks back
refused 1 "an acceptor that does not run" add-acceptor 4
admin "status at the end" status

# Restarts after the changes, from the same paxos.conf (whose first configuration is acceptors
# 0,1,2): proposer 1 and acceptor 3 (memory storage: it recovers) go on from the configuration
# they kept with their epoch and beside their store, and acceptor 3 recovers with answers
# counted in it; acceptor 2, removed, comes back and is refused.
for dir in acceptor-3 proposer-1 acceptor-2; do
	grep -q "^configuration 6 " "$WORK/store/$dir/membership" ||
		fail "$dir did not keep configuration 6: $(cat "$WORK/store/$dir/membership")"
done
stop_one proposer1
start proposer1 paxos-proposer -c "$CONF" -i 1
stop_one acceptor3
start acceptor3 paxos-acceptor -c "$CONF" -i 3
learned="configuration 6 (acceptors 0,1,3 from instance [0-9]*), as learned before"
wait_log proposer1 "$learned"
wait_log acceptor3 "$learned"
wait_log acceptor3 "acceptor 3: recovered: votes again"
start acceptor2 paxos-acceptor -c "$CONF" -i 2 # one at a time: 2 and 3 share old configurations
wait_log acceptor2 "acceptor 2: refused: configuration 6 (acceptors 0,1,3, from instance"
stop_one acceptor2

progress 4 8 "after the restarts"
client_drain || fail "paxos-client did not get all its values delivered: $(tail -n 3 "$WORK/client.log")"
grep -E "latency|resubmits" "$WORK/client.log"
once_unless_moved
eventually 30 grep -q "configuration 6 chosen in instance" "$WORK/learner0.log" ||
	fail "learner 0 did not log configuration 6"
start learner2 paxos-learner -c "$CONF" -o "$WORK/learner2.out"
submitted=$(wc -l <"$WORK/submitted")
same_outputs "$submitted" $ONCE "$WORK/learner0.out" "$WORK/learner1.out" "$WORK/learner2.out"
how="once"
[ $ONCE = once ] || how="at least once (the client resubmitted, or a leader moved)"
echo "e2e_reconfig: $submitted values delivered $how, identically by 3 learners (one started" \
	"after the changes), through 5 changes of the acceptor set (configuration 6)"

# A new cluster: the leader is killed (SIGKILL) as paxos-admin starts to ask for a change; it
# asks again until proposer 1 (which queues every request too) leads and proposes it. A client
# that resubmits keeps the load on (a leader change may deliver a value twice).
rm -rf "$WORK/store" "$WORK"/learner?.out
for i in 0 1 2 3; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start proposer1 paxos-proposer -c "$CONF" -i 1
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5
: >"$WORK/submitted"
"$BUILD/paxos-client" -c "$CONF" --count 20000 --outstanding 64 --size 64 --resubmit-ms 500 \
	--time-limit 120 --log "$WORK/submitted" >"$WORK/client.log" 2>&1 &
CLIENT=$!
wait_lines "$WORK/submitted" 2000 60 || fail "no progress before the leader is killed"
retry_admin "$WORK/admin.out" "$WORK/admin.err" \
	"$BUILD/paxos-admin" -c "$CONF" add-acceptor 3 &
ADMIN=$!
sleep 0.3
kill -9 "$PID_proposer0"
wait "$PID_proposer0" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_proposer0" | tr '\n' ' ')
wait "$ADMIN" || fail "the change did not come into force after the leader was killed: $(cat "$WORK/admin.err")"
echo "e2e_reconfig: leader killed during the change: $(cat "$WORK/admin.out")"
grep -q "acceptors 0,1,2,3$" "$WORK/admin.out" || fail "acceptor 3 was not added"
wait "$CLIENT" || fail "paxos-client did not get all values delivered after the leader died"
grep -E "resubmits" "$WORK/client.log"
same_outputs 20000 twice "$WORK/learner0.out" "$WORK/learner1.out"
echo "e2e_reconfig: leader killed during a change: 20000 values delivered identically by 2" \
	"learners ($((LINES - 20000)) delivered twice)"

# A third cluster: the proposer set changes under load (proposers 3, initial-proposers 2:
# proposers 0 and 1 may lead at the start). Proposer 2 is added and started; the leader,
# proposer 0, is removed while the client runs: it stops leading, proposer 1 leads, delivery
# goes on; restarted, proposer 0 is refused. A planned removal hands over cleanly (the removed
# leader opens no instance from where the change is in force, the next one starts there), so
# every value is delivered once: the client, resubmitting only after 5 s, counts 0 duplicates
# (on both transports: a value chosen elsewhere is settled as soon as a follower's learner
# closes it, so the next leader never proposes it again); no more than it
# resubmitted if a loaded machine held a value 5 s.
stop_all
rm -rf "$WORK/store" "$WORK"/learner?.out
sed -e 's/^proposers .*/proposers 3/' -e 's/^initial-proposers .*/initial-proposers 2/' \
	"$CONF" >"$WORK/proposers.conf"
CONF=$WORK/proposers.conf
local_members "$CONF"
for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start proposer1 paxos-proposer -c "$CONF" -i 1
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5
: >"$WORK/submitted"
# Open loop, 2000 values/s until drained: the load lasts through the changes.
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --rate 2000 --size 64 \
	--resubmit-ms 5000 --time-limit 200 --log "$WORK/submitted"
wait_lines "$WORK/learner0.out" 2000 60 || fail "no progress before the proposer changes"
admin "proposers at the start" status
grep -q "^proposers 0,1$" "$WORK/admin.out" || fail "status does not name proposers 0,1"
refused 2 "a proposer id paxos.conf does not have" add-proposer 3
refused 1 "a proposer added again" add-proposer 1
refused 1 "a proposer removed that is no member" remove-proposer 2
admin "add proposer 2" add-proposer 2
grep -q "proposers 0,1,2$" "$WORK/admin.out" || fail "proposer 2 was not added"
start proposer2 paxos-proposer -c "$CONF" -i 2
wait_log proposer2 "proposer 2: leader is 0 at start"
before=$(wc -l <"$WORK/learner0.out")
admin "remove proposer 0, the leader, under load" remove-proposer 0
grep -q "proposers 1,2$" "$WORK/admin.out" || fail "proposer 0 was not removed"
wait_log proposer0 "proposer 0: removed: configuration 3 (proposers 1,2, from instance"
i=0 # proposer 1's last leader change names it (an earlier one may have come and gone)
until grep "leader is now" "$WORK/proposer1.log" | tail -n 1 | grep -q "leader is now 1 (was 0)"; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "proposer 1 did not take over from the removed leader"
	sleep 0.1
done
echo "e2e_reconfig: proposer1: $(grep "leader is now" "$WORK/proposer1.log" | tail -n 1)"
wait_lines "$WORK/learner0.out" $((before + 2000)) 60 ||
	fail "no delivery after the leader was removed"
echo "e2e_reconfig: learner 0 delivered on after the leader was removed:" \
	"$before values, then $(wc -l <"$WORK/learner0.out")"
admin "status after the removal" status
grep -q "^proposers 1,2$" "$WORK/admin.out" || fail "status does not name proposers 1,2"
# Restarted with its epoch (and the history kept there), the removed proposer is refused.
stop_one proposer0
rc=0
"$BUILD/paxos-proposer" -c "$CONF" -i 0 >"$WORK/proposer0-again.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the removed proposer 0 started again"
grep -q "proposer 0: refused: configuration 3 (proposers 1,2, from instance" \
	"$WORK/proposer0-again.log" || fail "proposer 0 was not refused: $(cat "$WORK/proposer0-again.log")"
echo "e2e_reconfig: removed proposer restarted: $(grep -m 1 refused "$WORK/proposer0-again.log")"
before=$(wc -l <"$WORK/learner0.out")
admin "remove proposer 1, the leader again" remove-proposer 1
grep -q "proposers 2$" "$WORK/admin.out" || fail "proposer 1 was not removed"
refused 1 "the last proposer removed" remove-proposer 2
wait_lines "$WORK/learner0.out" $((before + 2000)) 60 ||
	fail "no delivery after proposer 1 was removed"
client_drain ||
	fail "paxos-client did not get all values delivered with proposer changes: $(tail -n 3 "$WORK/client.log")"
grep -E "resubmits" "$WORK/client.log"
resubmits=$(sed -n 's/^resubmits \([0-9]*\), duplicates \([0-9]*\),.*/\1/p' "$WORK/client.log")
duplicates=$(sed -n 's/^resubmits \([0-9]*\), duplicates \([0-9]*\),.*/\2/p' "$WORK/client.log")
[ -n "$duplicates" ] && [ "$duplicates" -le "$resubmits" ] ||
	fail "the leader's removal delivered values twice: $(grep resubmits "$WORK/client.log")"
submitted=$(wc -l <"$WORK/submitted")
same_outputs "$submitted" twice "$WORK/learner0.out" "$WORK/learner1.out"
echo "e2e_reconfig: proposers 0,1 -> 0,1,2 -> 1,2 -> 2 under load: $submitted values delivered" \
	"identically by 2 learners ($((LINES - submitted)) delivered twice)"

# Unicast only: a new acceptor whose address only the change carries. paxos.conf has no line
# for acceptor 4 (no member at the start), its own file has; paxos-admin add-acceptor 4
# HOST:PORT puts the address in the command, and every process sends to it from then on.
# Acceptor 1 is then stopped and acceptor 2 removed: values are chosen by 0 and 4 alone.
is_unicast "$WORK/reconfig.conf" || exit 0
rm -rf "$WORK/store" "$WORK"/learner?.out
grep -v '^acceptor 4 ' "$WORK/reconfig.conf" >"$WORK/noaddr.conf"
CONF=$WORK/noaddr.conf
grep '^acceptor 4 ' "$WORK/reconfig.conf" | cat "$CONF" - >"$WORK/acceptor4.conf"
address4=$(grep '^acceptor 4 ' "$WORK/reconfig.conf" | cut -d' ' -f3)
for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start acceptor4 paxos-acceptor -c "$WORK/acceptor4.conf" -i 4 --metrics-listen 127.0.0.1:9544
start proposer0 paxos-proposer -c "$CONF" -i 0
start proposer1 paxos-proposer -c "$CONF" -i 1
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5
: >"$WORK/submitted"
"$BUILD/paxos-client" -c "$CONF" --count 50000 --rate 2000 --size 64 --resubmit-ms 500 \
	--time-limit 120 --log "$WORK/submitted" >"$WORK/client.log" 2>&1 &
CLIENT=$!
wait_lines "$WORK/learner0.out" 2000 60 || fail "no progress before acceptor 4 is added"
refused 1 "an acceptor paxos.conf has no address for, without one" add-acceptor 4
admin "add acceptor 4 at $address4" add-acceptor 4 "$address4"
grep -q "acceptors 0,1,2,4$" "$WORK/admin.out" || fail "acceptor 4 was not added"
# Acceptor 4 votes only above the instance it recovered at: until its learner holds the
# decisions up to there (it is restored), instances below close with 0, 1 and 2 alone, and
# stopping one of them could leave one that no quorum closes. On a busy machine its learner is
# slow to catch up: wait, as its log asks an operator to.
wait_log acceptor4 "acceptor 4: recovered: votes again above instance"
floor4=$(sed -n 's/.*acceptor 4: recovered: votes again above instance \([0-9]*\) .*/\1/p' \
	"$WORK/acceptor4.log" | tail -n 1)
restored4() {
	got=$(curl -s http://127.0.0.1:9544/metrics |
		awk '$1 ~ /^paxos_learner_delivered_instance[{]/ { print $2 }')
	[ -n "$got" ] && [ "$got" -ge "$floor4" ]
}
eventually 120 restored4 || fail "acceptor 4's learner did not get to instance $floor4"
# Acceptor 1 stops first: paxos-admin (from the same paxos.conf) then needs acceptor 4's
# answer for a quorum of configuration 2 (0,1,2,4), and finds its address in the others'.
stop_one acceptor1
admin "remove acceptor 2" remove-acceptor 2
stop_one acceptor2
before=$(wc -l <"$WORK/learner0.out")
# A second client: on a slow machine the changes can take longer than the first client's
# 25 s of load, and with no values left there would be nothing for 0 and 4 to choose.
"$BUILD/paxos-client" -c "$CONF" --count 2000 --outstanding 16 --size 64 --resubmit-ms 500 \
	--time-limit 60 --log "$WORK/submitted2" >"$WORK/client2.log" 2>&1 ||
	fail "no delivery with acceptors 0 and 4 alone (acceptor 4's address came with the" \
		"change): $(tail -n 3 "$WORK/client2.log")"
echo "e2e_reconfig: acceptors 0 and 4 alone (4 known by the address in the change):" \
	"$before values, then $(wc -l <"$WORK/learner0.out")"
grep -q "^address 4 " "$WORK/store/proposer-0/membership" ||
	fail "proposer 0 did not keep acceptor 4's address: $(cat "$WORK/store/proposer-0/membership")"
wait "$CLIENT" || fail "paxos-client did not get all values delivered with acceptor 4"
cat "$WORK/submitted2" >>"$WORK/submitted"
same_outputs 52000 twice "$WORK/learner0.out" "$WORK/learner1.out"
echo "e2e_reconfig: 52000 values delivered identically by 2 learners through an acceptor" \
	"added with its address in the change ($((LINES - 52000)) delivered twice)"
