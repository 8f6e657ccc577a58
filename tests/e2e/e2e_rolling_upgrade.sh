#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A rolling upgrade from the release before (docs/operating.md, "Upgrades"), inside a private
# network namespace: a cluster of that release (3 LMDB acceptors, 2 proposers, 2 learners, and
# its clients submitting 200 values/s) has one process at a time replaced by this build's
# binary of the same role, on the same configuration and store: the acceptors, the proposers,
# a learner, the clients, the other learner. After each step values must still be delivered.
# The first node of this build says it speaks the older wire version, and once the last older
# process is gone every node speaks its own again. Nothing is lost: each client of the release
# before delivered all its values (it exits 0 only then), this build's client likewise, and
# the learners of this build (which replay the log from instance 1) agree, with every
# submitted value, in consecutive instances, and with what the older learners delivered.
#
# The release before is built from git (its tag, or, in a clone without tags, its commit
# below) in BUILD_DIR/previous-release/COMMIT, once: its role binaries and client only.
# Without git history (a source tarball) the test is skipped; in a clone it always runs.
# PAXOS_UPGRADE_AUTH=yes: every process shares an auth-key-file, and none may drop a datagram
# of the other release for its tag.
# Usage: e2e_rolling_upgrade.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
PREVIOUS_TAG=v0.2.0
PREVIOUS_COMMIT=6f012b23feea0cdd292c4fd43eef696b6391d622
WORK=$(mktemp -d)
# On the way out, failed or not: the clients of the release before stop too (old_clients).
stop_old_clients() {
	touch "$WORK/stop-old-clients"
	[ -s "$WORK/old-client.pid" ] && kill "$(cat "$WORK/old-client.pid")" 2>/dev/null || true
}
trap 'stop_old_clients; stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
NAME=e2e_rolling_upgrade

if ! git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
	echo "$NAME: SKIP: $SRC is not a git clone: the release before ($PREVIOUS_TAG) is built" \
		"from its history"
	exit 77
fi
commit=$(git -C "$SRC" rev-parse -q --verify "$PREVIOUS_TAG^{commit}" 2>/dev/null) ||
	commit=$(git -C "$SRC" rev-parse -q --verify "$PREVIOUS_COMMIT^{commit}" 2>/dev/null) ||
	fail "neither tag $PREVIOUS_TAG nor commit $PREVIOUS_COMMIT is in $SRC's history" \
		"(a shallow clone? fetch with --unshallow)"

# The release before, built once per build directory (both transports' runs share it).
PREV=previous-release/$commit
mkdir -p "$BUILD/$PREV"
(
	flock 9
	[ -x "$BUILD/$PREV/build/paxos-client" ] && exit 0
	rm -rf "$BUILD/$PREV/src" "$BUILD/$PREV/build"
	mkdir -p "$BUILD/$PREV/src"
	git -C "$SRC" archive "$commit" | tar -x -C "$BUILD/$PREV/src"
	cmake -S "$BUILD/$PREV/src" -B "$BUILD/$PREV/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		>"$BUILD/$PREV/cmake.log" 2>&1 &&
		nice cmake --build "$BUILD/$PREV/build" -j2 --target paxos-acceptor paxos-proposer \
			paxos-learner paxos-client >"$BUILD/$PREV/build.log" 2>&1
) 9>"$BUILD/previous-release.lock" ||
	fail "cannot build $PREVIOUS_TAG ($commit): see $BUILD/$PREV/*.log"
OLD=$PREV/build
old_version=$("$BUILD/$OLD/paxos-acceptor" --version)
new_version=$("$BUILD/paxos-acceptor" --version)
echo "$NAME: from $old_version to $new_version"
old_wire=${old_version##*wire version }
new_wire=${new_version##*wire version }
[ "$old_wire" -eq $((new_wire - 1)) ] ||
	fail "the release before speaks wire version $old_wire, this one $new_wire: not N-1"

# The configuration of the release before, as its operators have it: this build reads it.
CONF=$(SRC=$BUILD/$PREV/src base_conf)
sed -i -e "s|^storage .*|storage lmdb|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
	"$CONF"
grep -q "^storage *lmdb" "$CONF" || fail "cannot set storage lmdb"
if [ "${PAXOS_UPGRADE_AUTH:-no}" = yes ]; then
	"$BUILD/paxos-keygen" "$WORK/cluster.key" 2>/dev/null || fail "paxos-keygen failed"
	echo "auth-key-file $WORK/cluster.key" >>"$CONF"
fi

# progress FILE WHEN: FILE (a learner's output, maybe not written yet) grows by 200 values
# within 60 s.
progress() {
	pr_want=$(($(cat "$WORK/$1" 2>/dev/null | wc -l) + 200))
	wait_lines "$WORK/$1" "$pr_want" 60 ||
		fail "$2: $1 stopped growing at $(cat "$WORK/$1" 2>/dev/null | wc -l)"
	echo "$NAME: $2: $1 has $(wc -l <"$WORK/$1") values"
}

# replace NAME NEW BINARY ARGS...: stops NAME (SIGTERM), starts NEW, this build's BINARY.
replace() {
	stop_one "$1"
	rp_name=$2
	shift 2
	start "$rp_name" "$@"
}

# Clients of the release before (it has no drain signal): one after another, 1000 values
# each at 200/s, until told to stop; each must deliver all of its own.
old_clients() {
	k=0
	until [ -e "$WORK/stop-old-clients" ]; do
		k=$((k + 1))
		"$BUILD/$OLD/paxos-client" -c "$CONF" --count 1000 --rate 200 --size 16 \
			--time-limit 120 -l "$WORK/old-client$k.values" >"$WORK/old-client$k.log" 2>&1 &
		echo $! >"$WORK/old-client.pid"
		wait $! || echo "$k" >>"$WORK/old-clients.failed"
	done
}

for i in 0 1 2; do start acceptor$i "$OLD/paxos-acceptor" -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i "$OLD/paxos-proposer" -c "$CONF" -i $i; done
for i in 0 1; do start learner$i "$OLD/paxos-learner" -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.3
old_clients &
OLD_CLIENTS=$!
progress learner0.out "the release before"

for i in 0 1 2; do
	replace acceptor$i acceptor${i}n paxos-acceptor -c "$CONF" -i $i
	progress learner0.out "acceptor $i upgraded"
done
wait_log acceptor0n "speaking wire version $old_wire"
for i in 0 1; do
	replace proposer$i proposer${i}n paxos-proposer -c "$CONF" -i $i
	progress learner0.out "proposer $i upgraded"
done
replace learner1 learner1n paxos-learner -c "$CONF" -o "$WORK/learner1n.out"
progress learner1n.out "learner 1 upgraded"

# The clients: the older ones end (each delivering all its values), this build's takes over.
touch "$WORK/stop-old-clients"
wait "$OLD_CLIENTS" || true
[ ! -e "$WORK/old-clients.failed" ] ||
	fail "a client of the release before did not deliver its values: $(cat "$WORK"/old-client*.log |
		grep -m1 delivered)"
echo "$NAME: the clients of the release before: $(cat "$WORK"/old-client*.log | grep -c '^delivered') delivered all their values"
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --rate 200 --size 16 \
	--time-limit 240 -l "$WORK/client.values"
progress learner1n.out "client upgraded"
replace learner0 learner0n paxos-learner -c "$CONF" -o "$WORK/learner0n.out"
progress learner0n.out "learner 0 upgraded"

# No older node is left: every node that spoke down speaks its own version again.
for name in acceptor0n acceptor1n acceptor2n proposer0n proposer1n; do
	if grep -q "speaking wire version $old_wire" "$WORK/$name.log"; then
		eventually 60 grep -q "speaking wire version $new_wire again" "$WORK/$name.log" ||
			fail "$name still speaks wire version $old_wire"
	fi
done
wait_log acceptor0n "speaking wire version $new_wire again"
progress learner0n.out "every node speaks wire version $new_wire"

client_drain || fail "this build's client: $(grep -m1 delivered "$WORK/client.log")"
echo "$NAME: this build's client: $(grep -m1 delivered "$WORK/client.log")"
cat "$WORK"/old-client*.values "$WORK/client.values" >"$WORK/submitted"
converged "$(wc -l <"$WORK/submitted")" "$WORK/submitted" "$WORK/learner0n.out" \
	"$WORK/learner1n.out"
at_least_once "$WORK/submitted" "$WORK/learner0n.out" "$WORK/learner1n.out"
# Twice only where the protocol allows it: a client resubmitted, or the leader moved.
if [ -n "$(cut -d' ' -f2 "$WORK/learner0n.out" | sort | uniq -d)" ]; then
	resubmitted "$WORK"/old-client*.log "$WORK/client.log" ||
		leader_moved "$WORK"/proposer*.log ||
		fail "a value was delivered twice with no resubmit and no leader change"
fi
if [ "${PAXOS_UPGRADE_AUTH:-no}" = yes ]; then
	! grep -l "without a valid tag" "$WORK"/*.log ||
		fail "a process dropped datagrams of the other release for their tags"
fi
# The older learners delivered the same log, as far as each went.
for i in 0 1; do
	n=$(wc -l <"$WORK/learner$i.out")
	head -n "$n" "$WORK/learner0n.out" | cmp -s - "$WORK/learner$i.out" ||
		fail "learner $i of the release before delivered another log than this build's"
done
echo "$NAME: $(wc -l <"$WORK/learner0n.out") values, $(wc -l <"$WORK/submitted") submitted," \
	"all delivered; the older learners agreed on their first $(wc -l <"$WORK/learner0.out")" \
	"and $(wc -l <"$WORK/learner1.out")"
