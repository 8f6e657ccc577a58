#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Durable acceptors whose file system fills up under load, for Berkeley DB sync and LMDB
# sync: 3 acceptors keep their stores on a small tmpfs of their own (a filler file takes most
# of it) and a client fills them until the disk is full. A quorum must stop, each saying why
# (the file system's "No space left on device"), and exit non-zero. Then space is freed, and
# every acceptor's store must open again and back everything the acceptor acknowledged, as a
# witness wrote it down (paxos-store-check), and the cluster restarted on the stores must serve
# new values. Runs in a private network namespace, with a mount namespace of its own for the
# tmpfs (skipped, status 77, where none can be made).
# Usage: e2e_storage_enospc.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
if [ "${PAXOS_IN_MOUNTNS:-}" != 1 ]; then
	unshare --mount --propagation private true 2>/dev/null || {
		echo "e2e_storage_enospc: skipped: no mount namespace (unshare --mount)"
		exit 77
	}
	PAXOS_IN_MOUNTNS=1 exec unshare --mount --propagation private -- "$0" "$@"
fi
WORK=$(mktemp -d)
trap 'stop_all; umount "$WORK/disk" 2>/dev/null || true; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
DISK=$WORK/disk
mkdir "$DISK"
mount -t tmpfs -o size=64m tmpfs "$DISK" 2>/dev/null || {
	echo "e2e_storage_enospc: skipped: cannot mount a tmpfs"
	exit 77
}

# stopped B: how many of B's acceptors stopped on a storage error
stopped() { grep -l "; stopping" "$WORK/$1"_acceptor[012].log 2>/dev/null | wc -l; }
quorum_stopped() { [ "$(stopped "$B")" -ge 2 ]; }

for B in bdb lmdb; do
	CONF=$WORK/$B.conf
	sed -e "s|^storage .*|storage $B|" -e "s|^storage-path .*|storage-path $DISK/$B|" \
		-e "s|^#durability .*|durability sync|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
		"$SRC/paxos.conf" >"$CONF"
	grep -q "^durability sync" "$CONF" && grep -q "^storage-path $DISK/$B" "$CONF" ||
		fail "cannot set durability sync and storage-path"
	# The proposers keep their epoch files off the full disk: this is about the acceptors.
	sed -e "s|^storage-path .*|storage-path $WORK/proposers-$B|" "$CONF" >"$WORK/$B-proposers.conf"
	# All but about 6 MiB of the disk taken: the stores fill it within a few thousand values.
	dd if=/dev/zero of="$DISK/filler" bs=1M count=58 2>/dev/null
	start "${B}_witness" paxos-witness -c "$CONF" -o "$WORK/$B-witness.txt"
	for i in 0 1 2; do start "${B}_acceptor$i" paxos-acceptor -c "$CONF" -i $i; done
	for i in 0 1; do
		start "${B}_proposer$i" paxos-proposer -c "$WORK/$B-proposers.conf" -i $i
	done
	sleep 0.5
	start "${B}_client" paxos-client -c "$CONF" --count 100000 --outstanding 16 --size 2000 \
		--resubmit-ms 200 --time-limit 60

	# Once a quorum stopped nothing more is chosen, so the third may never fill its disk.
	eventually 60 quorum_stopped || fail "$B: no quorum of acceptors stopped on a full disk"
	n=0
	while [ "$(stopped $B)" -lt 3 ] && [ "$n" -lt 10 ]; do
		n=$((n + 1))
		sleep 0.1
	done
	count=0
	for i in 0 1 2; do
		log=$WORK/${B}_acceptor$i.log
		grep -q "; stopping" "$log" || continue
		count=$((count + 1))
		rc=0
		eval "wait \$PID_${B}_acceptor$i" || rc=$?
		[ "$rc" -ne 0 ] || fail "$B: acceptor $i stopped on a full disk with exit status 0"
		line=$(grep "paxos: fatal:" "$log" | head -n 1)
		case $line in
		"paxos: fatal: acceptor storage: storage error: $B $DISK/$B/acceptor-$i"*"No space left on device"*"; stopping") ;;
		*) fail "$B: acceptor $i did not say why it stopped: $line" ;;
		esac
	done
	sleep 0.3 # the witness writes down what was on its way
	stop_all

	# Space again: every store opens and backs all its acceptor acknowledged.
	rm "$DISK/filler"
	checked=0
	for i in 0 1 2; do
		"$BUILD/paxos-store-check" -c "$CONF" -i $i "$WORK/$B-witness.txt" >"$WORK/check.out" 2>&1 ||
			fail "$B: acceptor $i's store after the full disk: $(cat "$WORK/check.out")"
		checked=$((checked + $(sed -n 's/.*all \([0-9]*\) promises.*/\1/p' "$WORK/check.out")))
	done
	[ "$checked" -gt 0 ] || fail "$B: the witness saw nothing"

	# The cluster runs again on the stores.
	for i in 0 1 2; do start "${B}_again$i" paxos-acceptor -c "$CONF" -i $i; done
	for i in 0 1; do
		start "${B}_proposer_again$i" paxos-proposer -c "$WORK/$B-proposers.conf" -i $i
	done
	"$BUILD/paxos-client" -c "$CONF" --count 200 --outstanding 16 --size 64 --resubmit-ms 500 \
		--time-limit 60 >"$WORK/$B-again.out" 2>&1 ||
		fail "$B: the cluster restarted on its stores does not serve: $(cat "$WORK/$B-again.out")"
	! grep -h "paxos: fatal:" "$WORK/${B}"_again[012].log || fail "$B: an acceptor failed again"
	stop_all
	rm -rf "${DISK:?}/$B"
	echo "e2e_storage_enospc: $B sync: $count acceptors stopped on a full disk, each naming" \
		"ENOSPC; all 3 stores opened again with the $checked promises and accepted messages" \
		"they acknowledged, and the cluster served 200 values on them"
done
