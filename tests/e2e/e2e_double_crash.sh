#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A double crash must never split the learners (inside a private network namespace, memory
# storage, socket-buffer 65536): after 2,000 values acceptor 2 is stopped (SIGSTOP) and
# misses the next 20,000; then acceptors 0 and 1 and both proposers are killed together
# (kill -9) and restarted, and acceptor 2 goes on (SIGCONT). What 0 and 1 chose without 2 is
# known to no acceptor now: they must keep their votes withheld, and say why, rather than
# vote below it (they used to count each other's answers, set their floor at what acceptor 2
# held and let 125 instances be chosen again, differently). A learner started afterwards must
# deliver nothing that differs from the learner that ran throughout. Then a whole cluster is
# restarted without its state: it must not choose again in the old log, and begins a new one.
# Usage: e2e_double_crash.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'kill -CONT "$PID_acceptor2" 2>/dev/null || true; stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e "s|^socket-buffer .*|socket-buffer 65536|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$(base_conf)" >"$CONF"
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"

client() { # client NAME COUNT: must deliver
	"$BUILD/paxos-client" -c "$CONF" --count "$2" --outstanding 64 --size 16 --time-limit 60 \
		>"$WORK/$1.log" 2>&1 || fail "$1 did not deliver its $2 values"
}
forget() { PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' '); }
kill9() { # kill9 NAME
	eval "pid=\$PID_$1"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	forget "$pid"
}

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
start learner0 paxos-learner -c "$CONF" -o "$WORK/learner0.out"
sleep 0.3
client client1 2000
kill -STOP "$PID_acceptor2"
client client2 20000
for name in acceptor0 acceptor1 proposer0 proposer1; do kill9 $name; done
for i in 0 1; do start acceptor${i}b paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer${i}b paxos-proposer -c "$CONF" -i $i; done
sleep 0.2
kill -CONT "$PID_acceptor2"

# The cluster cannot know what 0 and 1 chose: values submitted now are not delivered.
status=0
"$BUILD/paxos-client" -c "$CONF" --count 2000 --outstanding 64 --size 16 --time-limit 6 \
	>"$WORK/client3.log" 2>&1 || status=$?
# A new learner learns only what the acceptors still hold: it must agree with the old one.
# It is done once its file stops growing (1 s without a line; 60 s at most on a busy machine).
start learner1 paxos-learner -c "$CONF" -o "$WORK/learner1.out"
n=0
prev=-1
for _ in $(seq 60); do
	sleep 1
	n=$(cat "$WORK/learner1.out" 2>/dev/null | wc -l)
	[ "$n" -eq 0 ] || [ "$n" -ne "$prev" ] || break
	prev=$n
done
stop_all
[ -s "$WORK/learner1.out" ] || fail "the new learner learned nothing"
awk 'NR == FNR { v[$1] = v[$1] " " $2; next } { w[$1] = w[$1] " " $2 }
	END { for (i in w) if (i in v && v[i] != w[i]) { print "instance " i; bad = 1 } exit bad }' \
	"$WORK/learner0.out" "$WORK/learner1.out" >"$WORK/differ" ||
	fail "$(wc -l <"$WORK/differ") instances differ between the learners (first: $(sort -k2 -n "$WORK/differ" | head -n 1))"
[ "$status" -ne 0 ] || fail "values were chosen again after a quorum of acceptors lost its state"
for i in 0 1; do
	grep -q "acceptor $i: recovered" "$WORK/acceptor${i}b.log" &&
		fail "acceptor $i recovered although no quorum of acceptors held its state"
	n=0 # said every 5 s
	until grep -q "acceptor $i: still recovering, votes withheld: answers from 1 of the 2 other acceptors it needs; no answer from acceptor $((1 - i)) (recovering too)\." \
		"$WORK/acceptor${i}b.log"; do
		n=$((n + 1))
		[ "$n" -le 300 ] || fail "acceptor $i did not say what it waits for"
		sleep 0.1
	done
done
grep -h "still recovering" "$WORK/acceptor0b.log" | head -n 1 | sed 's/^/e2e_double_crash: /'

echo "e2e_double_crash: $(cut -d' ' -f1 "$WORK/learner1.out" | sort -u | wc -l) instances learned again, none differs; values withheld"

# A whole cluster restarted (every acceptor without its state, every proposer in a later
# epoch): what it chose is lost, so nothing is chosen again in its instances: the acceptors
# begin a new log, of a higher generation, which learners tell from the old one
# (tests/e2e/e2e_new_log.sh). (Restarted proposers answer only after 2 s: the acceptors used
# to take their silence, and every peer recovering, for a first start, in the old log.)
rm -rf "$WORK/store"
for i in 0 1 2; do start acceptor${i}c paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer${i}c paxos-proposer -c "$CONF" -i $i; done
client client4 500
eventually 30 grep -q "recovered: .*(log generation 0)" "$WORK/acceptor0c.log" ||
	fail "the first start was not log generation 0"
stop_all
for i in 0 1 2; do start acceptor${i}d paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer${i}d paxos-proposer -c "$CONF" -i $i; done
client client5 100
# A quorum delivers those values; the third acceptor may join the new log later.
for i in 0 1 2; do
	eventually 30 grep -q "recovered: .*(log generation 1)" "$WORK/acceptor${i}d.log" ||
		fail "acceptor $i did not vote in a new log after the whole cluster lost its state"
done
grep -q "began a new log, generation 1" "$WORK"/acceptor?d.log || fail "no acceptor began a new log"
echo "e2e_double_crash: a whole-cluster restart begins a new log (generation 1)"
