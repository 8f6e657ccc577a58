#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Reconfiguration with partitions: each partition's acceptor set changes through its own log
# (paxos-admin --partition P), independently of the others. Two partitions (learner-merge
# no), 4 acceptor processes each serving both, 0..2 members at the start (initial-members 3,
# membership-alpha 256), 2 proposers leading one partition each, inside a private network
# namespace over the transport of base_conf (multicast, or unicast with
# PAXOS_TRANSPORT=unicast):
#  1. under load on both partitions, acceptor 2 is replaced by 3 in partition 1 alone:
#     partition 1 is in configuration 2 (0,1,3), partition 0 still in 1 (0,1,2);
#  2. then in partition 0 too; acceptor 2 is stopped, and both partitions go on;
#  3. acceptor 1 is stopped as well: acceptors 0 and 3 alone choose values in both;
#  4. two learners deliver the same per partition, every client value once.
# Usage: e2e_reconfig_partitions.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=$WORK/reconfig-partitions.conf
sed -e 's/^acceptors .*/acceptors 4/' -e 's/^membership-alpha .*/membership-alpha 256/' \
	-e 's/^initial-members .*/initial-members 3/' -e 's/^partitions .*/partitions 2/' \
	"$(base_conf)" >"$CONF"
grep -q "^partitions 2$" "$CONF" || fail "cannot set partitions in $CONF"
local_members "$CONF"

admin() { # admin PARTITION ARGS...: paxos-admin on partition PARTITION, must succeed
	p=$1
	shift
	retry_admin "$WORK/admin.out" "$WORK/admin.err" \
		"$BUILD/paxos-admin" -c "$CONF" --partition "$p" "$@" || fail "paxos-admin --partition $p $*: $(cat "$WORK/admin.err")"
	echo "e2e_reconfig_partitions: partition $p: $* -> $(tail -n 1 "$WORK/admin.out")"
}
members() { # members PARTITION: the acceptors paxos-admin status shows in force
	admin "$1" status >/dev/null
	sed -n 's/^configuration .*: acceptors \([0-9,]*\) (quorum.*/\1/p' "$WORK/admin.out"
}
both() { # both COUNT NAME: COUNT values on each partition at once, every one delivered
	partition_client "$2-p0" 0 "$1"
	partition_client "$2-p1" 1 "$1"
	clients_served "$2-p0" "$2-p1"
}

for i in 0 1 2 3; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start proposer1 paxos-proposer -c "$CONF" -i 1
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5
both 1000 warm

# 1. Partition 1 alone, under load on both.
partition_client during-p0 0 3000
partition_client during-p1 1 3000
admin 1 replace-acceptor 2 3
grep -q "acceptors 0,1,3$" "$WORK/admin.out" || fail "partition 1: 2 was not replaced by 3"
clients_served during-p0 during-p1
[ "$(members 0)" = "0,1,2" ] || fail "partition 0 changed with partition 1: $(members 0)"
[ "$(members 1)" = "0,1,3" ] || fail "partition 1 is not in 0,1,3: $(members 1)"

# 2. Partition 0 too; then acceptor 2 serves no partition and stops.
partition_client during2-p0 0 3000
partition_client during2-p1 1 3000
admin 0 replace-acceptor 2 3
grep -q "acceptors 0,1,3$" "$WORK/admin.out" || fail "partition 0: 2 was not replaced by 3"
clients_served during2-p0 during2-p1
stop_one acceptor2
both 1000 after

# 3. Acceptors 0 and 3 alone: a quorum of configuration 2 in both partitions, of neither's
# first configuration.
stop_one acceptor1
both 1000 last

# 4. The learners agree per partition and hold every value once.
sent=$((2 * (1000 + 3000 + 3000 + 1000 + 1000)))
i=0
# (resubmitted values may add lines: wait until both hold the same number)
until [ "$(wc -l <"$WORK/learner0.out")" -ge "$sent" ] &&
	[ "$(wc -l <"$WORK/learner1.out")" -eq "$(wc -l <"$WORK/learner0.out")" ]; do
	i=$((i + 1))
	[ "$i" -le 600 ] || fail "learners hold $(wc -l <"$WORK/learner0.out") and $(wc -l <"$WORK/learner1.out") lines, want $sent"
	sleep 0.1
done
for p in 0 1; do
	for l in 0 1; do awk -v p=$p '$1 == p' "$WORK/learner$l.out" >"$WORK/l$l-p$p"; done
	cmp -s "$WORK/l0-p$p" "$WORK/l1-p$p" || fail "learners differ on partition $p"
	dups=$(cut -d' ' -f3 "$WORK/l0-p$p" | sort | uniq -d | wc -l)
	# A resubmitted value may be chosen twice (at-least-once); the client counts those. So
	# may one in flight when a heartbeat missed under load moves a leader (leader_moved).
	resubmits=$(cat "$WORK"/*-p$p.log | sed -n 's/^resubmits \([0-9]*\),.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }')
	[ "$dups" -le "$resubmits" ] || leader_moved "$WORK"/proposer*.log ||
		fail "partition $p: $dups values delivered twice, $resubmits resubmits"
	echo "e2e_reconfig_partitions: partition $p: $(wc -l <"$WORK/l0-p$p") values, the same at both learners ($dups twice, $resubmits resubmits)"
done
echo "e2e_reconfig_partitions: OK"
