#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Partitions and a durable store, inside a private network namespace: an LMDB acceptor started
# with partitions 2 writes the count beside its stores; started again with partitions 3 or 1
# it refuses to start, naming paxos.conf's value and the store's (a partition dropped would
# lose its chosen values, one added would start a log of its own), and with partitions 2 again
# it starts on the same stores.
# Usage: e2e_partitions_store.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

# conf N: paxos.conf with partitions N on LMDB under $WORK/store
conf() {
	sed -e "s|^partitions .*|partitions $1|" -e "s|^storage .*|storage lmdb|" \
		"$(base_conf)" >"$WORK/p$1.conf"
	grep -q "^partitions $1\$" "$WORK/p$1.conf" || fail "cannot set partitions $1"
	echo "$WORK/p$1.conf"
}

# runs N: the acceptor starts with partitions N (it says where each partition's store is: 30 s
# on a busy machine) and keeps running for a second
runs() {
	start "acceptor_p$1" paxos-acceptor -c "$(conf "$1")" -i 0
	opened() { [ "$(grep -c "^paxos-acceptor: acceptor 0, storage" "$WORK/acceptor_p$1.log")" -ge "$1" ]; }
	eventually 30 opened "$1" || fail "the acceptor did not open its $1 stores"
	sleep 1
	kill -0 "$(eval echo "\$PID_acceptor_p$1")" 2>/dev/null ||
		fail "the acceptor did not keep running with partitions $1"
	stop_all
}

# refused N: the acceptor exits at once with partitions N, and says why
refused() {
	status=0
	timeout 20 "$BUILD/paxos-acceptor" -c "$(conf "$1")" -i 0 >"$WORK/refused$1.log" 2>&1 ||
		status=$?
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ] ||
		fail "the acceptor started (status $status) with partitions $1 on stores of 2"
	grep -q "paxos.conf says partitions $1, but $WORK/store/partitions says 2: the stores under $WORK/store hold that many logs" \
		"$WORK/refused$1.log" ||
		fail "the refusal does not name both counts: $(cat "$WORK/refused$1.log")"
}

runs 2
[ "$(cat "$WORK/store/partitions")" = 2 ] || fail "the count was not written beside the stores"
refused 3
refused 1
[ "$(cat "$WORK/store/partitions")" = 2 ] || fail "a refused start changed the count"
runs 2
echo "e2e_partitions_store: partitions 3 and 1 refused on stores of 2, each naming both counts; 2 starts again"
