#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Incarnations that neither a replay nor a wrong clock can fake (inside a private network
# namespace, with an auth-key-file, memory storage):
#  1. acceptor 1's hello is captured as it goes by (paxos-witness -H); acceptor 1 is killed
#     (kill -9) and restarted; the capture is sent again 3 times 0.4 s apart. The tag is
#     valid, yet the new acceptor 1 must go on (it stopped on such a replay: "another
#     acceptor 1 runs since before this one") and the cluster must still serve a client;
#  2. a second acceptor 1 is started with its clock an hour behind: it is the newer one, so
#     it must stop, and the running one must go on and log it (the running one used to stop,
#     taking the lower wall-clock incarnation for the older start).
# Usage: e2e_replay.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
"$BUILD/paxos-keygen" "$WORK/cluster.key" 2>/dev/null || fail "paxos-keygen failed"
sed -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$(base_conf)" >"$CONF"
echo "auth-key-file $WORK/cluster.key" >>"$CONF"
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"
GROUP=$(sed -n 's/^acceptors-group[[:blank:]]*\([^[:blank:]]*\).*/\1/p' "$CONF")

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
start witness paxos-witness -c "$CONF" -o "$WORK/witness.txt" -H "1:$WORK/hello1.bin"
client() { # client NAME COUNT
	"$BUILD/paxos-client" -c "$CONF" --count "$2" --outstanding 16 --size 16 --time-limit 20 \
		>"$WORK/$1.log" 2>&1 || fail "$1 did not deliver its $2 values"
}
client client1 500
i=0
until [ -s "$WORK/hello1.bin" ]; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "no hello of acceptor 1 was captured"
	sleep 0.1
done

# 1. A replayed hello of acceptor 1's earlier life.
kill -9 "$PID_acceptor1"
wait "$PID_acceptor1" 2>/dev/null || true
start acceptor1b paxos-acceptor -c "$CONF" -i 1
i=0
until grep -q "acceptor 1: recovered:" "$WORK/acceptor1b.log"; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "the restarted acceptor 1 did not recover"
	sleep 0.1
done
for k in 1 2 3; do
	"$BUILD/paxos-send" "$GROUP" "@$WORK/hello1.bin" || fail "paxos-send failed"
	sleep 0.4
done
sleep 0.5
kill -0 "$PID_acceptor1b" 2>/dev/null ||
	fail "the restarted acceptor 1 stopped on a replayed hello: $(tail -n 2 "$WORK/acceptor1b.log")"
client client2 500
echo "e2e_replay: a replayed hello left the restarted acceptor 1 running"

# 2. A second acceptor 1 whose clock is an hour behind: the newer one, it stops.
status=0
timeout 30 faketime -f -3600s "$BUILD/paxos-acceptor" -c "$CONF" -i 1 >"$WORK/skewed.log" 2>&1 ||
	status=$?
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] ||
	fail "the second acceptor 1 did not stop by itself (status $status)"
grep -q "another acceptor 1 (incarnation [0-9]*) runs since before this one" \
	"$WORK/skewed.log" || fail "the second acceptor 1 did not say why it stopped"
eventually 30 grep -q "another acceptor 1 (incarnation [0-9]*) started while this one runs" \
	"$WORK/acceptor1b.log" || fail "the running acceptor 1 did not log the newer one"
sleep 0.5
kill -0 "$PID_acceptor1b" 2>/dev/null ||
	fail "the running acceptor 1 stopped for a newer one with a clock behind"
client client3 500
echo "e2e_replay: an acceptor 1 with its clock an hour behind stopped; the running one went on"
stop_all
