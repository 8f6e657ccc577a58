#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The sample key-value store through a whole restart of a memory cluster, over real multicast
# (or unicast with PAXOS_TRANSPORT=unicast) in a private network namespace: three replicas,
# each hosting acceptor (storage memory), proposer and learner. Keys are put, every replica is
# stopped with SIGTERM (each takes a snapshot of the log it applied) and started again on the
# same files. Every acceptor lost the log, so they begin a new one: each replica, started from
# its snapshot of the old log, says "new log 1" and starts over empty from the new log's
# instance 1. A get of an old key is not found, new puts and gets work, and the replicas end
# with the same state, the new log's alone.
# Usage: e2e_kvstore_new_log.sh BUILD_DIR SOURCE_DIR
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
sed -e "s|^storage .*|storage memory|" -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^proposers .*|proposers 3|" -e "s|^counters-interval-ms .*|counters-interval-ms 200|" \
	"$BASE" >"$CONF"
# Unicast: proposer 2 needs an address too.
local_members "$CONF" || fail "cannot write the member addresses"
cp "$SRC/$KV/kvstore.conf" "$KCONF"
grep -q "^storage memory" "$CONF" || fail "cannot write the test configuration"

. "$SRC/tests/e2e/kvstore.sh"

ask() { # ask WANT COMMAND...: one command through the log, its reply must be WANT
	want=$1
	shift
	# Exit status 1: answered, but not OK (NOT_FOUND); more: no answer.
	if got=$(cli "$@" 2>>"$WORK/cli.err"); then rc=0; else rc=$?; fi
	[ "$rc" -le 1 ] || fail "kvstore-cli $* failed ($rc): $(tail -n 3 "$WORK/cli.err")"
	[ "$got" = "$want" ] || fail "kvstore-cli $*: \"$got\", not \"$want\""
}

# agree MIN "IDS" PIDS...: until the dumps (SIGUSR1) of replicas IDS, running as PIDS, are
# the same and count at least MIN commands applied (60 s). Every client has finished: equal
# dumps are the final state. At least: kvstore-cli runs a get whose reply it missed again, as
# a new command.
agree() {
	min=$1
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
		n=$(sed -n 's/^commands //p' "$WORK/state$first")
		[ $same = 1 ] && [ "${n:-0}" -ge "$min" ] && return 0
		i=$((i + 1))
		[ $i -gt 300 ] && fail "replicas did not agree on $min or more commands" \
			"($(cat "$WORK"/state* 2>/dev/null | grep '^commands' | tr '\n' ' '))"
	done
}

# ---- the old log ----
for r in 0 1 2; do replica kv$r $r; done
: >"$WORK/old.cmds"
: >"$WORK/old.expect"
for i in $(seq 1 20); do
	printf 'put old%s v%s\nget old%s\n' "$i" "$i" "$i" >>"$WORK/old.cmds"
	printf 'OK\nOK v%s\n' "$i" >>"$WORK/old.expect"
done
cli -f "$WORK/old.cmds" >"$WORK/old.out" 2>"$WORK/old.err" || fail "the old log's client failed"
cmp -s "$WORK/old.out" "$WORK/old.expect" || fail "the old log's client got unexpected results"
agree 40 "0 1 2" "$PID_kv0" "$PID_kv1" "$PID_kv2"
echo "e2e_kvstore_new_log: old log: 20 keys put and read, the replicas agree"

# ---- the whole restart: SIGTERM everything, start again on the same files ----
for r in 0 1 2; do stop_one kv$r; done
for r in 0 1 2; do
	[ -f "$WORK/r$r/snapshot" ] || fail "replica $r took no snapshot as it stopped"
done
for r in 0 1 2; do replica kv${r}b $r; done
for r in 0 1 2; do wait_log kv${r}b "loaded .*/snapshot: instances up to"; done
ask NOT_FOUND get old1
for r in 0 1 2; do wait_log kv${r}b "new log 1: the acceptors lost the log"; done
for r in 0 1 2; do
	[ "$(grep -c "new log 1:" "$WORK/kv${r}b.log")" -eq 1 ] ||
		fail "replica $r said \"new log 1\" more than once"
	[ ! -f "$WORK/r$r/snapshot" ] || grep -q "snapshot at instance" "$WORK/kv${r}b.log" ||
		fail "replica $r kept the old log's snapshot"
done

# ---- the new log: old keys gone, new ones work, the replicas agree ----
: >"$WORK/new.cmds"
: >"$WORK/new.expect"
for i in $(seq 1 20); do
	printf 'get old%s\nput new%s w%s\nget new%s\n' "$i" "$i" "$i" "$i" >>"$WORK/new.cmds"
	printf 'NOT_FOUND\nOK\nOK w%s\n' "$i" >>"$WORK/new.expect"
done
# Exit status 1: every command answered, some NOT_FOUND.
if cli -f "$WORK/new.cmds" >"$WORK/new.out" 2>"$WORK/new.err"; then rc=0; else rc=$?; fi
[ "$rc" -le 1 ] || fail "the new log's client failed ($rc): $(tail -n 3 "$WORK/new.err")"
cmp -s "$WORK/new.out" "$WORK/new.expect" ||
	fail "the new log's client got unexpected results: $(diff "$WORK/new.expect" "$WORK/new.out" | head -n 5)"
# 1 get of old1 + 60 commands, all of the new log.
agree 61 "0 1 2" "$PID_kv0b" "$PID_kv1b" "$PID_kv2b"
for r in 0 1 2; do
	grep -q "^old" "$WORK/state$r" && fail "replica $r holds an old log's key"
	[ "$(grep -c "^new" "$WORK/state$r")" -eq 20 ] || fail "replica $r lacks new keys"
	head -n 1 "$WORK/r$r/dump" | grep -q "new logs 1" || fail "replica $r's dump does not count the new log"
done
echo "e2e_kvstore_new_log: new log: every replica said \"new log 1\", the old keys are gone, 20 new keys put, the replicas agree"

# Stopped again: the count is in each replica's last line, and the snapshot is the new log's.
for r in 0 1 2; do stop_one kv${r}b; done
for r in 0 1 2; do
	grep -q "stopped at instance .* 1 new logs" "$WORK/kv${r}b.log" ||
		fail "replica $r's last line does not count the new log"
done
echo "e2e_kvstore_new_log: passed"
