#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bounded memory by default, over real multicast in a private network namespace:
#  (a) memory acceptors with memory-retention 2000 take 20000 values of 5 kB (100 MB) and
#      stay far below that in memory: each trims as it goes (instances_trimmed);
#  (b) a learner started late from instance 1 is told the old instances were trimmed, skips
#      them, and delivers the rest;
#  (c) a second paxos-client starts its learner at the current instance: it does not replay
#      the history, finishes at once, and sees no duplicates.
# Usage: e2e_retention.sh BUILD_DIR SOURCE_DIR [RETENTION]  (RETENTION 0: unbounded, to compare)
set -eu
BUILD=$1
SRC=$2
RETENTION=${3:-2000}
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=20000
CONF=$WORK/paxos.conf
sed -e "s|^memory-retention .*|memory-retention $RETENTION|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 200|" "$(base_conf)" >"$CONF"
grep -q "^memory-retention $RETENTION\$" "$CONF" || fail "cannot set memory-retention"

rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }
last_iid() { tail -n 1 "$1" | cut -d' ' -f1; }

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
start learner0 paxos-learner -c "$CONF" -o "$WORK/learner0.out"
sleep 0.5

# (a) 5 kB values: one per instance (two do not fit in a datagram). At a rate the learners
# follow live: one that fell more than the retention behind would skip what was trimmed. 1000
# a second leaves a learner two seconds of slack; at 4000 a machine loaded with other work
# delivered 2400 a second, and learner 0 fell behind by more than the retention.
"$BUILD/paxos-client" -c "$CONF" --count $COUNT --rate 1000 --outstanding 64 --size 5000 \
	--resubmit-ms 500 --time-limit 120 >"$WORK/client1.log" 2>&1 ||
	fail "the first client did not get its $COUNT values delivered"
cat "$WORK/client1.log"
wait_lines "$WORK/learner0.out" $COUNT 60 || fail "learner 0 did not deliver every value"
highest=$(last_iid "$WORK/learner0.out")
[ "$highest" -gt $((4 * RETENTION)) ] || fail "only $highest instances: too few to test"
# 2000 x 5 kB is 10 MB; the learner of a learning acceptor keeps a window of values (up to
# 32 MB once every slot was used), and the buffers take some more: 50-60 MB. Without the bound
# the values alone are 100 MB more. A few acceptor ticks make the last trims (30 s: later on a
# busy machine).
bounded() { [ "$(rss_kb "$pid")" -lt $((80 * 1024)) ]; }
for i in 0 1 2; do
	eval "pid=\$PID_acceptor$i"
	[ "$RETENTION" -eq 0 ] || eventually 30 bounded || true
	rss=$(rss_kb "$pid")
	echo "acceptor $i: $((rss / 1024)) MB resident after $highest instances of 5 kB"
	[ "$RETENTION" -eq 0 ] && continue
	[ "$rss" -lt $((80 * 1024)) ] || fail "acceptor $i holds $((rss / 1024)) MB"
done

# (b) a learner from instance 1: the acceptors no longer have it
start learner1 paxos-learner -c "$CONF" -o "$WORK/learner1.out"
n=0
until [ "$(last_iid "$WORK/learner1.out" 2>/dev/null || echo 0)" = "$highest" ]; do
	n=$((n + 1))
	[ "$n" -gt 300 ] && fail "the late learner did not reach instance $highest in 30 s"
	sleep 0.1
done
if [ "$RETENTION" -gt 0 ]; then
	grep -q "paxos: learner: instances 1\.\.[0-9]* were trimmed before they were learned" \
		"$WORK/learner1.log" || fail "the late learner was not told of the trim"
	first=$(head -n 1 "$WORK/learner1.out" | cut -d' ' -f1)
	[ "$first" -gt 1 ] && [ "$first" -ge $((highest - RETENTION - 2000)) ] ||
		fail "the late learner started at instance $first"
	# Its values are learner 0's, from there on (once its last line is written whole: the
	# file is written in pieces, and a line counts once it ends).
	tail -n +"$(grep -n "^$first " "$WORK/learner0.out" | head -n 1 | cut -d: -f1)" \
		"$WORK/learner0.out" >"$WORK/learner0.tail"
	wait_lines "$WORK/learner1.out" "$(wc -l <"$WORK/learner0.tail")" 30 ||
		fail "the late learner did not write its last values"
	cmp -s "$WORK/learner0.tail" "$WORK/learner1.out" ||
		fail "the late learner's values differ from learner 0's"
	echo "late learner: skipped the trimmed instances, delivered $first..$highest"
fi

# (c) a second client: learns from the current instance, not from 1
started=$(date +%s%N)
"$BUILD/paxos-client" -c "$CONF" --count 200 --outstanding 8 --size 64 --json \
	--resubmit-ms 10000 --time-limit 60 >"$WORK/client2.json" 2>"$WORK/client2.log" ||
	fail "the second client did not get its values delivered"
took_ms=$((($(date +%s%N) - started) / 1000000))
cat "$WORK/client2.json"
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$WORK/client2.json"; }
[ "$(field first_instance)" -ge "$highest" ] ||
	fail "the second client learned from instance $(field first_instance), not $highest on"
[ "$(field duplicates)" -eq 0 ] || fail "the second client saw $(field duplicates) duplicates"
[ "$(field resubmits)" -eq 0 ] || fail "the second client resubmitted $(field resubmits) values"

stop_all
trimmed=$(grep "counters acceptor 0" "$WORK/acceptor0.log" | tail -n 1 |
	sed -n 's/.*instances_trimmed=\([0-9]*\).*/\1/p')
[ "$RETENTION" -eq 0 ] || [ "${trimmed:-0}" -gt 0 ] || fail "acceptor 0 never trimmed"
echo "e2e_retention: memory acceptors kept $RETENTION of $highest instances" \
	"($trimmed trims); a late learner skipped the rest; a new client learned from" \
	"instance $(field first_instance) in $took_ms ms"
