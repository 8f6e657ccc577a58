#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Acceptors that lose their state must not make learners disagree (inside a private network
# namespace, shipped configuration: storage memory). Under load from a client that resubmits:
#  1. acceptor 1 is killed (kill -9) and restarted: it comes back empty, must say it recovers,
#     and vote again only once it recovered;
#  2. a second `paxos-acceptor -i 1` is started while the first runs: the newer one must stop
#     with a clear message and the running one must log it;
#  3. the leadership moves to proposer 1 and back (paxos-oracle), which is when a forgetful
#     acceptor used to let a second value be chosen;
#  4. acceptor 2 is killed and restarted too, so that quorums need the recovered acceptor 1;
#  5. a new learner starts from instance 1 at the end.
# The old learner, the new one and a third that ran throughout must deliver identical outputs
# holding every submitted value.
# Usage: e2e_amnesia.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=60000
CONF=$WORK/paxos.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" -e "s|^election .*|election auto|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$SRC/paxos.conf" >"$CONF"
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5
: >"$WORK/submitted"
# The load lasts until drained after the last fault (COUNT is the scale of the steps).
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --outstanding 8 --size 16 \
	--resubmit-ms 200 --time-limit 200 --log "$WORK/submitted"
progress() { # progress NUM DEN WHAT
	wait_lines "$WORK/submitted" $((COUNT * $1 / $2)) 60 || fail "no progress $3"
	kill -0 "$CLIENT" 2>/dev/null || fail "the client ended $3: $(tail -n 3 "$WORK/client.log")"
}
forget() { PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' '); }
# restart_acceptor I NAME: kill -9 acceptor I and start it again as NAME, empty; it must
# recover before it votes.
restart_acceptor() {
	eval "pid=\$PID_acceptor$1"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	forget "$pid"
	start "$2" paxos-acceptor -c "$CONF" -i "$1"
	eval "PID_acceptor$1=\$PID_$2"
	eventually 30 grep -q "acceptor $1: recovered: votes again above instance" "$WORK/$2.log" ||
		fail "acceptor $1 did not recover after its restart"
	grep -q "acceptor $1: started without earlier state" "$WORK/$2.log" ||
		fail "acceptor $1 did not say it started without its state"
	grep "recovered:" "$WORK/$2.log" | sed 's/^/e2e_amnesia: /'
}

progress 1 6 "before the first restart"
restart_acceptor 1 acceptor1b

# A duplicate of the running acceptor 1: the newer one stops, both say so.
status=0
timeout 30 "$BUILD/paxos-acceptor" -c "$CONF" -i 1 >"$WORK/duplicate.log" 2>&1 || status=$?
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] ||
	fail "a second acceptor 1 did not stop by itself (status $status)"
grep -q "another acceptor 1 (incarnation [0-9]*) runs since before this one" \
	"$WORK/duplicate.log" || fail "the second acceptor 1 did not say why it stopped"
eventually 30 grep -q "another acceptor 1 (incarnation [0-9]*) started while this one runs" \
	"$WORK/acceptor1b.log" || fail "the running acceptor 1 did not log the duplicate"
grep -h "another acceptor" "$WORK/duplicate.log" "$WORK/acceptor1b.log" | sed 's/^/e2e_amnesia: /'

progress 2 6 "after the duplicate"
"$BUILD/paxos-oracle" -c "$CONF" --leader 1 >/dev/null || fail "paxos-oracle --leader 1 failed"
progress 3 6 "under proposer 1"
"$BUILD/paxos-oracle" -c "$CONF" --auto >/dev/null || fail "paxos-oracle --auto failed"
progress 4 6 "back under proposer 0"
restart_acceptor 2 acceptor2b
progress 5 6 "after the second restart"
client_drain || fail "paxos-client did not get all its values delivered: $(tail -n 3 "$WORK/client.log")"
start learner2 paxos-learner -c "$CONF" -o "$WORK/learner2.out"

converged "$(wc -l <"$WORK/submitted")" "$WORK/submitted" \
	"$WORK/learner0.out" "$WORK/learner1.out" "$WORK/learner2.out"
echo "e2e_amnesia: $LINES values delivered identically by 3 learners (one started at the end)" \
	"through two acceptor restarts without state, a duplicate and two leader changes"
