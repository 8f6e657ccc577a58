#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Local reads behind a read barrier (paxos_node_barrier), over real multicast (or unicast with
# PAXOS_TRANSPORT=unicast) in a private network namespace: three kvstore replicas, each
# hosting acceptor, proposer and learner.
#  1. 50 times: a put through the log, answered by whichever replica is first, then a get
#     served by replica 2 alone from its own table (kvstore-cli --local-reads 2): it returns
#     the value just written, every time.
#  2. Replica 2 is stopped (SIGSTOP) while thousands of puts and then a new value of one key
#     are written: its socket buffers overflow, so once it runs again it has to catch up
#     from the acceptors. A local read sent to it meanwhile waits for that, and it answers
#     with the new value, never the old one it held.
# Usage: e2e_read_barrier.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'kill -CONT $PIDS 2>/dev/null || true; stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
KV=sample/kvstore
[ -x "$BUILD/$KV/kvstore-cli" ] || fail "$BUILD/$KV/kvstore-cli is not built"
BASE=$(base_conf)
CONF=$WORK/paxos.conf
KCONF=$WORK/kvstore.conf
sed -e "s|^proposers .*|proposers 3|" "$BASE" >"$CONF"
local_members "$CONF" || fail "cannot write the member addresses"
cp "$SRC/$KV/kvstore.conf" "$KCONF"
. "$SRC/tests/e2e/kvstore.sh"

for r in 0 1 2; do replica kv$r $r; done

# ---- 1. read after write, on another replica ----
: >"$WORK/rw.cmds"
: >"$WORK/rw.expect"
for i in $(seq 1 50); do
	printf 'put key%s value%s\n' "$i" "$i" >>"$WORK/rw.cmds"
	printf 'OK\nOK value%s\n' "$i" >>"$WORK/rw.expect"
	printf 'get key%s\n' "$i" >>"$WORK/rw.cmds"
done
cli --local-reads 2 -f "$WORK/rw.cmds" >"$WORK/rw.out" 2>"$WORK/rw.err" ||
	fail "the read-after-write client failed: $(tail -n 3 "$WORK/rw.err")"
cmp -s "$WORK/rw.out" "$WORK/rw.expect" ||
	fail "a local read missed the write before it: $(diff "$WORK/rw.expect" "$WORK/rw.out" | head -n 5)"
echo "e2e_read_barrier: 50 writes, each read back from replica 2's own table"

# ---- 2. a replica that cannot apply the write yet makes the read wait ----
cli put late old >/dev/null || fail "the first put failed"
cli --local-reads 2 get late | grep -qx "OK old" || fail "replica 2 does not hold the first value"
kill -STOP "$PID_kv2"
# The load only pushes replica 2 further behind: a loaded machine may complete few puts in
# 2 s, or none (kvstore-load then exits 1), and what is checked is the read below.
"$BUILD/$KV/kvstore-load" -c "$CONF" -k "$KCONF" --clients 16 --seconds 2 \
	>"$WORK/load.out" 2>"$WORK/load.err" || grep -q " puts 0 " "$WORK/load.out" ||
	fail "kvstore-load failed: $(tail -n 3 "$WORK/load.err")"
cli put late new >/dev/null || fail "the put without replica 2 failed"
cli --local-reads 2 get late >"$WORK/late.out" 2>"$WORK/late.err" &
reader=$!
# The read is waiting: the replica that would answer it is stopped.
sleep 0.5
kill -0 "$reader" 2>/dev/null || fail "the local read was answered by a stopped replica"
kill -CONT "$PID_kv2"
wait "$reader" || fail "the local read failed: $(cat "$WORK/late.err")"
grep -qx "OK new" "$WORK/late.out" || fail "replica 2 answered '$(cat "$WORK/late.out")', not the new value"
echo "e2e_read_barrier: a read sent to a stopped replica waited for the write chosen before it" \
	"($(sed -n 's/.* puts \([0-9]*\) .*/\1/p' "$WORK/load.out") puts before it)"
stop_all
echo "e2e_read_barrier: passed"
