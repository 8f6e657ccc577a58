#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Durable acceptors killed with SIGKILL while commits are in flight (pipelined commits: the
# flush thread writes one commit while the acceptor gathers the next), over real multicast in
# a private network namespace, for LMDB sync and Berkeley DB sync. A witness writes down every
# promise and accepted message the acceptors send; under load, acceptors are killed at several
# points, one at a time and then two at once (a quorum), and each killed acceptor's store must
# back everything it ever sent (paxos-store-check) before it restarts on it. The client must
# get every value delivered, and a learner started afterwards must deliver what the first one
# did. The LMDB acceptors flush on their own loop, the Berkeley DB ones on the storage's
# thread (storage-flush-thread yes), as do replicas (acceptor, proposer and learner in one
# process), killed too. Then the serializer on LMDB sync, killed twice: every value it
# announced must be in its store, or its restart would number other values with the same
# instances.
# Usage: e2e_durable_crash.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; [ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
# Paced (open loop) so that every kill point falls in the middle of the load: about 8 s.
COUNT=20000
RATE=2500

# kill_acceptors ID...: SIGKILL at once; each store must back what its acceptor sent; each
# restarts on its store.
kill_acceptors() {
	pids=""
	for id in "$@"; do pids="$pids $(eval echo "\$PID_${B}_acceptor$id")"; done
	# shellcheck disable=SC2086
	kill -KILL $pids
	for pid in $pids; do wait "$pid" 2>/dev/null || true; done
	KILLS=$((KILLS + $#))
	sleep 0.3 # the witness writes down what was on its way
	for id in "$@"; do
		"$BUILD/paxos-store-check" -c "$CONF" -i "$id" "$WORK/$B-witness.txt" \
			>"$WORK/check.out" 2>&1 ||
			fail "$B: acceptor $id lost what it acknowledged: $(cat "$WORK/check.out")"
		CHECKED=$((CHECKED + $(sed -n 's/.*all \([0-9]*\) promises.*/\1/p' "$WORK/check.out")))
	done
	for id in "$@"; do
		RESTARTS=$((RESTARTS + 1))
		start "${B}_acceptor${id}_$RESTARTS" paxos-acceptor -c "$CONF" -i "$id"
		eval "PID_${B}_acceptor$id=\$PID_${B}_acceptor${id}_$RESTARTS"
	done
}

for B in lmdb bdb; do
	CONF=$WORK/$B.conf
	thread=no
	[ $B = lmdb ] || thread=yes
	sed -e "s|^storage .*|storage $B|" -e "s|^storage-path .*|storage-path $WORK/store-$B|" \
		-e "s|^#durability .*|durability sync|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
		-e "s|^storage-flush-thread .*|storage-flush-thread $thread|" "$SRC/paxos.conf" >"$CONF"
	grep -q "^durability sync" "$CONF" && grep -q "^storage-flush-thread $thread" "$CONF" ||
		fail "cannot set durability sync and storage-flush-thread $thread"
	KILLS=0
	CHECKED=0
	RESTARTS=0
	start "${B}_witness" paxos-witness -c "$CONF" -o "$WORK/$B-witness.txt"
	for i in 0 1 2; do start "${B}_acceptor$i" paxos-acceptor -c "$CONF" -i $i; done
	for i in 0 1; do start "${B}_proposer$i" paxos-proposer -c "$CONF" -i $i; done
	start "${B}_learner" paxos-learner -c "$CONF" -o "$WORK/$B-learner.out"
	sleep 0.5

	: >"$WORK/$B-submitted"
	"$BUILD/paxos-client" -c "$CONF" --count $COUNT --rate $RATE --outstanding 256 --size 64-600 \
		--resubmit-ms 500 --time-limit 150 --log "$WORK/$B-submitted" >"$WORK/$B-client.log" 2>&1 &
	CLIENT=$!
	# One at a time, every acceptor once, then a quorum at once: commits are in flight at
	# every point, the load never stops.
	point=0
	for ids in 1 2 0 "0 1"; do
		point=$((point + 1))
		wait_lines "$WORK/$B-submitted" $((COUNT * point / 5)) 60 ||
			fail "$B: the client made no progress before kill point $point"
		# shellcheck disable=SC2086
		kill_acceptors $ids
	done
	wait "$CLIENT" || fail "$B: paxos-client did not get all $COUNT values delivered"
	[ "$CHECKED" -gt 0 ] || fail "$B: the witness saw nothing"

	# A learner from scratch learns the same sequence from the acceptors' stores.
	start "${B}_fresh" paxos-learner -c "$CONF" -o "$WORK/$B-fresh.out"
	converged $COUNT "$WORK/$B-submitted" "$WORK/$B-learner.out" "$WORK/$B-fresh.out"
	# The acceptors that stopped cleanly report their flushes: the pipelined path ran.
	grep -h "counters acceptor" "$WORK"/"${B}"_acceptor*.log | grep -q "storage_flushes=[1-9]" ||
		fail "$B: no acceptor reported storage flushes"
	echo "e2e_durable_crash: $B sync (flush thread $thread): $KILLS acceptors killed at 4" \
		"points (2 at once at the last), $CHECKED promises and accepted messages found in" \
		"their stores, $LINES values delivered identically by 2 learners"
done

# Replicas: each acceptor beside a proposer and a learner, its flushes on the storage's
# thread. Replicas 2 and 1 (not the leader) are killed in turn.
B=replica
CONF=$WORK/replica.conf
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store-replica|" \
	-e "s|^#durability .*|durability sync|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
	-e "s|^storage-flush-thread .*|storage-flush-thread yes|" "$SRC/paxos.conf" >"$CONF"
CHECKED=0
start replica_witness paxos-witness -c "$CONF" -o "$WORK/replica-witness.txt"
for i in 0 1 2; do start "replica_$i" paxos-replica -c "$CONF" -i $i -o "$WORK/replica$i.out"; done
sleep 0.5
: >"$WORK/replica-submitted"
"$BUILD/paxos-client" -c "$CONF" --count $((COUNT / 2)) --rate $RATE --outstanding 256 \
	--size 64-600 --resubmit-ms 500 --time-limit 150 --log "$WORK/replica-submitted" \
	>"$WORK/replica-client.log" 2>&1 &
CLIENT=$!
point=0
for id in 2 1; do
	point=$((point + 1))
	wait_lines "$WORK/replica-submitted" $((COUNT / 2 * point / 3)) 60 ||
		fail "replicas: the client made no progress before kill point $point"
	eval "pid=\$PID_replica_$id"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	sleep 0.3
	"$BUILD/paxos-store-check" -c "$CONF" -i "$id" "$WORK/replica-witness.txt" \
		>"$WORK/check.out" 2>&1 ||
		fail "replica $id lost what its acceptor acknowledged: $(cat "$WORK/check.out")"
	CHECKED=$((CHECKED + $(sed -n 's/.*all \([0-9]*\) promises.*/\1/p' "$WORK/check.out")))
	start "replica_${id}_b" paxos-replica -c "$CONF" -i "$id"
done
wait "$CLIENT" || fail "replicas: paxos-client did not get all $((COUNT / 2)) values delivered"
start replica_fresh paxos-learner -c "$CONF" -o "$WORK/replica-fresh.out"
converged $((COUNT / 2)) "$WORK/replica-submitted" "$WORK/replica0.out" "$WORK/replica-fresh.out"
grep -h "counters acceptor" "$WORK"/replica_0.log | grep -q "storage_flushes=[1-9]" ||
	fail "replicas: replica 0 reported no storage flushes"
echo "e2e_durable_crash: replicas on lmdb sync (flush thread yes): 2 killed, $CHECKED" \
	"promises and accepted messages found in their stores, $LINES values delivered" \
	"identically by 2 learners"

# The serializer: what it announced as final stays in its store across kill -9.
B=serializer
CONF=$WORK/serializer.conf
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store-serializer|" \
	-e "s|^#durability .*|durability sync|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
	"$SRC/paxos.conf" >"$CONF"
CHECKED=0
start serializer_witness paxos-witness -c "$CONF" -o "$WORK/serializer-witness.txt"
start serializer_0 paxos-serializer -c "$CONF"
start serializer_learner paxos-learner -c "$CONF" -o "$WORK/serializer-learner.out"
sleep 0.5
: >"$WORK/serializer-submitted"
"$BUILD/paxos-client" -c "$CONF" --count $((COUNT / 2)) --rate $RATE --outstanding 256 \
	--size 64-600 --resubmit-ms 500 --time-limit 150 --log "$WORK/serializer-submitted" \
	>"$WORK/serializer-client.log" 2>&1 &
CLIENT=$!
for point in 1 2; do
	wait_lines "$WORK/serializer-submitted" $((COUNT / 2 * point / 3)) 60 ||
		fail "serializer: the client made no progress before kill point $point"
	eval "pid=\$PID_serializer_$((point - 1))"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	sleep 0.3
	"$BUILD/paxos-store-check" -c "$CONF" -i 0 "$WORK/serializer-witness.txt" \
		>"$WORK/check.out" 2>&1 ||
		fail "serializer: its store lost what it announced: $(cat "$WORK/check.out")"
	CHECKED=$((CHECKED + $(sed -n 's/.*all \([0-9]*\) promises.*/\1/p' "$WORK/check.out")))
	start "serializer_$point" paxos-serializer -c "$CONF"
done
wait "$CLIENT" || fail "serializer: paxos-client did not get all $((COUNT / 2)) values delivered"
# Values for the last life to store: the client's may all have reached the one before it.
"$BUILD/paxos-client" -c "$CONF" --count 100 --size 64 --time-limit 60 \
	--log "$WORK/serializer-last" >"$WORK/serializer-last.log" 2>&1 ||
	fail "serializer: the last life did not deliver 100 values"
cat "$WORK/serializer-last" >>"$WORK/serializer-submitted"
start serializer_fresh paxos-learner -c "$CONF" -o "$WORK/serializer-fresh.out"
converged $((COUNT / 2 + 100)) "$WORK/serializer-submitted" "$WORK/serializer-learner.out" \
	"$WORK/serializer-fresh.out"
grep -h "counters acceptor" "$WORK"/serializer_2.log | grep -q "storage_flushes=[1-9]" ||
	fail "serializer: it reported no storage flushes"
echo "e2e_durable_crash: serializer on lmdb sync: killed at 2 points, $CHECKED values it" \
	"announced found in its store, $LINES values delivered identically by 2 learners"
