#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A forged answer to a recovering acceptor, without a key (inside a private network namespace,
# memory storage). Acceptor 1 is stopped (SIGSTOP), acceptor 2 is killed (kill -9) and
# restarted: it recovers, and waits for a second acceptor's answer. An observer reads its
# incarnation off its hello (it travels in clear) and answers as acceptor 0, which runs and
# answered already: instance 2^40 and a ballot in epoch 2^20 - 2. Were it believed, acceptor 2
# would vote only above instance 2^40, for good (it used to). It comes from another address
# than acceptor 0's, so acceptor 2 drops it, says so, and votes once acceptor 1 is back: with
# acceptor 0 stopped, acceptors 1 and 2 must serve a client.
# Usage: e2e_forged_recovery.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 100|" "$(base_conf)" >"$CONF"
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"
GROUP=$(sed -n 's/^acceptors-group[[:blank:]]*\([^[:blank:]]*\).*/\1/p' "$CONF")

client() { # client NAME COUNT
	"$BUILD/paxos-client" -c "$CONF" --count "$2" --outstanding 16 --size 16 --time-limit 20 \
		>"$WORK/$1.log" 2>&1 || fail "$1 did not deliver its $2 values"
}

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
client client1 300
# The acceptors' learners hear what was chosen from the leader's accepts, and the last
# instances before a pause at their next hole check: two acceptors go down below, and the one
# left with acceptor 2 must hold client1's decisions, or no quorum can teach them again.
delivered() { # delivered NAME: the instances its learner delivered, as its last counters say
	grep "counters learner" "$WORK/$1.log" | tail -n 1 |
		sed -n 's/.*instances_delivered=\([0-9]*\).*/\1/p'
}
caught_up() {
	want=$(delivered proposer0)
	[ -n "$want" ] && [ "$(delivered acceptor0)" = "$want" ] &&
		[ "$(delivered acceptor1)" = "$want" ]
}
eventually 30 caught_up || fail "the acceptors did not learn client1's values: $(delivered acceptor0) and $(delivered acceptor1) of $(delivered proposer0)"

kill -STOP "$PID_acceptor1"
kill -9 "$PID_acceptor2"
wait "$PID_acceptor2" 2>/dev/null || true
start witness paxos-witness -c "$CONF" -o "$WORK/witness.txt" -H "2:$WORK/hello2.bin"
sleep 0.3
start acceptor2b paxos-acceptor -c "$CONF" -i 2
i=0
until [ -s "$WORK/hello2.bin" ] && grep -q "still recovering" "$WORK/acceptor2b.log"; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "acceptor 2 did not wait for a second answer: $(tail -n 2 "$WORK/acceptor2b.log")"
	sleep 0.1
done

# The hello is [14, acceptor 2, incarnation, ...]: 97 0e 02, then the incarnation as msgpack
# encoded it (cf + 8 bytes, or shorter for a small one).
hex=$(od -An -v -tx1 "$WORK/hello2.bin" | tr -d ' \n')
rest=${hex#*970e02}
[ "$rest" != "$hex" ] || fail "no hello of acceptor 2 in the capture: $hex"
case $rest in
cf*) incarnation=$(echo "$rest" | cut -c1-18) ;;
ce*) incarnation=$(echo "$rest" | cut -c1-10) ;;
cd*) incarnation=$(echo "$rest" | cut -c1-6) ;;
cc*) incarnation=$(echo "$rest" | cut -c1-4) ;;
*) incarnation=$(echo "$rest" | cut -c1-2) ;;
esac
# [magic, version 6, acceptor, 0] [16, acceptor, 0, for acceptor 2, incarnation, 2^40,
# (2^20 - 2) << 32 * 100, generation 0, no founder]
forged="94cd5058060000""99100000""02${incarnation}cf0000010000000000cf063fff380000000000c2"
for k in 1 2 3; do
	"$BUILD/paxos-send" "$GROUP" "$forged" >/dev/null || fail "paxos-send failed"
	sleep 0.1
done
eventually 30 grep -q "refused: from 127.0.0.1:[0-9]*, while another address speaks for that acceptor .* (datagram from acceptor 0)" \
	"$WORK/acceptor2b.log" || fail "acceptor 2 did not log the forged answer: $(tail -n 3 "$WORK/acceptor2b.log")"

kill -CONT "$PID_acceptor1"
i=0
until grep -q "acceptor 2: recovered:" "$WORK/acceptor2b.log"; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "acceptor 2 did not recover once acceptor 1 was back"
	sleep 0.1
done
grep "acceptor 2: recovered:" "$WORK/acceptor2b.log" | grep -q "above instance 1099511627776" &&
	fail "acceptor 2 took the forged floor: $(grep "recovered:" "$WORK/acceptor2b.log")"
kill -STOP "$PID_acceptor0"
client client2 300
kill -CONT "$PID_acceptor0"
echo "e2e_forged_recovery: a forged answer as acceptor 0 was dropped; acceptors 1 and 2 served a client"
stop_all
