#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Snapshot transfer end to end (paxos_node_offer_snapshot, paxos_node_on_install_snapshot),
# with the sample key-value store over multicast (or unicast with PAXOS_TRANSPORT=unicast) in
# a private network namespace. Replicas 0 and 1 (acceptor, proposer and learner each) take a
# snapshot every 50 commands and trim their acceptors up to it (trim own), with max-datagram
# 1024, so that a snapshot takes many chunks and several windows. Under load, an empty replica
# 2 (a learner only, nothing in its directory) starts: it finds its first instances trimmed,
# fetches a peer's snapshot, installs it, goes on from the log and reaches the same state.
# The cluster shares an auth-key-file.
# Usage: e2e_snapshot.sh BUILD_DIR SOURCE_DIR
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
	-e "s|^max-datagram .*|max-datagram 1024|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 200|" "$BASE" >"$CONF"
local_members "$CONF" || fail "cannot write the member addresses"
# With a key: the transfer's datagrams are sealed and checked like every other.
"$BUILD/paxos-keygen" "$WORK/cluster.key" 2>/dev/null || fail "paxos-keygen failed"
echo "auth-key-file $WORK/cluster.key" >>"$CONF"
sed -e "s|^snapshot-every .*|snapshot-every 50|" -e "s|^trim .*|trim own|" \
	"$SRC/$KV/kvstore.conf" >"$KCONF"
grep -q "^max-datagram 1024" "$CONF" && grep -q "^trim own" "$KCONF" ||
	fail "cannot write the test configuration"

. "$SRC/tests/e2e/kvstore.sh"

# bulk NAME: 200 puts of 100-byte values, so that a snapshot holds more than 20 kB.
bulk() {
	v=$(printf '%0100d' 7)
	for i in $(seq 1 200); do printf 'put %s-%s %s\n' "$1" "$i" "$v"; done >"$WORK/$1.cmds"
	cli -f "$WORK/$1.cmds" >"$WORK/$1.out" 2>"$WORK/$1.err" || fail "bulk $1: the client failed"
	[ "$(grep -c '^OK$' "$WORK/$1.out")" -eq 200 ] || fail "bulk $1: not every put succeeded"
}

replica kv0 0
replica kv1 1
sleep 0.5
bulk b1
round 1
converge 500 "0 1" "$PID_kv0" "$PID_kv1"
trimmed() { [ "$(counter "$1" "acceptor $2" instances_trimmed)" -gt 0 ] 2>/dev/null; }
eventually 30 trimmed kv0 0 && eventually 30 trimmed kv1 1 ||
	fail "the acceptors of replicas 0 and 1 did not trim"

# Under load: the empty replica starts while clients write.
bulk b2 &
load=$!
: >"$WORK/kv2.log"
start kv2 $KV/kvstore-replica -c "$CONF" -k "$KCONF" -i 2 -d "$WORK/r2"
wait "$load" || fail "the load during the transfer failed"
round 2
converge 1000 "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"
grep -q "installed a peer's snapshot: instances up to" "$WORK/kv2.log" ||
	fail "replica 2 did not install a peer's snapshot"
! grep -q "trimmed before this replica applied" "$WORK/kv2.log" ||
	fail "replica 2 was told to copy a snapshot by hand"
installed() { [ "$(counter kv2 "learner 0" snapshots_installed)" -ge 1 ] 2>/dev/null; }
eventually 30 installed || fail "replica 2 counted no snapshot installed"
sent() {
	[ "$(counter kv0 "learner 0" snapshots_sent)" -ge 1 ] 2>/dev/null ||
		[ "$(counter kv1 "learner 0" snapshots_sent)" -ge 1 ] 2>/dev/null
}
eventually 30 sent || fail "neither replica 0 nor 1 counted a snapshot sent"
snap=$(last_number "$WORK/kv2.log" "instances up to")
echo "e2e_snapshot: empty replica 2 installed a peer's snapshot of instances up to $snap" \
	"($(grep -c 'snapshot at instance' "$WORK/kv0.log") snapshots at replica 0) and converged" \
	"on 1000 commands"
stop_all
echo "e2e_snapshot: passed"
