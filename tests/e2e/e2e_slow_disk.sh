#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A slow disk under a membership change: both proposers take 8 s to flush their membership
# file (tests/e2e/slow_fsync.c, preloaded), as a loaded or throttled device may. Acceptors
# 0..2 of ids 0..3 run (membership-alpha 256), a client submits values, and acceptor 3 is
# added. While proposer 0 keeps configuration 2 (its membership.tmp exists), its event loop
# must go on: it answers GET /metrics within 2 s, twice, 2 s apart. Once kept, the change is
# in force, values are chosen past where it governs, and every value is delivered,
# identically by two learners.
# Usage: e2e_slow_disk.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
command -v curl >/dev/null || fail "curl not found: install curl (scripts/install-deps.sh)"
SHIM=$BUILD/libslow_fsync.so
[ -f "$SHIM" ] || fail "$SHIM not built"
BASE=$(base_conf)
CONF=$WORK/slow.conf
sed -e 's/^acceptors .*/acceptors 4/' -e 's/^membership-alpha .*/membership-alpha 256/' \
	-e 's/^initial-members .*/initial-members 3/' "$BASE" >"$CONF"
local_members "$CONF"

for i in 0 1 2 3; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
export LD_PRELOAD="$SHIM" PAXOS_TEST_SLOW_FSYNC=membership PAXOS_TEST_SLOW_FSYNC_MS=8000
start proposer0 paxos-proposer -c "$CONF" -i 0 --metrics-listen 127.0.0.1:9531
start proposer1 paxos-proposer -c "$CONF" -i 1
unset LD_PRELOAD PAXOS_TEST_SLOW_FSYNC PAXOS_TEST_SLOW_FSYNC_MS
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5

: >"$WORK/submitted"
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --rate 1000 --size 64 \
	--resubmit-ms 5000 --time-limit 200 --log "$WORK/submitted"
wait_lines "$WORK/learner0.out" 1000 60 || fail "no progress before the change"

retry_admin "$WORK/admin.out" "$WORK/admin.err" "$BUILD/paxos-admin" -c "$CONF" \
	add-acceptor 3 &
ADMIN=$!
PIDS="$PIDS $ADMIN"
TMP=$WORK/store/proposer-0/membership.tmp
keeping() { [ -f "$TMP" ]; }
eventually 30 keeping || fail "proposer 0 did not begin to keep configuration 2 in 30 s"
for probe in 1 2; do
	keeping || fail "proposer 0 kept the change before probe $probe: is the delay preloaded?"
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 http://127.0.0.1:9531/metrics) ||
		code=none
	[ "$code" = 200 ] || fail "proposer 0 did not answer /metrics ($code) while it kept" \
		"configuration 2: its event loop waits for the disk"
	echo "e2e_slow_disk: probe $probe: proposer 0 answered /metrics while keeping the change"
	sleep 2
done
wait "$ADMIN" || fail "paxos-admin add-acceptor 3: $(cat "$WORK/admin.err")"
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$ADMIN" | tr '\n' ' ')
grep -q "acceptors 0,1,2,3$" "$WORK/admin.out" || fail "acceptor 3 was not added"
for p in 0 1; do
	grep -q "^configuration 2 " "$WORK/store/proposer-$p/membership" ||
		fail "proposer $p did not keep configuration 2"
done
# Values go on being chosen past the instance where configuration 2 governs.
first=$(sed -n 's/^configuration 2 in force from instance \([0-9]*\):.*/\1/p' "$WORK/admin.out")
[ -n "$first" ] || fail "paxos-admin did not say where configuration 2 governs"
past() { [ "$(tail -n 1 "$WORK/learner0.out" | cut -d' ' -f1)" -gt $((first + 100)) ]; }
eventually 60 past || fail "no value delivered past instance $first + 100 (configuration 2)"

client_drain || fail "paxos-client did not get all its values delivered: $(tail -n 3 "$WORK/client.log")"
# Values held past the 5 s resubmit time during the keep may be delivered twice (at least
# once): the learners are done once each submitted value is there.
total=$(cut -d' ' -f2 "$WORK/submitted" | sort -u | wc -l)
every_value() {
	for l in 0 1; do
		[ "$(cut -d' ' -f2 "$WORK/learner$l.out" | sort -u | wc -l)" -ge "$total" ] || return 1
	done
}
eventually 60 every_value || fail "learners did not deliver every value"
stop_all
# Not at_least_once: the change's instance is no value, so the outputs skip it.
cmp -s "$WORK/learner0.out" "$WORK/learner1.out" || fail "learner outputs differ"
cut -d' ' -f2 "$WORK/learner0.out" | sort -u >"$WORK/delivered.set"
cut -d' ' -f2 "$WORK/submitted" | sort -u >"$WORK/submitted.set"
cmp -s "$WORK/delivered.set" "$WORK/submitted.set" ||
	fail "delivered values differ from submitted values"
echo "e2e_slow_disk: $total values delivered by 2 learners through a change whose keeping" \
	"took 8 s, the proposers' loops running meanwhile"
