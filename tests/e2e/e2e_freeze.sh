#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A late heartbeat is not a disaster: the leader, proposer 0, is frozen with SIGSTOP under
# load for 3x heartbeat-timeout-ms, as a busy host can do to a process, then let go with
# SIGCONT. Meanwhile proposer 1 takes over; afterwards both believe for a moment that they
# lead, and they must converge on one leader (the lowest id, proposer 0, as the election
# says), lose no value, and go on delivering. Inside a private network namespace: 3
# acceptors, 2 proposers, 2 learners, paxos-monitor timing deliveries per 100 ms, and a client
# that keeps 8 values outstanding and resubmits values not delivered within 200 ms.
# Prints the longest delivery pause around the freeze and how long convergence took.
# Usage: e2e_freeze.sh BUILD_DIR SOURCE_DIR
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
timeout_ms=$(awk '$1 == "heartbeat-timeout-ms" { print $2 }' "$CONF")
freeze_ms=$((3 * timeout_ms))

now() { date +%s.%N; }

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5
eventually 30 grep -q "proposer 0: leader is 0 at start" "$WORK/proposer0.log" ||
	fail "proposer 0 does not lead"
T0=$(now)
start monitor paxos-monitor -c "$CONF" --interval-ms 100 --csv "$WORK/monitor.csv"
: >"$WORK/submitted"
# The load lasts until drained once deliveries went on after the freeze (COUNT is the scale).
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --outstanding 8 --size 16 \
	--resubmit-ms 200 --time-limit 200 --log "$WORK/submitted"

wait_lines "$WORK/submitted" $((COUNT / 4)) 60 || fail "no progress before the freeze"
# Leader changes counted from here: a heartbeat late on a busy machine may already have moved
# the leadership for a moment before.
changes() { grep -c "proposer 1: leader is now $1 " "$WORK/proposer1.log" || true; }
took_before=$(changes 1)
back_before=$(changes 0)
stopped=$(now)
kill -STOP "$PID_proposer0"
sleep "$(awk -v ms=$freeze_ms 'BEGIN { print ms / 1000 }')"
kill -CONT "$PID_proposer0"
resumed=$(now)
at=$(wc -l <"$WORK/submitted")

# Convergence: proposer 1 took over during the freeze and hands the leadership back once it
# hears proposer 0 again; proposer 0 never gives it up for good.
i=0
until [ "$(changes 0)" -gt "$back_before" ]; do
	i=$((i + 1))
	[ "$i" -le 600 ] || fail "proposer 1 still leads 30 s after proposer 0 came back"
	sleep 0.05
done
one_leader_at=$(now)
[ "$(changes 1)" -gt "$took_before" ] ||
	fail "proposer 1 did not take over while proposer 0 was frozen"
leads0() {
	last0=$(grep "leader is now" "$WORK/proposer0.log" | tail -1)
	case $last0 in "" | *"leader is now 0"*) return 0 ;; esac
	return 1
}
eventually 30 leads0 || fail "proposer 0 ended with: $last0"

# Throughput back: the client goes on, resubmitting whatever the freeze cost.
after=$(wc -l <"$WORK/submitted")
wait_lines "$WORK/submitted" $((after + COUNT / 2)) 60 || fail "no progress after the freeze"
client_drain || fail "paxos-client did not get all its values delivered: $(tail -n 3 "$WORK/client.log")"
COUNT=$(wc -l <"$WORK/submitted")
converged $COUNT "$WORK/submitted" "$WORK/learner0.out" "$WORK/learner1.out"

# The longest pause between deliveries that ended within 2 s after the freeze began, the
# longest one before it, and values/s in the second before the freeze and the second after
# convergence (from the monitor's 100 ms rows: time, values/s, kB/s, total, in interval, pause).
awk -F, -v t0="$T0" -v s="$stopped" -v c="$one_leader_at" '
	NR > 1 {
		t = $1 + t0
		if (t <= s && $6 + 0 > before) before = $6 + 0
		if (t > s && t <= s + 2 && $6 + 0 > gap) gap = $6 + 0
		if (t > s - 1 && t <= s) vb += $5
		if (t > c && t <= c + 1) va += $5
	}
	END {
		printf "e2e_freeze: longest delivery pause %.1f ms around the freeze (%.1f ms before it);", gap, before
		printf " values/s %d in the second before, %d in the second after convergence\n", vb, va
	}' "$WORK/monitor.csv"
awk -v s="$stopped" -v r="$resumed" -v c="$one_leader_at" -v f="$freeze_ms" -v at="$at" 'BEGIN {
	printf "e2e_freeze: proposer 0 frozen %.0f ms (target %d), at value %d; one leader again %.0f ms after SIGCONT\n",
		(r - s) * 1000, f, at, (c - r) * 1000 }'
grep -E "latency|resubmits" "$WORK/client.log"
echo "e2e_freeze: $COUNT values delivered identically by 2 learners, none lost"
