#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The sample key-value store sharded over two partitions (paxos.conf "partitions 2"), end to
# end in a private network namespace, over multicast (or unicast with
# PAXOS_TRANSPORT=unicast): three replicas, each hosting acceptor, proposer and learner for
# both partitions (one thread per partition), LMDB storage, snapshots every 20 commands.
#  1. Three concurrent clients write keys of both partitions (one submitting everything
#     twice): each gets the results it expects; every replica holds keys in both partitions,
#     and the replicas are identical partition by partition, each command applied once.
#  2. A copy between keys of two partitions is refused by the client with a clear message;
#     a client that counts partitions otherwise (partitions 1) is answered CROSS_PARTITION and
#     WRONG_PARTITION by the replicas, which change nothing.
#  3. Replica 1 is killed with SIGKILL (the partition its proposer led gets a new leader, of
#     which the replicas tell the clients), clients keep writing, it restarts: each partition
#     loads its own snapshot (DIR/snapshot, DIR/partition-1/snapshot) and catches up.
#  4. A replica started on those snapshots with another partition count refuses to start.
# PARTITION_ACCEPTORS=SETS runs it with paxos.conf "partition-acceptors SETS" (ctest:
# e2e_kvstore_partition_sets gives partition 1 acceptors 0 and 2 only, numbered 0 and 1 there).
# Usage: e2e_kvstore_partitions.sh BUILD_DIR SOURCE_DIR
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
CONF1=$WORK/paxos1.conf
KCONF=$WORK/kvstore.conf
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^proposers .*|proposers 3|" -e "s|^partitions .*|partitions 2|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
	-e "s|^partition-acceptors .*|partition-acceptors ${PARTITION_ACCEPTORS:-all}|" \
	"$BASE" >"$CONF"
local_members "$CONF" || fail "cannot write the member addresses"
sed -e "s|^partitions .*|partitions 1|" -e "s|^partition-acceptors .*|partition-acceptors all|" \
	"$CONF" >"$CONF1"
sed -e "s|^snapshot-every .*|snapshot-every 20|" "$SRC/$KV/kvstore.conf" >"$KCONF"
grep -q "^partitions 2" "$CONF" && grep -q "^partitions 1" "$CONF1" &&
	grep -q "^snapshot-every 20" "$KCONF" || fail "cannot write the test configuration"

replica() { # replica NAME ID: starts replica ID (acceptor + proposer + learner)
	: >"$WORK/$1.log"
	start "$1" $KV/kvstore-replica -c "$CONF" -k "$KCONF" -i "$2" -d "$WORK/r$2" \
		--acceptor --proposer
	# Both partitions said where they start: the main thread handles signals by then.
	wait_lines "$WORK/$1.log" 2 30 || fail "replica $2 ($1) did not start"
}
cli() { # cli ARGS...
	"$BUILD/$KV/kvstore-cli" -c "$CONF" -k "$KCONF" --timeout 20 "$@"
}
partition_of() { cli --partition-of "$@"; }

# workload ROUND CLIENT: 40 keys of this client (whose results are known in advance:
# OUT.expect); for each, a copy to KEY.copy when that key is in the same partition.
workload() {
	base=$WORK/w$1-$2
	: >"$base.cmds"
	: >"$base.expect"
	for i in $(seq 1 40); do
		k=c$2-r$1-$i
		printf 'put %s v%s\ncas %s v%s w%s\nget %s\n' "$k" "$i" "$k" "$i" "$i" "$k" \
			>>"$base.cmds"
		printf 'OK\nOK\nOK w%s\n' "$i" >>"$base.expect"
		if [ "$(partition_of "$k" "$k.copy" | sort -u | wc -l)" -eq 1 ]; then
			printf 'copy %s %s.copy\nget %s.copy\n' "$k" "$k" "$k" >>"$base.cmds"
			printf 'OK\nOK w%s\n' "$i" >>"$base.expect"
		fi
	done
}

# round ROUND: three clients at once, client 0 submitting everything twice; adds the number
# of commands to COMMANDS.
COMMANDS=0
round() {
	pids=""
	for c in 0 1 2; do
		workload "$1" $c
		COMMANDS=$((COMMANDS + $(wc -l <"$WORK/w$1-$c.cmds")))
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

pdir() { # pdir REPLICA PARTITION: where that partition of the replica keeps its files
	if [ "$2" = 0 ]; then echo "$WORK/r$1"; else echo "$WORK/r$1/partition-$2"; fi
}

# converge COMMANDS "IDS" PIDS...: until the dumps (SIGUSR1) of replicas IDS, running as
# PIDS, are the same partition by partition and count COMMANDS commands in all (60 s: a loaded
# replica may be slow to catch up).
converge() {
	want=$1
	ids=$2
	shift 2
	first=${ids%% *}
	i=0
	while :; do
		for r in $ids; do rm -f "$(pdir "$r" 0)/dump" "$(pdir "$r" 1)/dump"; done
		for pid in "$@"; do kill -USR1 "$pid"; done
		sleep 0.2
		same=1
		total=0
		for p in 0 1; do
			for r in $ids; do
				d=$(pdir "$r" "$p")/dump
				[ -f "$d" ] || { same=0; break; }
				tail -n +2 "$d" >"$WORK/state$r.$p"
				cmp -s "$WORK/state$first.$p" "$WORK/state$r.$p" || same=0
			done
			[ $same = 1 ] || break
			n=$(sed -n 's/^commands //p' "$WORK/state$first.$p")
			total=$((total + ${n:-0}))
		done
		[ $same = 1 ] && [ "$total" -eq "$want" ] && return 0
		i=$((i + 1))
		[ $i -gt 300 ] && fail "replicas did not converge on $want commands" \
			"(replica $first holds $total; $(cat "$WORK"/state* 2>/dev/null | grep '^commands' | tr '\n' ' '))"
	done
}

keys_in() { # keys_in REPLICA PARTITION: the keys of the last dump
	tail -n +3 "$WORK/state$1.$2" | wc -l
}

# ---- 1. concurrent clients on both partitions ----
for r in 0 1 2; do replica kv$r $r; done
if [ "${PARTITION_ACCEPTORS:-all}" = "0-2/0,2" ]; then
	# Replica 1 is no acceptor of partition 1; replica 2 is its acceptor 1.
	eventually 30 grep -q "kvstore-replica 2 partition 1: acceptor 1," "$WORK/kv2.log" ||
		fail "replica 2 is not acceptor 1 of partition 1: $(head -n 5 "$WORK/kv2.log")"
	grep -q "kvstore-replica 1 partition 1: acceptor" "$WORK/kv1.log" &&
		fail "replica 1 hosts an acceptor of partition 1"
fi
grep -q "kvstore-replica 0 partition 1: no snapshot in $WORK/r0/partition-1:" "$WORK/kv0.log" ||
	fail "replica 0 did not start partition 1 in its own directory"
[ "$(cat "$WORK/r0/partitions")" = 2 ] || fail "replica 0 did not record 2 partitions"
sleep 0.5
round 1
converge "$COMMANDS" "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"
k0=$(keys_in 0 0)
k1=$(keys_in 0 1)
[ "$k0" -gt 10 ] && [ "$k1" -gt 10 ] ||
	fail "keys are not spread over both partitions ($k0 and $k1)"
dups=$(($(sed -n 's/^duplicates //p' "$WORK/state0.0") + $(sed -n 's/^duplicates //p' "$WORK/state0.1")))
[ "$dups" -ge 1 ] || fail "no second copy of a --twice command was delivered"
echo "round 1: 3 clients, $COMMANDS commands over 2 partitions ($k0 and $k1 keys)," \
	"replicas identical per partition, $dups duplicates dropped"

# ---- 2. commands spanning partitions ----
for k in a b c d e f g h; do
	case $(partition_of "$k") in
	0) : "${in0:=$k}" ;;
	1) : "${in1:=$k}" ;;
	esac
done
[ -n "${in0:-}" ] && [ -n "${in1:-}" ] || fail "no key of each partition among a..h"
cli put "$in0" zero >/dev/null && cli put "$in1" one >/dev/null || fail "cannot put $in0, $in1"
COMMANDS=$((COMMANDS + 2))
status=0
cli copy "$in0" "$in1" >"$WORK/cross.out" 2>"$WORK/cross.err" || status=$?
[ $status -eq 2 ] || fail "a copy across partitions exited with $status, not 2"
grep -q "refused: the keys are in partitions 0 and 1 (of 2), and a command may not span partitions" \
	"$WORK/cross.err" || fail "the client did not say why it refused: $(cat "$WORK/cross.err")"
# A client that believes in one partition submits to partition 0: its replicas refuse.
cli1() { "$BUILD/$KV/kvstore-cli" -c "$CONF1" -k "$KCONF" --timeout 20 "$@"; }
status=0
out=$(cli1 copy "$in0" "$in1") || status=$?
[ "$out" = CROSS_PARTITION ] && [ $status -eq 1 ] ||
	fail "the replicas answered '$out' (exit $status) to a copy across partitions"
status=0
out=$(cli1 put "$in1" wrong) || status=$?
[ "$out" = WRONG_PARTITION ] && [ $status -eq 1 ] ||
	fail "the replicas answered '$out' (exit $status) to a key of the other partition"
COMMANDS=$((COMMANDS + 2)) # recorded (refused) in partition 0
[ "$(cli get "$in1")" = "OK one" ] && [ "$(cli get "$in0")" = "OK zero" ] ||
	fail "a refused command changed the store"
COMMANDS=$((COMMANDS + 2))
converge "$COMMANDS" "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"
echo "cross-partition copy: refused by the client; by the replicas (CROSS_PARTITION," \
	"WRONG_PARTITION) for a client with partitions 1"

# ---- 3. kill -9 replica 1, keep writing, restart it ----
[ -f "$WORK/r1/snapshot" ] && [ -f "$WORK/r1/partition-1/snapshot" ] ||
	fail "replica 1 did not snapshot both partitions"
kill -KILL "$PID_kv1"
wait "$PID_kv1" 2>/dev/null || true
snap0=$(sed -n "s/^kvstore-replica 1 partition 0: snapshot at instance \([0-9]*\).*/\1/p" \
	"$WORK/kv1.log" | tail -n 1)
snap1=$(sed -n "s/^kvstore-replica 1 partition 1: snapshot at instance \([0-9]*\).*/\1/p" \
	"$WORK/kv1.log" | tail -n 1)
round 2
converge "$COMMANDS" "0 2" "$PID_kv0" "$PID_kv2"
# The partition replica 1's proposer led has a new leader: the replicas told the clients.
led=$(sed -n 's/^paxos: proposer 1 partition \([01]\): leader is 1 at start.*/\1/p' "$WORK/kv1.log")
[ -n "$led" ] || fail "proposer 1 led no partition at start"
eventually 30 grep -q "^kvstore-replica 0 partition $led: new leader: proposer [02]; clients told" \
	"$WORK/kv0.log" || fail "replica 0 did not tell the clients of partition $led's new leader"
replica kv1b 1
converge "$COMMANDS" "0 1 2" "$PID_kv0" "$PID_kv1b" "$PID_kv2"
grep -q "partition 0: loaded $WORK/r1/snapshot: instances up to $snap0," "$WORK/kv1b.log" ||
	fail "restarted replica 1 did not load partition 0's snapshot at instance $snap0"
grep -q "partition 1: loaded $WORK/r1/partition-1/snapshot: instances up to $snap1," \
	"$WORK/kv1b.log" || fail "restarted replica 1 did not load partition 1's snapshot at $snap1"
round 3
converge "$COMMANDS" "0 1 2" "$PID_kv0" "$PID_kv1b" "$PID_kv2"
echo "round 2-3: replica 1 killed, restarted from its snapshots (partition 0 at $snap0," \
	"partition 1 at $snap1), converged on $COMMANDS commands"
stop_all

# ---- 4. another partition count on the same snapshots ----
status=0
"$BUILD/$KV/kvstore-replica" -c "$CONF1" -k "$KCONF" -i 0 -d "$WORK/r0" \
	>"$WORK/recount.log" 2>&1 || status=$?
[ $status -eq 1 ] || fail "a replica with partitions 1 on 2-partition snapshots exited $status"
grep -q "were written with 2 partitions, and paxos.conf now says partitions 1" \
	"$WORK/recount.log" || fail "the replica did not say why: $(cat "$WORK/recount.log")"
echo "e2e_kvstore_partitions: passed"
