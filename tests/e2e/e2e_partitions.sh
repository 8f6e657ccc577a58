#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two partitions (paxos.conf "partitions 2") on one cluster of 3 acceptors and 2 proposers,
# inside a private network namespace, over the transport of base_conf (multicast, or unicast
# with PAXOS_TRANSPORT=unicast):
#  1. each proposer leads one partition (0 and 1), and clients of both partitions, at once,
#     get every value delivered; both learners deliver the same, per partition; a proposer
#     follows the other partition lean (learns none of its log);
#  2. the leader of partition 1 is killed (kill -9) under load: partition 1 moves to proposer
#     0, while partition 0 goes on; its client, which would resubmit only after 300 s (past
#     its time limit), still gets every value delivered: the new leader announces itself and
#     the client submits again at once what waited on the dead one;
#  3. proposer 1 restarts under load: partition 1 comes back to it by the same rule, and the
#     values proposer 0 queued for it, dropped when it went lean again, are submitted again
#     (its client, again past its time limit with a resubmit, would fail had one been lost;
#     how many there are depends on the moment: none when proposer 0 queued none);
#  4. paxos-oracle --partition 1 moves partition 1 alone, and --auto gives it back;
#  5. a client with --partitions 2 spreads its values over both;
#  6. one with --spread key sends each key to one partition, and reports each partition;
# and a learner started with --partitions 1 delivers partition 1 alone, the same.
# Usage: e2e_partitions.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^partitions .*|partitions 2|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 200|" "$(base_conf)" >"$CONF"
grep -q "^partitions 2$" "$CONF" || fail "cannot set partitions in paxos.conf"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0 --metrics-listen 127.0.0.1:9531
start proposer1 paxos-proposer -c "$CONF" -i 1
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
start learner2 paxos-learner -c "$CONF" --partitions 1 -o "$WORK/learner2.out"
sleep 0.5

leads() { # leads LOG PROPOSER PARTITION: the last leader line of LOG names PROPOSER (within
	# 30 s: a busy machine can be slow to elect)
	for _ in $(seq 300); do
		grep "^paxos: proposer [0-9]* partition $3: leader is" "$WORK/$1.log" | tail -n 1 |
			grep -q "leader is \(now \)\{0,1\}$2 " && return 0
		sleep 0.1
	done
	return 1
}
leads proposer0 0 0 && leads proposer1 0 0 || fail "proposer 0 does not lead partition 0"
leads proposer0 1 1 && leads proposer1 1 1 || fail "proposer 1 does not lead partition 1"

# 1. Both partitions at once, each led by its own proposer.
partition_client c0 0 2000
partition_client c1 1 2000
clients_served c0 c1
proposed() { # proposed PROPOSER PARTITION [LOG]: values it proposed for that partition
	n=$(counter "${3:-proposer$1}" "partition $2 proposer $1" values_proposed)
	echo "${n:-0}"
}
learned() { # learned PROPOSER PARTITION: instances its learner delivered of that partition
	n=$(counter "proposer$1" "partition $2 learner $1" instances_delivered)
	echo "${n:-0}"
}
# took PROPOSER PARTITION: PROPOSER led PARTITION for a while, past the rule: a heartbeat
# missed under load (or a leader out for want of an acceptor quorum, check-quorum) lets the
# other proposer take a partition until it hears its leader again.
took() { grep -q "^paxos: proposer $1 partition $2: leader is now $1 " "$WORK/proposer$1.log"; }
# The counters are printed every 200 ms: each partition's 2000 values show in time.
all_proposed() {
	[ $(($(proposed 0 0) + $(proposed 1 0))) -ge 2000 ] &&
		[ $(($(proposed 0 1) + $(proposed 1 1))) -ge 2000 ]
}
eventually 30 all_proposed ||
	fail "proposer 0 proposed $(proposed 0 0) values of partition 0 and proposer 1 $(proposed 1 1) of partition 1, want 2000 each"
# A follower is lean: it neither queues the values of a partition it does not lead nor learns
# its log.
for p in 0 1; do
	o=$((1 - p))
	[ "$(proposed $p $o)" -eq 0 ] || took $p $o ||
		fail "proposer $p proposed $(proposed $p $o) values for partition $o, which it never led"
	[ "$(learned $p $o)" -eq 0 ] || took $p $o ||
		fail "a follower learned the log it does not lead: proposer $p delivered $(learned $p $o) instances of partition $o"
done
[ "$(learned 0 0)" -gt 0 ] || fail "proposer 0 learned nothing of the partition it leads"
# Proposer 0's /metrics labels every sample with its partition.
metrics_rule() {
	curl -s http://127.0.0.1:9531/metrics >"$WORK/metrics.txt" || return 1
	for p in 0 1; do
		grep -q "^paxos_proposer_leader{role=\"proposer\",id=\"0\",partition=\"$p\"} $p\$" \
			"$WORK/metrics.txt" || return 1
	done
}
eventually 30 metrics_rule || fail "proposer 0's /metrics does not show partition p led by p"
echo "e2e_partitions: 1. each proposer led one partition; 2000 values each delivered"
echo "e2e_partitions:    the followers learned nothing of the partition they do not lead"
for p in 0 1; do
	! took $p $((1 - p)) ||
		echo "e2e_partitions:    (proposer $p led partition $((1 - p)) for a while: a heartbeat missed)"
done

# new_leader_resubmits NAME: the values client NAME submitted again at a new leader
new_leader_resubmits() {
	sed -n "s/^resubmits .*; \([0-9]*\) of the resubmits at a partition's new leader$/\1/p" \
		"$WORK/$1.log" | grep . || echo 0
}
# Open loop, so that values are outstanding when the leader changes; no resubmit on timeout.
LOAD="--rate 1000 --resubmit-ms 300000"

# grows NAME PROPOSER PARTITION FROM: PROPOSER (its log NAME) proposed more than FROM values
# of PARTITION: the load reached it.
grows() { [ "$(proposed "$2" "$3" "$1")" -gt "$4" ]; }

# 2. The leader of partition 1 dies under load: proposer 0 takes it, partition 0 goes on. The
# clients run until the new leader served partition 1, however long the change takes.
partition_client c2 0 drain "$LOAD"
partition_client c3 1 drain "$LOAD"
eventually 30 grows proposer1 1 1 "$(proposed 1 1)" || fail "no load reached proposer 1"
kill -9 "$PID_proposer1"
wait "$PID_proposer1" 2>/dev/null || true
leads proposer0 0 1 || fail "partition 1 did not move to proposer 0"
eventually 30 grows proposer0 0 1 "$(proposed 0 1)" ||
	fail "proposer 0 proposed nothing for partition 1 after it took it"
drain c2
drain c3
clients_served c2 c3
[ "$(new_leader_resubmits c3)" -gt 0 ] ||
	fail "the client of partition 1 submitted nothing again at its new leader: $(cat "$WORK/c3.log")"
echo "e2e_partitions: 2. partition 1 moved to proposer 0 after proposer 1 died; both served,"
echo "e2e_partitions:    $(new_leader_resubmits c3) values of partition 1 submitted again at its new leader"

# 3. Proposer 1 is back under load: partition 1 returns to it.
partition_client c4 0 drain "$LOAD"
partition_client c5 1 drain "$LOAD"
eventually 30 grows proposer0 0 1 "$(proposed 0 1)" || fail "no load reached proposer 0"
start proposer1b paxos-proposer -c "$CONF" -i 1
leads proposer0 1 1 || fail "partition 1 did not return to proposer 1"
eventually 30 grows proposer1b 1 1 0 ||
	fail "proposer 1 proposed nothing for partition 1 after it took it back"
drain c4
drain c5
clients_served c4 c5
echo "e2e_partitions: 3. partition 1 returned to proposer 1; both served, $(new_leader_resubmits c5) values submitted again"

# 4. The oracle moves partition 1 alone: to proposer 0, then back to the rule.
"$BUILD/paxos-oracle" -c "$CONF" --partition 1 --leader 0 || fail "paxos-oracle failed"
leads proposer0 0 1 || fail "the oracle did not move partition 1 to proposer 0"
leads proposer0 0 0 || fail "the oracle's order for partition 1 moved partition 0"
"$BUILD/paxos-oracle" -c "$CONF" --partition 1 --auto || fail "paxos-oracle failed"
leads proposer0 1 1 || fail "partition 1 did not return to proposer 1 after --auto"
echo "e2e_partitions: 4. the oracle moved partition 1 alone, and gave it back"

# 5. One client spreads its values over both partitions, round-robin.
partition_client c6 x 1000
clients_served c6
grep -q "^partition 0: 500 values delivered" "$WORK/c6.log" &&
	grep -q "^partition 1: 500 values delivered" "$WORK/c6.log" ||
	fail "the client did not spread its values over both partitions: $(cat "$WORK/c6.log")"
echo "e2e_partitions: 5. a client spread 1000 values over both partitions, 500 each"

# 6. By key: the key follows the value's 16-byte tag; each partition gets some keys.
partition_client c7 key 1000
clients_served c7
grep -q "^spread by key hash over 2 partitions" "$WORK/c7.log" ||
	fail "the client did not say how it spread: $(cat "$WORK/c7.log")"
k0=$(sed -n 's/^partition 0: \([0-9]*\) values delivered (of [0-9]* submitted), .* p99 .*/\1/p' "$WORK/c7.log")
k1=$(sed -n 's/^partition 1: \([0-9]*\) values delivered (of [0-9]* submitted), .* p99 .*/\1/p' "$WORK/c7.log")
[ -n "$k0" ] && [ -n "$k1" ] && [ "$k0" -gt 0 ] && [ "$k1" -gt 0 ] &&
	[ $((k0 + k1)) -eq 1000 ] ||
	fail "the client did not report both partitions' share of 1000: $(cat "$WORK/c7.log")"
echo "e2e_partitions: 6. a client spread 1000 values by key: $k0 to partition 0, $k1 to 1"

# The learners delivered the same, partition by partition: at least what the clients had
# delivered (they wait, 30 s at most, for a loaded learner to catch up).
delivered() { sed -n 's/^delivered \([0-9]*\) of .*/\1/p' "$WORK/$1.log"; }
spread() { sed -n "s/^partition $2: \([0-9]*\) values delivered.*/\1/p" "$WORK/$1.log"; }
want0=$(($(delivered c0) + $(delivered c2) + $(delivered c4) + $(spread c6 0) + k0))
want1=$(($(delivered c1) + $(delivered c3) + $(delivered c5) + $(spread c6 1) + k1))
split_learners() {
	for p in 0 1; do
		for i in 0 1; do awk -v p=$p '$1 == p' "$WORK/learner$i.out" >"$WORK/learner$i.p$p"; done
	done
	[ "$(wc -l <"$WORK/learner0.p0")" -ge "$want0" ] &&
		[ "$(wc -l <"$WORK/learner0.p1")" -ge "$want1" ] &&
		cmp -s "$WORK/learner0.p0" "$WORK/learner1.p0" &&
		cmp -s "$WORK/learner0.p1" "$WORK/learner1.p1" &&
		cmp -s "$WORK/learner0.p1" "$WORK/learner2.out"
}
eventually 30 split_learners || true
for p in 0 1; do
	n=$(wc -l <"$WORK/learner0.p$p")
	eval "want=\$want$p"
	[ "$n" -ge "$want" ] || fail "learner 0 delivered $n values of partition $p, want $want"
	cmp -s "$WORK/learner0.p$p" "$WORK/learner1.p$p" ||
		fail "the learners differ on partition $p"
done
awk '$1 != 1' "$WORK/learner2.out" | grep -q . && fail "the learner of partition 1 alone delivered another"
cmp -s "$WORK/learner0.p1" "$WORK/learner2.out" ||
	fail "the learner of partition 1 alone differs from learner 0 on partition 1"
# Client 77's values (tag "PXCL", id 77): every key went to one partition only.
awk '$3 ~ /^5058434c4d000000/ { key = substr($3, 33, 16)
	if ((key in part) && part[key] != $1) bad++
	part[key] = $1; n++; seen[$1] = 1 }
	END { if (bad || n < 1000 || !(0 in seen) || !(1 in seen)) {
		print n " values, " bad " keys in two partitions"; exit 1 } }' "$WORK/learner0.out" ||
	fail "keys of the --spread key client went to more than one partition"
echo "e2e_partitions: both learners delivered the same 2 logs ($(wc -l <"$WORK/learner0.p0") and $(wc -l <"$WORK/learner0.p1") values)"
stop_all
