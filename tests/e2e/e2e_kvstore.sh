#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The sample key-value store (sample/kvstore) end to end, over real multicast (or unicast with
# PAXOS_TRANSPORT=unicast; the store's replies use its multicast reply group either way) in a
# private network namespace: three replicas, each hosting acceptor, proposer and learner, with
# LMDB storage and snapshots every 50 commands.
#  1. Three concurrent clients (one submitting every command twice): each gets the results it
#     expects, and all replicas end with identical state holding each command exactly once.
#  2. Replica 0 (the leader) is killed with SIGKILL, clients keep writing, it restarts: it
#     loads its snapshot, catches up, converges; acceptors trimmed up to (never past) the
#     lowest snapshot while it was down, and further once it was back (trim all).
#  3. With trim own, a replica left behind the trim point fetches a peer's snapshot, installs
#     it and converges.
# Usage: e2e_kvstore.sh BUILD_DIR SOURCE_DIR
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
	"$BASE" >"$CONF"
# Unicast: proposer 2 needs an address too.
local_members "$CONF" || fail "cannot write the member addresses"
sed -e "s|^snapshot-every .*|snapshot-every 50|" "$SRC/$KV/kvstore.conf" >"$KCONF"
grep -q "^storage lmdb" "$CONF" && grep -q "^snapshot-every 50" "$KCONF" ||
	fail "cannot write the test configuration"

. "$SRC/tests/e2e/kvstore.sh"

# ---- 1. concurrent clients, exactly once ----
for r in 0 1 2; do replica kv$r $r; done
sleep 0.5
round 1
converge 300 "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"
dups=$(sed -n 's/^duplicates //p' "$WORK/state0")
[ "$dups" -ge 1 ] || fail "no second copy of a --twice command was delivered"
echo "round 1: 3 clients x 100 commands, replicas identical, 300 applied, $dups duplicates dropped"

# ---- 2. kill -9 replica 0, keep writing, restart it ----
[ -f "$WORK/r0/snapshot" ] || fail "replica 0 took no snapshot"
kill -KILL "$PID_kv0"
wait "$PID_kv0" 2>/dev/null || true
snap=$(last_number "$WORK/kv0.log" "snapshot at instance")
round 2
converge 600 "1 2" "$PID_kv1" "$PID_kv2"
# A trim repeat or two (30 s: a loaded replica is slow to send them).
trim_of() { last_number "$WORK/$1.log" "may drop instances up to"; }
eventually 30 test -n "$(trim_of kv1)" || true
down_trim=$(trim_of kv1)
[ -n "$down_trim" ] && [ "$down_trim" -le "$snap" ] ||
	fail "while replica 0 was down, trim went to ${down_trim:-nothing}, past its snapshot $snap"
replica kv0b 0
converge 600 "0 1 2" "$PID_kv0b" "$PID_kv1" "$PID_kv2"
grep -q "loaded $WORK/r0/snapshot: instances up to $snap," "$WORK/kv0b.log" ||
	fail "restarted replica 0 did not load its snapshot at instance $snap"
round 3
converge 900 "0 1 2" "$PID_kv0b" "$PID_kv1" "$PID_kv2"
past_snap() { [ "$(trim_of kv1)" -gt "$snap" ]; }
eventually 30 past_snap || fail "trimming did not resume after replica 0 came back"
final_trim=$(trim_of kv1)
# trimmed NAME ID: the acceptor of replica ID (log NAME) reported instances it trimmed.
trimmed() { [ "$(counter "$1" "acceptor $2" instances_trimmed)" -gt 0 ] 2>/dev/null; }
for r in 0 1 2; do
	log=kv$r
	[ $r -ne 0 ] || log=kv0b
	eventually 30 trimmed $log $r || fail "the acceptor in $log never trimmed"
done
! grep -q "trimmed before" "$WORK/kv0b.log" || fail "replica 0 missed trimmed instances"
echo "round 2-3: replica 0 killed at snapshot $snap, restarted from it, converged on 900;" \
	"trim held at $down_trim while it was down, then reached $final_trim"

# ---- 3. trim own: a replica left behind fetches a peer's snapshot ----
stop_all
sed -i -e "s|^trim .*|trim own|" "$KCONF"
for r in 0 1 2; do replica own$r $r; done
sleep 0.5
kill -KILL "$PID_own2"
wait "$PID_own2" 2>/dev/null || true
round 4
round 5
converge 1500 "0 1" "$PID_own0" "$PID_own1"
# Replica 2 has nothing: once acceptors 0 and 1 trimmed, no quorum holds its first instances.
eventually 30 trimmed own0 0 && eventually 30 trimmed own1 1 ||
	fail "the acceptors of replicas 0 and 1 did not trim"
replica caught2 2
converge 1500 "0 1 2" "$PID_own0" "$PID_own1" "$PID_caught2"
grep -q "installed a peer's snapshot" "$WORK/caught2.log" ||
	fail "replica 2 did not install a peer's snapshot"
round 6
converge 1800 "0 1 2" "$PID_own0" "$PID_own1" "$PID_caught2"
! grep -q "trimmed before this replica applied" "$WORK/caught2.log" ||
	fail "replica 2 missed instances"
echo "round 4-6: with trim own, lagging replica 2 installed a peer's snapshot ($(last_number \
	"$WORK/caught2.log" "instances up to")) and converged on 1800"
stop_all
echo "e2e_kvstore: passed"
