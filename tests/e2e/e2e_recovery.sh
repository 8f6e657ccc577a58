#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Crash recovery with durable acceptors (LMDB, sync), over real multicast (or unicast with
# PAXOS_TRANSPORT=unicast) in a private network namespace. Under load, acceptor 1 is killed
# with SIGKILL and restarted on the same storage: it must recover (log says so), still reject
# a ballot below its promises, and the cluster must keep delivering; both learners must end
# identical, holding every value.
# Acceptor 2, killed meanwhile, comes back --fresh as after a lost disk: it must recover
# before it votes, and a restart on its new store must keep that recovery's floor and fence.
# Usage: e2e_recovery.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=20000
BASE=$(base_conf)
CONF=$WORK/paxos.conf
# Classic acceptors: a learning one answers any prepare for a decided instance with a promise
# carrying the chosen value, so the low-ballot prepare below would not be rejected.
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 200|" \
	-e "s|^learning-acceptors .*|learning-acceptors no|" \
	"$BASE" >"$CONF"
grep -q "^learning-acceptors no" "$CONF" || fail "cannot turn learning acceptors off"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5

: >"$WORK/submitted"
"$BUILD/paxos-client" -c "$CONF" --count $COUNT --outstanding 16 --size 64 \
	--resubmit-ms 500 --time-limit 120 --log "$WORK/submitted" >"$WORK/client.log" 2>&1 &
CLIENT=$!
# Kill acceptor 1 once a quarter of the values went through, restart it at once.
wait_lines "$WORK/submitted" $((COUNT / 4)) 60 || fail "the client made no progress"
kill -KILL "$PID_acceptor1"
wait "$PID_acceptor1" 2>/dev/null || true
start acceptor1b paxos-acceptor -c "$CONF" -i 1
eventually 30 grep -q "(recovered: accepted up to instance [1-9]" "$WORK/acceptor1b.log" ||
	fail "restarted acceptor did not recover its state"
# Kill acceptor 2 as well: from now on a quorum needs the recovered acceptor.
wait_lines "$WORK/submitted" $((COUNT / 2)) 60 || fail "no progress after the restart"
kill -KILL "$PID_acceptor2"
wait "$PID_acceptor2" 2>/dev/null || true

wait "$CLIENT" || fail "paxos-client did not get all $COUNT values delivered"
cat "$WORK/client.log"
# Acceptor 2 lost its disk: started --fresh, it must recover before it votes and keep its
# floor and fence beside its store; a later restart on that store reads them back.
start acceptor2b paxos-acceptor -c "$CONF" -i 2 --fresh
eventually 30 grep -q "acceptor 2: recovered: votes again above instance [1-9]" \
	"$WORK/acceptor2b.log" || fail "the fresh acceptor 2 did not recover"
grep -q "acceptor 2: started without earlier state" "$WORK/acceptor2b.log" ||
	fail "the fresh acceptor 2 did not say it lost its state"
floor=$(sed -n 's/.*recovered: votes again above instance \([0-9]*\) and ballot \([0-9]*\).*/\1 \2/p' \
	"$WORK/acceptor2b.log")
[ "$(cat "$WORK/store/acceptor-2/recovery")" = "$floor" ] ||
	fail "the recovery file does not hold '$floor'"
kill -KILL "$PID_acceptor2b"
wait "$PID_acceptor2b" 2>/dev/null || true
start acceptor2c paxos-acceptor -c "$CONF" -i 2
eventually 30 grep -q "acceptor 2: votes only above instance $(echo "$floor" | cut -d' ' -f1) and ballot" \
	"$WORK/acceptor2c.log" || fail "acceptor 2 restarted on its store forgot its recovery fence"
echo "e2e_recovery: acceptor 2 restarted --fresh recovered (floor and fence $floor) and kept them"
# Both learners hold every submitted value before the proposers stop (30 s: a loaded learner
# may still be catching up).
cut -d' ' -f2 "$WORK/submitted" | sort -u >"$WORK/submitted.set"
learned_all() {
	for l in 0 1; do
		cut -d' ' -f2 "$WORK/learner$l.out" | sort -u >"$WORK/learner$l.set"
		[ -z "$(comm -23 "$WORK/submitted.set" "$WORK/learner$l.set")" ] || return 1
	done
	[ "$(wc -l <"$WORK/learner0.out")" -eq "$(wc -l <"$WORK/learner1.out")" ]
}
eventually 30 learned_all || fail "learners did not converge ($(wc -l <"$WORK/learner0.out")" \
	"and $(wc -l <"$WORK/learner1.out") lines)"
# A prepare for instance 1 with ballot 2, as proposer 2 (no such proposer runs: the ids of
# the running ones speak from their own addresses only): the recovered acceptor promised far
# higher, so its count of rejects sent must grow by exactly one. Without proposers nothing
# else can make it reject (a leader that moved under load would); their last datagrams are
# counted once two reports agree.
stop_one proposer0
stop_one proposer1
# Every report's rejects: for a higher promise (rejects_sent) and at or below the recovery
# fence (fence_rejects), where this one falls.
reject_values() {
	awk 'index($0, "paxos: counters acceptor 1:") == 1 {
		v = 0
		for (i = 1; i <= NF; i++)
			if (index($i, "rejects_sent=") == 1 || index($i, "fence_rejects=") == 1)
				v += substr($i, index($i, "=") + 1)
		print v }' "$WORK/acceptor1b.log"
}
rejects() { reject_values | tail -n 1; }
before=$(steady reject_values) ||
	fail "the recovered acceptor's rejects did not settle (last $(rejects))"
PREPARE=94cd505806010293010102
if is_unicast "$CONF"; then
	# To acceptor 1's own address, behind the byte by which the unicast transport tells the
	# acceptors group (0) from the others.
	TO=$(awk '$1 == "acceptor" && $2 == 1 { print $3 }' "$CONF")
	PREPARE=00$PREPARE
else
	TO=$(awk '$1 == "acceptors-group" { print $2 }' "$CONF")
fi
"$BUILD/paxos-send" "$TO" "$PREPARE" || fail "paxos-send failed"
rejected() { [ "$(rejects)" -gt "$before" ]; }
eventually 30 rejected ||
	fail "the recovered acceptor did not reject a ballot below its promise ($before, $(rejects))"
# Its last counters, printed as it stops, hold no other reject.
stop_one acceptor1b
[ "$(rejects)" -eq $((before + 1)) ] ||
	fail "the recovered acceptor rejected more than the one prepare ($before, $(rejects))"

stop_all
cmp -s "$WORK/learner0.out" "$WORK/learner1.out" || fail "learner outputs differ"
consecutive "$WORK/learner0.out" ||
	fail "learner instances are not consecutive from 1"
cut -d' ' -f2 "$WORK/learner0.out" | sort -u >"$WORK/delivered.set"
[ "$(comm -23 "$WORK/submitted.set" "$WORK/delivered.set" | wc -l)" -eq 0 ] ||
	fail "submitted values were never delivered"
echo "e2e_recovery: $COUNT values delivered identically by 2 learners across an acceptor" \
	"crash and recovery ($(($(wc -l <"$WORK/learner0.out") - COUNT)) delivered twice)"
