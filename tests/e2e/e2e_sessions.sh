#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Client sessions (paxos/session.h) through leader kills, over real multicast (or unicast with
# PAXOS_TRANSPORT=unicast) in a private network namespace: three kvstore replicas, each
# hosting acceptor, proposer and learner (LMDB, snapshots every 200 commands), and
# kvstore-load's closed-loop clients, each putting through a session of its own. While they
# run, the leader (replica 0) is killed with SIGKILL and restarted, twice, the second time once
# it leads again: each kill and each return is a leader change, after which the sessions send
# what they had in flight again.
# Then, once no put is made any more and every submission completed:
#  - every submission completed exactly once, none timed out, none twice or out of order;
#  - the replicas converge on identical state holding exactly as many commands as were
#    submitted: no put reached the application twice, none was lost, and the copies the
#    resubmits and leader changes put in the log were dropped by the sessions (counted).
# Usage: e2e_sessions.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
KV=sample/kvstore
[ -x "$BUILD/$KV/kvstore-load" ] || fail "$BUILD/$KV/kvstore-load is not built"
BASE=$(base_conf)
CONF=$WORK/paxos.conf
KCONF=$WORK/kvstore.conf
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^proposers .*|proposers 3|" "$BASE" >"$CONF"
local_members "$CONF" || fail "cannot write the member addresses"
# Resubmits after 100 ms: many copies of the values in flight reach the log.
sed -e "s|^snapshot-every .*|snapshot-every 200|" -e "s|^resubmit-ms .*|resubmit-ms 100|" \
	"$SRC/$KV/kvstore.conf" >"$KCONF"
grep -q "^storage lmdb" "$CONF" && grep -q "^resubmit-ms 100" "$KCONF" ||
	fail "cannot write the test configuration"
. "$SRC/tests/e2e/kvstore.sh"

# commands_at ID PID: the commands replica ID (running as PID) applied, from its dump
commands_at() {
	rm -f "$WORK/r$1/dump"
	kill -USR1 "$2"
	eventually 10 test -f "$WORK/r$1/dump" || return 1
	sed -n 's/^commands //p' "$WORK/r$1/dump"
}
# more_than N ID PID: replica ID applied more than N commands
more_than() { [ "$(commands_at "$2" "$3")" -gt "$1" ] 2>/dev/null; }

for r in 0 1 2; do replica kv$r $r; done
"$BUILD/$KV/kvstore-load" -c "$CONF" -k "$KCONF" --clients 16 --keys 4 --seconds 3600 \
	>"$WORK/load.out" 2>"$WORK/load.err" &
LOAD=$!
PIDS="$PIDS $LOAD"
eventually 60 more_than 300 1 "$PID_kv1" || fail "no puts applied at the start"

# leader_is_0: replica 2 (never killed) last saw proposer 0 become the leader, or no change
# yet (proposer 0, the lowest id, leads at the start).
leader_is_0() {
	last=$(grep "new leader: proposer" "$WORK/kv2.log" | tail -n 1)
	[ -z "$last" ] || echo "$last" | grep -q "new leader: proposer 0;"
}
kill_leader() { # kill_leader ROUND: kill -9 replica 0, the leader, wait for progress, restart it
	eventually 60 leader_is_0 || fail "round $1: replica 0 did not lead again"
	kill -KILL "$PID_kv0"
	wait "$PID_kv0" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_kv0" | tr '\n' ' ')
	now=$(commands_at 1 "$PID_kv1")
	eventually 60 more_than $((now + 1500)) 1 "$PID_kv1" ||
		fail "round $1: no progress after the leader was killed"
	replica kv0 0
	eventually 60 more_than $((now + 3000)) 1 "$PID_kv1" ||
		fail "round $1: no progress after replica 0 came back"
	echo "e2e_sessions: round $1: leader killed and back, $(commands_at 1 "$PID_kv1") applied"
}
kill_leader 1
kill_leader 2
# Each kill moved the leadership to another replica, and it came back to 0 in between.
changes=$(grep -c "new leader: proposer" "$WORK/kv2.log" || true)
[ "$changes" -ge 3 ] || fail "replica 2 saw $changes leader changes, not 3 or more"

# No new put; the load ends once every submission completed.
kill -TERM "$LOAD" 2>/dev/null || true
stop_load() { ! kill -0 "$LOAD" 2>/dev/null; }
eventually 60 stop_load || fail "kvstore-load did not end"
wait "$LOAD" || fail "kvstore-load failed: $(tail -n 3 "$WORK/load.err")"
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$LOAD" | tr '\n' ' ')
cat "$WORK/load.out"
field() { sed -n "s/.* $1 \([0-9]*\).*/\1/p" "$WORK/load.out"; }
submitted=$(field submitted)
[ -n "$submitted" ] && [ "$submitted" -gt 1000 ] || fail "too few submissions: '$submitted'"
[ "$(field completed)" = "$submitted" ] ||
	fail "$submitted submitted, $(field completed) completed: each must complete once"
[ "$(field completed_twice)" = 0 ] || fail "$(field completed_twice) completed twice or out of order"
[ "$(field timed_out)" = 0 ] || fail "$(field timed_out) submissions timed out"
converge "$submitted" "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"
dups=$(sed -n 's/^duplicates //p' "$WORK/state0")
echo "e2e_sessions: $submitted submitted, each completed once, applied once by 3 identical" \
	"replicas across $changes leader changes; $dups copies dropped by the sessions"
stop_all
echo "e2e_sessions: passed"
