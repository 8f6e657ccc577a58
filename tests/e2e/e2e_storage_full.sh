#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Storage that fails at run time says why: 3 LMDB acceptors with the smallest map
# (lmdb-map-size 1 MiB) are filled by a client until the map is full. A quorum of them must
# stop, each with "paxos: fatal: acceptor storage: storage error: " followed by LMDB's own
# sentence (MDB_MAP_FULL ...), and exit non-zero. Runs in a private network namespace.
# Usage: e2e_storage_full.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=$WORK/paxos.conf
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^lmdb-map-size .*|lmdb-map-size 1048576|" -e "s|^#durability .*|durability nosync|" \
	"$SRC/paxos.conf" >"$CONF"
grep -q "^lmdb-map-size 1048576" "$CONF" || fail "cannot set lmdb-map-size"
grep -q "^durability nosync" "$CONF" || fail "cannot set durability"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
sleep 0.5
# 2 kB values: a 1 MiB map holds a few hundred of them.
start client paxos-client -c "$CONF" --count 100000 --outstanding 16 --size 2000 \
	--resubmit-ms 200 --time-limit 60

# Once a quorum stopped, nothing more is chosen and the leader, hearing no quorum, steps down
# (check-quorum): the last acceptor may never fill its map. So a quorum must stop, and every
# acceptor that stops must say why.
stopped() { grep -l "; stopping" "$WORK"/acceptor[012].log 2>/dev/null | wc -l; }
n=0
until [ "$(stopped)" -ge 2 ]; do
	n=$((n + 1))
	[ "$n" -le 600 ] || fail "no quorum of acceptors stopped on a full store"
	sleep 0.1
done
n=0
while [ "$(stopped)" -lt 3 ] && [ "$n" -lt 30 ]; do # the third, if it fills too
	n=$((n + 1))
	sleep 0.1
done
count=0
for i in 0 1 2; do
	log=$WORK/acceptor$i.log
	grep -q "; stopping" "$log" || continue
	count=$((count + 1))
	rc=0
	eval "wait \$PID_acceptor$i" || rc=$?
	[ "$rc" -ne 0 ] || fail "acceptor $i stopped on a full store with exit status 0"
	line=$(grep "paxos: fatal:" "$log" | head -n 1)
	case $line in
	"paxos: fatal: acceptor storage: storage error: lmdb $WORK/store/acceptor-$i: "*"MDB_MAP_FULL: Environment mapsize limit reached"*"lmdb-map-size (1048576 bytes)"*"; stopping") ;;
	*) fail "acceptor $i did not say why it stopped: $line" ;;
	esac
	echo "acceptor $i (exit status $rc): $line"
done
stop_all
echo "e2e_storage_full: $count acceptors stopped on a full LMDB map, each naming MDB_MAP_FULL"
