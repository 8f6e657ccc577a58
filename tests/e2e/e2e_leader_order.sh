#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A leader order neither outlives the leader it names nor works when replayed (3 acceptors,
# 2 proposers, memory storage, in a private network namespace):
#  1. with an auth-key-file: `paxos-oracle --leader 1` is captured as it goes by
#     (paxos-witness -L), obeyed, then `--auto` gives the leadership back to proposer 0.
#     Proposer 1 is killed and the capture, validly tagged, is sent again: proposer 0 must not
#     follow it, and a client is served within the bound;
#  2. without a key: an order for proposer 1 (anyone may send one) is obeyed, then proposer 1
#     is killed: the order ends with it, proposer 0 leads again by the rule and a client is
#     served within the bound; an order stamped a minute ago is refused as stale.
# Usage: e2e_leader_order.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

"$BUILD/paxos-keygen" "$WORK/cluster.key" 2>/dev/null || fail "paxos-keygen failed"
sed -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 100|" "$SRC/paxos.conf" >"$WORK/plain.conf"
grep -q "^counters-interval-ms 100" "$WORK/plain.conf" || fail "cannot write the configuration"
cp "$WORK/plain.conf" "$WORK/keyed.conf"
echo "auth-key-file $WORK/cluster.key" >>"$WORK/keyed.conf"
PROPOSERS=$(awk '$1 == "proposers-group" { print $2 }' "$WORK/plain.conf")

GEN=0
start_cluster() { # start_cluster CONF: a new cluster of generation GEN
	GEN=$((GEN + 1))
	rm -rf "$WORK/store"
	for i in 0 1 2; do start acceptor${i}_$GEN paxos-acceptor -c "$1" -i $i; done
	for i in 0 1; do start proposer${i}_$GEN paxos-proposer -c "$1" -i $i; done
	wait_log proposer0_$GEN "leader is 0 at start" >/dev/null
}
# served CONF WHAT: a client gets 200 values delivered within 20 s (a stalled cluster gets none)
served() {
	"$BUILD/paxos-client" -c "$1" --count 200 --outstanding 8 --size 16 --resubmit-ms 500 \
		--time-limit 20 >"$WORK/client.log" 2>&1 ||
		fail "$2: no client served within 20 s: $(tail -n 2 "$WORK/client.log")"
}
leads() { # leads NAME LEADER: NAME's proposer last logged LEADER as the leader
	grep "leader is now" "$WORK/$1.log" | tail -n 1 | grep -q "leader is now $2 "
}
kill_proposer1() {
	kill -KILL "$(eval echo "\$PID_proposer1_$GEN")"
	wait "$(eval echo "\$PID_proposer1_$GEN")" 2>/dev/null || true
}

# --- 1. a replayed keyed order naming a dead proposer -----------------------------------------
start_cluster "$WORK/keyed.conf"
start witness paxos-witness -c "$WORK/keyed.conf" -o "$WORK/witness.txt" -L "$WORK/order.bin"
sleep 0.3
served "$WORK/keyed.conf" "1, at start"
"$BUILD/paxos-oracle" -c "$WORK/keyed.conf" --leader 1 2>/dev/null || fail "paxos-oracle failed"
eventually 30 leads proposer0_1 1 || fail "1: proposer 0 did not obey the keyed order"
eventually 30 test -s "$WORK/order.bin" || fail "1: the order was not captured"
"$BUILD/paxos-oracle" -c "$WORK/keyed.conf" --auto 2>/dev/null || fail "paxos-oracle failed"
eventually 30 leads proposer0_1 0 || fail "1: proposer 0 did not lead again on --auto"
kill_proposer1
# At once (older than the order taken since), and once older than the freshness window.
replay() { "$BUILD/paxos-send" "$PROPOSERS" "@$WORK/order.bin" || fail "paxos-send failed"; }
for k in 1 2 3; do
	replay
	sleep 0.1
done
sleep 2.5
replay
eventually 30 grep -q "refused: leader order for proposer 1 .*: sent too long ago" \
	"$WORK/proposer0_1.log" || fail "1: proposer 0 did not refuse the late replay"
served "$WORK/keyed.conf" "1, after the replay"
leads proposer0_1 0 || fail "1: proposer 0 followed the replayed order"
grep -q "refused: leader order for proposer 1 .*: older than the order taken last" \
	"$WORK/proposer0_1.log" || fail "1: proposer 0 did not refuse the replayed order"
echo "e2e_leader_order: 1. a replayed keyed order for dead proposer 1 was refused; served"
stop_all

# --- 2. no key: an order for proposer 1, then its death ---------------------------------------
start_cluster "$WORK/plain.conf"
served "$WORK/plain.conf" "2, at start"
"$BUILD/paxos-oracle" -c "$WORK/plain.conf" --leader 1 2>/dev/null || fail "paxos-oracle failed"
eventually 30 leads proposer0_2 1 || fail "2: proposer 0 did not obey the order"
kill_proposer1
# Proposer 0 hears proposer 1 no more: the order ends, the rule makes it lead (within the
# heartbeat timeout; 30 s for a loaded machine), and a client is served.
eventually 30 leads proposer0_2 0 || fail "2: proposer 0 still follows dead proposer 1"
served "$WORK/plain.conf" "2, after proposer 1 died"
# An order stamped a minute ago, as a capture replayed later would be: refused, counted.
old=$(($(date +%s) - 60))000000
hex=$(printf '94cd505806%02x%02x930c01cf%016x' 3 0 "$old")
"$BUILD/paxos-send" "$PROPOSERS" "$hex" || fail "paxos-send failed"
eventually 30 grep -q "refused: leader order .*: sent too long ago" "$WORK/proposer0_2.log" ||
	fail "2: a stale order was not refused"
stale() { [ "$(counter proposer0_2 transport stale_orders)" -ge 1 ] 2>/dev/null; }
eventually 30 stale || fail "2: the stale order was not counted"
leads proposer0_2 0 || fail "2: a stale order moved the leadership"
echo "e2e_leader_order: 2. an order ended with the death of the proposer it named; a stale" \
	"one was refused"
