#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The sample key-value store's snapshots carry the configuration history (sample/README.md,
# "Snapshots"), over multicast or unicast with PAXOS_TRANSPORT=unicast: three replicas (each
# acceptor, proposer and learner, LMDB storage, a snapshot every 50 commands) and a fourth
# acceptor, membership-alpha 256, acceptors 0..2 the members at the start.
#  1. Clients write; paxos-admin adds acceptor 3 (configuration 2); clients write again, so
#     the replicas' snapshots are taken with configuration 2.
#  2. Replica 2 stops, and its membership files (beside its acceptor's store and with its
#     proposer's epoch) are deleted, as on a new machine with its snapshot: restarted, it takes
#     configuration 2 from its snapshot, and converges with the others under more writes.
# Usage: e2e_kvstore_membership.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
KV=sample/kvstore
[ -x "$BUILD/$KV/kvstore-replica" ] || fail "$BUILD/$KV/kvstore-replica is not built"
BASE=$(base_conf)
CONF=$WORK/paxos.conf
KCONF=$WORK/kvstore.conf
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^proposers .*|proposers 3|" -e "s|^counters-interval-ms .*|counters-interval-ms 200|" \
	-e "s|^acceptors .*|acceptors 4|" -e "s|^initial-members .*|initial-members 3|" \
	-e "s|^membership-alpha .*|membership-alpha 256|" "$BASE" >"$CONF"
local_members "$CONF" || fail "cannot write the member addresses"
sed -e "s|^snapshot-every .*|snapshot-every 50|" "$SRC/$KV/kvstore.conf" >"$KCONF"
grep -q "^membership-alpha 256" "$CONF" && grep -q "^snapshot-every 50" "$KCONF" ||
	fail "cannot write the test configuration"

. "$SRC/tests/e2e/kvstore.sh"

# ---- 1. writes, a change, writes ----
for r in 0 1 2; do replica kv$r $r; done
start acceptor3 paxos-acceptor -c "$CONF" -i 3
sleep 0.5
round 1
converge 300 "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"
retry_admin "$WORK/admin.out" "$WORK/admin.err" \
	"$BUILD/paxos-admin" -c "$CONF" add-acceptor 3 ||
	fail "paxos-admin add-acceptor 3: $(cat "$WORK/admin.err")"
grep -q "acceptors 0,1,2,3$" "$WORK/admin.out" || fail "acceptor 3 was not added"
echo "round 1: 300 commands, then $(cat "$WORK/admin.out")"
round 2
converge 600 "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"

# ---- 2. replica 2 from its snapshot alone ----
kill "$PID_kv2"
wait "$PID_kv2" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_kv2" | tr '\n' ' ')
snap=$(last_number "$WORK/kv2.log" "snapshot at instance")
[ -n "$snap" ] || fail "replica 2 took no snapshot"
for dir in acceptor-2 proposer-2; do
	grep -q "^configuration 2 " "$WORK/store/$dir/membership" ||
		fail "$dir did not keep configuration 2: $(cat "$WORK/store/$dir/membership")"
	rm "$WORK/store/$dir/membership"
done
replica kv2b 2
eventually 30 grep -q "configuration 2 from the snapshot" "$WORK/kv2b.log" ||
	fail "replica 2 did not take configuration 2 from its snapshot"
echo "round 2: replica 2 restarted without its membership files:" \
	"$(grep -m 1 "from the snapshot" "$WORK/kv2b.log")"
# Written as the replica adds its acceptor, just after it logs the snapshot's configuration.
eventually 30 grep -qs "^configuration 2 " "$WORK/store/acceptor-2/membership" ||
	fail "replica 2 did not keep the snapshot's configuration beside its acceptor"
round 3
converge 900 "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2b"
echo "round 3: replicas identical on 900 commands, replica 2 restarted from its snapshot" \
	"at instance $snap with configuration 2"
