#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Learner catch-up over real multicast, or unicast with PAXOS_TRANSPORT=unicast (inside a
# private network namespace): 3 acceptors, 2 proposers and a client that keeps the cluster
# loaded throughout.
#  (a) learner 1 is killed with SIGKILL and restarted (learner-start first, a new output
#      file): while the load goes on it must catch up from instance 1 (batched repeats,
#      thesis 3.6.2) and follow the live traffic; at the end its output equals learner 0's.
#  (b) a learner started late with `learner-start current` delivers from some instance on:
#      its output is a suffix of learner 0's.
#  (c) `paxos-monitor --fetch IID` (paxos_node_fetch) gets past instances' values, the same
#      as learner 0 delivered, and times out on an instance nobody decided.
# Outputs are compared as files: an instance may carry several values (several lines).
# Usage: e2e_catchup.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=$(base_conf)
sed -e 's/^learner-start .*/learner-start current/' "$CONF" >"$WORK/current.conf"
grep -q "^learner-start current" "$WORK/current.conf" || fail "cannot set learner-start current"

lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
last_iid() { tail -n 1 "$1" 2>/dev/null | cut -d' ' -f1; }

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5

# Far more values than the test waits for: the load lasts until the client is stopped (the
# time limit is a budget for a busy machine, which may get only a few thousand values a second
# through). At most 4000 values a second: a learner that catches up does the live traffic's
# work and its own, and on a machine whose processes each get a share of too few CPUs, a load
# as fast as the cluster goes would leave it no more than learner 0 has.
"$BUILD/paxos-client" -c "$CONF" --count 100000000 --rate 4000 --outstanding 1 --size 16 \
	--resubmit-ms 200 --time-limit 250 >"$WORK/client.log" 2>&1 &
CLIENT=$!
PIDS="$PIDS $CLIENT"
client_running() { kill -0 "$CLIENT" 2>/dev/null; }

# More than a learner window (4096) of instances before the crash and while it is down, so
# that the restarted learner drops live traffic and must catch up by repeats alone.
wait_lines "$WORK/learner0.out" 20000 90 || fail "no load: learner 0 delivers nothing"

# (a) crash and restart
kill -9 "$PID_learner1"
wait "$PID_learner1" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_learner1" | tr '\n' ' ')
at_crash=$(lines "$WORK/learner0.out")
wait_lines "$WORK/learner0.out" $((at_crash + 20000)) 90 || fail "no load after the crash"
start learner1b paxos-learner -c "$CONF" -o "$WORK/learner1b.out"
restarted=$(date +%s%N)
at_restart=$(lines "$WORK/learner0.out")

# (b) a learner from the current instance
sleep 0.3
start current paxos-learner -c "$WORK/current.conf" -o "$WORK/current.out"

# Caught up under load: the restarted learner gets within 5000 lines of learner 0 (0.2 s of
# traffic here; 60 s: a busy machine serves it slowly).
i=0
while :; do
	client_running || fail "the client stopped before learner 1 caught up"
	kill -0 "$PID_learner1b" 2>/dev/null || fail "the restarted learner exited"
	n0=$(lines "$WORK/learner0.out")
	n1=$(lines "$WORK/learner1b.out")
	[ "$n1" -gt "$at_restart" ] && [ $((n0 - n1)) -lt 5000 ] && break
	i=$((i + 1))
	[ "$i" -gt 600 ] && fail "learner 1 did not catch up under load ($n1 lines, learner 0 $n0)"
	sleep 0.1
done
echo "e2e_catchup: the restarted learner caught up under load within" \
	"$((($(date +%s%N) - restarted) / 1000000)) ms (learner 0 had $at_restart lines then)"
sleep 1
client_running || fail "the client stopped early"
kill -TERM "$CLIENT"
wait "$CLIENT" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$CLIENT" | tr '\n' ' ')

# Quiet now: wait until every learner has delivered up to learner 0's last instance, the two
# from instance 1 as many lines, every file ends with a whole line and none grew since the last
# look (the files are flushed every 100 ms: the last values of that instance reach them too).
quiet() {
	for f in "$WORK/learner0.out" "$WORK/learner1b.out" "$WORK/current.out"; do
		[ -z "$(tail -c 1 "$f")" ] || return 1
	done
	l0=$(last_iid "$WORK/learner0.out")
	[ -n "$l0" ] && [ "$(last_iid "$WORK/learner1b.out")" = "$l0" ] &&
		[ "$(last_iid "$WORK/current.out")" = "$l0" ] &&
		[ "$(lines "$WORK/learner0.out")" -eq "$(lines "$WORK/learner1b.out")" ] || return 1
	sizes=$(cat "$WORK/learner0.out" "$WORK/learner1b.out" "$WORK/current.out" | wc -c)
	[ "$sizes" = "${last_sizes:-}" ] && return 0
	last_sizes=$sizes
	sleep 0.2
	return 1
}
eventually 30 quiet || fail "learners did not converge"

# (c) fetching single past instances (paxos_node_fetch, thesis 3.3) while the cluster runs
for iid in 1 $((l0 / 2)) "$l0"; do
	"$BUILD/paxos-monitor" -c "$CONF" --fetch "$iid" >"$WORK/fetched" 2>"$WORK/fetch.log" ||
		fail "fetching instance $iid failed: $(cat "$WORK/fetch.log")"
	grep "^$iid " "$WORK/learner0.out" | cmp -s - "$WORK/fetched" ||
		fail "instance $iid fetched differs from what learner 0 delivered"
done
if "$BUILD/paxos-monitor" -c "$CONF" --fetch $((l0 + 1000000)) >"$WORK/fetched" \
	2>"$WORK/fetch.log"; then
	fail "fetching an instance nobody decided succeeded"
fi
grep -q "timed out" "$WORK/fetch.log" || fail "fetching an undecided instance: $(cat "$WORK/fetch.log")"
stop_all

cmp -s "$WORK/learner0.out" "$WORK/learner1b.out" ||
	fail "the restarted learner's output differs from learner 0's"
[ "$(head -n 1 "$WORK/learner1b.out" | cut -d' ' -f1)" = 1 ] ||
	fail "the restarted learner did not start at instance 1"
total=$(lines "$WORK/learner0.out")
# What the killed learner wrote (whole lines: a torn last one is not counted) is a prefix.
old=$(lines "$WORK/learner1.out")
[ "$old" -gt 0 ] || fail "learner 1 wrote nothing before the crash"
head -n "$old" "$WORK/learner1.out" >"$WORK/killed.prefix"
head -n "$old" "$WORK/learner0.out" | cmp -s - "$WORK/killed.prefix" ||
	fail "the killed learner's output is not a prefix of learner 0's"

n=$(lines "$WORK/current.out")
first=$(head -n 1 "$WORK/current.out" | cut -d' ' -f1)
[ "$n" -gt 0 ] && [ "$first" -gt 1 ] ||
	fail "the learner started at the current instance delivered from '$first' ($n lines)"
tail -n "$n" "$WORK/learner0.out" | cmp -s - "$WORK/current.out" ||
	fail "the current learner's output is not a suffix of learner 0's"
# A suffix that starts with a whole instance: the line before it is an earlier instance.
before=$(tail -n $((n + 1)) "$WORK/learner0.out" | head -n 1 | cut -d' ' -f1)
[ "$n" -eq "$total" ] || [ "$before" -lt "$first" ] ||
	fail "the current learner started in the middle of instance $first"
grep -h "counters learner" "$WORK/learner1b.log" | tail -n 1 | sed 's/^paxos: /# restarted: /'
echo "e2e_catchup: $total lines identical after a restart; the late learner delivered" \
	"the last $n from instance $first"
