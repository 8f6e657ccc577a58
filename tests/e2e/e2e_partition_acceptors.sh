#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Partitions with acceptor sets of their own ("partition-acceptors spread"): 6 acceptors and 2
# partitions, so acceptors 0-2 serve partition 0 and 3-5 partition 1, inside a private
# network namespace, over the transport of base_conf:
#  1. each acceptor process hosts only its partition (and says its number in it); clients of
#     both partitions get every value delivered, and both learners deliver the same;
#  2. two of partition 1's acceptors (4 and 5) are killed: partition 1 has no quorum left,
#     while partition 0, whose acceptors all live, still delivers every value;
#  3. acceptors 4 and 5 are back (LMDB stores: they keep their promises): partition 1 is
#     served again;
#  4. an acceptor named for a partition it does not serve is refused with the reason.
# Usage: e2e_partition_acceptors.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^partitions .*|partitions 2|" -e "s|^acceptors .*|acceptors 6|" \
	-e "s|^partition-acceptors .*|partition-acceptors spread|" -e "s|^storage .*|storage lmdb|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 200|" "$(base_conf)" >"$CONF"
if is_unicast "$CONF"; then
	for i in 3 4 5; do echo "acceptor $i 127.0.0.1:$((7201 + i))" >>"$CONF"; done
fi
grep -q "^partition-acceptors spread$" "$CONF" || fail "cannot set partition-acceptors"

for i in 0 1 2 3 4 5; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5

# 1. Each acceptor hosts its own partition only (once partition 0 served values, acceptors 0-2
# are past their start and said what they host).
eventually 30 grep -q "acceptor 4 is acceptor 1 of partition 1" "$WORK/acceptor4.log" ||
	fail "acceptor 4 does not say it is acceptor 1 of partition 1: $(head -n 3 "$WORK/acceptor4.log")"
partition_client c0 0 2000
partition_client c1 1 2000
clients_served c0 c1
for i in 0 1 2; do
	grep -q "partition 1" "$WORK/acceptor$i.log" && fail "acceptor $i hosts partition 1"
done
echo "e2e_partition_acceptors: 1. acceptors 0-2 serve partition 0 and 3-5 partition 1; 2000 values each delivered"

# 2. Partition 1 loses its quorum; partition 0 goes on.
for i in 4 5; do
	eval "kill -9 \$PID_acceptor$i"
	eval "wait \$PID_acceptor$i 2>/dev/null || true"
done
partition_client c2 0 1000
clients_served c2
echo "e2e_partition_acceptors: 2. with 2 of partition 1's 3 acceptors dead, partition 0 delivered 1000 values"

# 3. Acceptors 4 and 5 back: partition 1 has a quorum again.
for i in 4 5; do start acceptor${i}b paxos-acceptor -c "$CONF" -i $i; done
partition_client c3 1 1000
clients_served c3
grep -q "storage-path/partition-1/acceptor-1\|partition-1/acceptor-1 (recovered" "$WORK/acceptor4b.log" ||
	fail "acceptor 4 did not recover its store: $(head -n 3 "$WORK/acceptor4b.log")"
echo "e2e_partition_acceptors: 3. acceptors 4 and 5 restarted from their stores; partition 1 delivered 1000 values"

# 4. A partition the acceptor does not serve.
if "$BUILD/paxos-acceptor" -c "$CONF" -i 1 --partitions 1 >"$WORK/refused.log" 2>&1; then
	fail "acceptor 1 started for partition 1"
fi
grep -q "acceptor 1 does not serve partition 1" "$WORK/refused.log" ||
	fail "no reason given: $(cat "$WORK/refused.log")"
echo "e2e_partition_acceptors: 4. acceptor 1 refused for partition 1, with the reason"

# The learners' files are flushed every 100 ms, a line at times in two pieces: whole lines are
# compared, once both learners agree (30 s: a loaded learner's file may lag).
whole() { if [ -n "$(tail -c 1 "$1")" ]; then sed '$d' "$1"; else cat "$1"; fi; }
per_partition() {
	for p in 0 1; do
		whole "$WORK/learner0.out" | grep "^$p " >"$WORK/l0.$p" || true
		whole "$WORK/learner1.out" | grep "^$p " >"$WORK/l1.$p" || true
	done
	for p in 0 1; do
		[ -s "$WORK/l0.$p" ] && cmp -s "$WORK/l0.$p" "$WORK/l1.$p" || return 1
	done
}
eventually 30 per_partition || true
for p in 0 1; do
	[ -s "$WORK/l0.$p" ] || fail "learner 0 delivered nothing of partition $p"
	n0=$(wc -l <"$WORK/l0.$p")
	head -n "$n0" "$WORK/l1.$p" | cmp -s - "$WORK/l0.$p" ||
		head -n "$(wc -l <"$WORK/l1.$p")" "$WORK/l0.$p" | cmp -s - "$WORK/l1.$p" ||
		fail "learners differ in partition $p"
done
echo "e2e_partition_acceptors: learners agree per partition"
echo "e2e_partition_acceptors: OK"
