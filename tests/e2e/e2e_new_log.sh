#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A whole memory cluster restarted (inside a private network namespace): the role list
# (3 acceptors, both proposers, the shipped paxos.conf with its storage-path) delivers 2,000
# values to a client and to a learner; then every acceptor and proposer is stopped with SIGTERM
# and started again on the same files. Every acceptor lost the log, so they begin a new one:
# a second client's 2,000 values are delivered, and the learner that ran through the restart
# says "new log" (its log, its output, its new_logs counter) before it delivers any value of
# the new log, which it delivers from instance 1. Stopped and started again, with acceptor 2
# late: the others withhold their votes (acceptor 2 may hold the log), and paxos-admin status
# and the client say so within 2 s; once it runs, a third log begins.
# Usage: e2e_new_log.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$(base_conf)
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"

start_cluster() { # start_cluster SUFFIX: both proposers and the 3 acceptors
	for i in 0 1; do start "proposer$i$1" paxos-proposer -c "$CONF" -i $i; done
	for i in 0 1 2; do start "acceptor$i$1" paxos-acceptor -c "$CONF" -i $i; done
}

start_cluster a
start learner paxos-learner -c "$CONF" -o "$WORK/learner.out"
"$BUILD/paxos-client" -c "$CONF" --count 2000 --outstanding 64 --size 32 --time-limit 60 \
	>"$WORK/client0.log" 2>&1 || fail "the first start did not deliver 2000 values"
# Values batched into instances: the learner has its 2,000 lines once it caught up.
wait_lines "$WORK/learner.out" 2000 20 || fail "the learner did not deliver the 2000 values"
echo "e2e_new_log: first start: 2000 values delivered, the learner wrote $(wc -l <"$WORK/learner.out") lines"

# SIGTERM, as Ctrl-C or systemctl stop would; the learner runs on.
stop_cluster() { # stop_cluster SUFFIX
	for name in proposer0 proposer1 acceptor0 acceptor1 acceptor2; do stop_one "$name$1"; done
	[ -s "$WORK/store/proposer-0/epoch" ] || fail "proposer 0 kept no epoch file"
}

# new_log GENERATION SUFFIX: the acceptors started with SUFFIX began log GENERATION (one
# began it, the others may have joined it), a client got 2,000 values delivered, and the
# learner's output says "new log GENERATION" once, before the new log's values, which run
# from instance 1.
new_log() {
	"$BUILD/paxos-client" -c "$CONF" --count 2000 --outstanding 64 --size 32 --time-limit 60 \
		>"$WORK/client$1.log" 2>&1 || fail "log $1: the client did not get 2000 values delivered"
	for i in 0 1 2; do wait_log "acceptor$i$2" "recovered: .*(log generation $1)"; done
	grep -q "began a new log, generation $1" "$WORK"/acceptor?"$2".log ||
		fail "no acceptor began log $1"
	before=$(wc -l <"$WORK/learner.out")
	i=0
	until grep -q "^new log $1\$" "$WORK/learner.out" &&
		[ "$(sed -n "/^new log $1\$/,\$p" "$WORK/learner.out" | wc -l)" -gt 2000 ]; do
		i=$((i + 1))
		[ "$i" -le 200 ] || fail "the learner did not deliver log $1 ($before lines)"
		sleep 0.1
	done
	[ "$(grep -c "^new log $1\$" "$WORK/learner.out")" -eq 1 ] ||
		fail "the learner's output says new log $1 more than once"
	sed -n "/^new log $1\$/,\$p" "$WORK/learner.out" | tail -n +2 | grep -v "^new log" \
		>"$WORK/log$1.out"
	consecutive "$WORK/log$1.out" || fail "log $1's instances are not consecutive from 1"
	i=0
	until grep -q "new_logs=$1" "$WORK/learner.log"; do
		i=$((i + 1))
		[ "$i" -le 100 ] || fail "the learner's counters do not say new_logs=$1"
		sleep 0.1
	done
	echo "e2e_new_log: log $1: 2000 values delivered; the learner said \"new log\" first, then delivered it from instance 1 ($(wc -l <"$WORK/log$1.out") values)"
}

# The restart of the role list's cluster: everything at once, on the same files.
stop_cluster a
start_cluster b
new_log 1 b
wait_log learner "the acceptors began a new log (generation 1)"

# Again, with acceptor 2 late: acceptors 0 and 1 cannot tell that the log is lost while
# acceptor 2 may hold it, and withhold their votes. The client and paxos-admin say so.
stop_cluster b
for i in 0 1; do start "proposer${i}c" paxos-proposer -c "$CONF" -i $i; done
for i in 0 1; do start "acceptor${i}c" paxos-acceptor -c "$CONF" -i $i; done
t0=$(date +%s%N)
"$BUILD/paxos-admin" -c "$CONF" status >"$WORK/admin.out" 2>&1 &&
	fail "paxos-admin status said the cluster votes: $(cat "$WORK/admin.out")"
ms=$((($(date +%s%N) - t0) / 1000000))
grep -q "acceptors withholding their votes: 0,1" "$WORK/admin.out" ||
	fail "paxos-admin status did not say why the cluster does not vote: $(cat "$WORK/admin.out")"
echo "e2e_new_log: paxos-admin status answered in $ms ms: $(grep withholding "$WORK/admin.out")"
[ "$ms" -lt 4000 ] || fail "paxos-admin status took $ms ms"
"$BUILD/paxos-client" -c "$CONF" --count 10 --size 32 --time-limit 3 \
	>"$WORK/client-stall.log" 2>&1 && fail "a value was delivered while acceptor 2 was away"
grep -q "nothing delivered for 1\.[0-9] s: partition 0: 2 of the 3 acceptors withhold their votes" \
	"$WORK/client-stall.log" || fail "the client did not say why nothing is delivered"
echo "e2e_new_log: the client said: $(grep -m 1 'nothing delivered' "$WORK/client-stall.log")"
grep -q "^new log 2" "$WORK/learner.out" && fail "a new log began before acceptor 2 ran"
start acceptor2c paxos-acceptor -c "$CONF" -i 2
new_log 2 c
stop_all
