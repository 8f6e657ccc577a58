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

replica() { # replica NAME ID: starts replica ID (acceptor + proposer + learner)
	: >"$WORK/$1.log"
	start "$1" $KV/kvstore-replica -c "$CONF" -k "$KCONF" -i "$2" -d "$WORK/r$2" \
		--acceptor --proposer
	# Its first line comes after it set SIGUSR1 aside for dumps.
	wait_lines "$WORK/$1.log" 1 10 || fail "replica $2 ($1) did not start"
}
cli() { # cli ARGS...
	"$BUILD/$KV/kvstore-cli" -c "$CONF" -k "$KCONF" --timeout 20 "$@"
}

# workload ROUND CLIENT: a script of 100 commands on keys of this client (so the results are
# known in advance: OUT.expect) plus puts to one key every client writes.
workload() {
	base=$WORK/w$1-$2
	: >"$base.cmds"
	: >"$base.expect"
	for i in $(seq 1 20); do
		k=c$2-r$1-$i
		printf 'put %s v%s\ncas %s v%s w%s\nget %s\nput shared %s\n' \
			"$k" "$i" "$k" "$i" "$i" "$k" "$k" >>"$base.cmds"
		printf 'OK\nOK\nOK w%s\nOK\n' "$i" >>"$base.expect"
	done
	for i in $(seq 1 10); do
		k=c$2-r$1-$i
		printf 'delete %s\nget %s\n' "$k" "$k" >>"$base.cmds"
		printf 'OK\nNOT_FOUND\n' >>"$base.expect"
	done
}

# round ROUND: three clients at once, client 0 submitting everything twice.
round() {
	pids=""
	for c in 0 1 2; do
		workload "$1" $c
		twice=""
		[ $c -eq 0 ] && twice=--twice
		cli $twice -f "$WORK/w$1-$c.cmds" >"$WORK/w$1-$c.out" 2>"$WORK/w$1-$c.err" &
		pids="$pids $!"
	done
	for pid in $pids; do wait "$pid" || fail "round $1: a client failed"; done
	for c in 0 1 2; do
		cmp -s "$WORK/w$1-$c.out" "$WORK/w$1-$c.expect" ||
			fail "round $1: client $c got unexpected results"
	done
}

# converge COMMANDS "IDS" PIDS...: until the dumps (SIGUSR1) of replicas IDS, running as
# PIDS, are the same and count COMMANDS commands applied.
converge() {
	want=$1
	ids=$2
	shift 2
	first=${ids%% *}
	i=0
	while :; do
		rm -f "$WORK"/r*/dump
		for pid in "$@"; do kill -USR1 "$pid"; done
		sleep 0.2
		same=1
		for r in $ids; do
			[ -f "$WORK/r$r/dump" ] || { same=0; break; }
			tail -n +2 "$WORK/r$r/dump" >"$WORK/state$r"
			cmp -s "$WORK/state$first" "$WORK/state$r" || same=0
		done
		[ $same = 1 ] && grep -qx "commands $want" "$WORK/state$first" && return 0
		i=$((i + 1))
		[ $i -gt 75 ] && fail "replicas did not converge on $want commands" \
			"($(cat "$WORK"/state* 2>/dev/null | grep '^commands' | tr '\n' ' '))"
	done
}

last_number() { # last_number FILE PATTERN: the number after PATTERN in its last match
	sed -n "s/.*$2 \([0-9]*\).*/\1/p" "$1" | tail -n 1
}

# ---- 1. writes, a change, writes ----
for r in 0 1 2; do replica kv$r $r; done
start acceptor3 paxos-acceptor -c "$CONF" -i 3
sleep 0.5
round 1
converge 300 "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"
"$BUILD/paxos-admin" -c "$CONF" add-acceptor 3 >"$WORK/admin.out" 2>"$WORK/admin.err" ||
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
i=0
until grep -q "configuration 2 from the snapshot" "$WORK/kv2b.log"; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "replica 2 did not take configuration 2 from its snapshot"
	sleep 0.1
done
echo "round 2: replica 2 restarted without its membership files:" \
	"$(grep -m 1 "from the snapshot" "$WORK/kv2b.log")"
grep -q "^configuration 2 " "$WORK/store/acceptor-2/membership" ||
	fail "replica 2 did not keep the snapshot's configuration beside its acceptor"
round 3
converge 900 "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2b"
echo "round 3: replicas identical on 900 commands, replica 2 restarted from its snapshot" \
	"at instance $snap with configuration 2"
