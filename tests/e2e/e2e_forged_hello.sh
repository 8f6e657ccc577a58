#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Forged acceptor hellos, without any key (3 acceptors on memory storage, 1 proposer, 1
# learner, in a private network namespace). A hello as acceptor 1 that echoes acceptor 1's
# incarnation (it is in every hello acceptor 1 sends) and claims a far greater age says that
# another acceptor 1 runs since before this one, which used to make acceptor 1 stop on that
# one datagram. Now:
#  1. the same forged hello sent five times at once (one tick): acceptor 1 logs it loudly and
#     keeps running, and the cluster keeps delivering;
#  2. the hello sent again on enough ticks (as a second acceptor 1 that runs would): acceptor
#     1 stops, as it must for a real duplicate (e2e_amnesia.sh starts one).
# Usage: e2e_forged_hello.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" -e 's/^proposers  *[0-9]*/proposers 1/' \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$SRC/paxos.conf" >"$CONF"
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"
grep -q "^auth-key-file" "$CONF" && fail "the shipped configuration has a key"
ACCEPTORS=$(awk '$1 == "acceptors-group" { print $2 }' "$CONF")
REPEAT_MS=$(awk '$1 == "acceptor-repeat-ms" { print $2 }' "$CONF")
[ -n "$REPEAT_MS" ] || REPEAT_MS=100

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start learner0 paxos-learner -c "$CONF" -o "$WORK/learner0.out"
wait_log acceptor1 "acceptor 1: recovered"
INCARNATION=$(sed -n 's/.*acceptor 1: started without earlier state (incarnation \([0-9]*\)).*/\1/p' \
	"$WORK/acceptor1.log")
[ -n "$INCARNATION" ] || fail "acceptor 1 did not log its incarnation"
# [magic, version 6, role acceptor, id 1], then [14 hello, id 1, incarnation 777, recovering
# false, age 2^62 us, echo acceptor 1's incarnation, generation 0].
HELLO=$(python3 -c 'import sys; print("94cd5058060001" + "970e01cf%016xc2cf%016xcf%016x00" %
	(777, 1 << 62, int(sys.argv[1])))' "$INCARNATION")
served=0
serve() { # serve COUNT: a client gets COUNT values delivered
	"$BUILD/paxos-client" -c "$CONF" --count "$1" --outstanding 4 --size 16 --resubmit-ms 500 \
		--time-limit 20 >"$WORK/client.log" 2>&1 || fail "the client did not get $1 values delivered"
	served=$((served + $1))
	wait_lines "$WORK/learner0.out" "$served" 10 || fail "the learner did not deliver $served values"
}
serve 100

# 1. One tick's worth of forged hellos.
for _ in 1 2 3 4 5; do "$BUILD/paxos-send" "$ACCEPTORS" "$HELLO" >/dev/null; done
wait_log acceptor1 "runs since before this one (incarnation $INCARNATION); unauthenticated"
sleep 1
kill -0 "$PID_acceptor1" 2>/dev/null || fail "acceptor 1 stopped on one tick's forged hellos"
grep -q "fatal" "$WORK/acceptor1.log" && fail "acceptor 1 logged a fatal error"
serve 100
echo "e2e_forged_hello: 1. acceptor 1 runs on after 5 forged hellos at once, and said so"

# 2. The hello on a tick after tick, as a duplicate that runs says it.
i=0
while kill -0 "$PID_acceptor1" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 20 ] || fail "acceptor 1 did not stop on hellos of an older duplicate for 20 ticks"
	"$BUILD/paxos-send" "$ACCEPTORS" "$HELLO" >/dev/null
	sleep "$(awk -v ms="$REPEAT_MS" 'BEGIN { print ms * 1.5 / 1000 }')"
done
grep -q "another acceptor 1 (incarnation 777) runs since before this one" "$WORK/acceptor1.log" ||
	fail "acceptor 1 stopped without saying why"
echo "e2e_forged_hello: 2. acceptor 1 stops on hellos of an older duplicate over $i ticks"
stop_all
