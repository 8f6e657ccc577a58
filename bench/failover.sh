#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Thesis 4.7 / Fig. 4.5: delivered values per 100 ms while the leader changes, inside a
# private network namespace. 3 acceptors, proposers 0 and 1 (automatic election, proposer 0
# leads), a client keeping 10 values of 500 bytes outstanding (resubmitting after 3 s, as in
# the thesis), and paxos-monitor timestamping deliveries per 100 ms. Events, from the start
# of the load:
#   3 s  paxos-oracle --leader 1   forced change to proposer 1
#   6 s  paxos-oracle --auto       back to election: proposer 0 leads again
#   9 s  kill -9 proposer 0        the leader crashes: proposer 1 takes over
# Writes BUILD_DIR/bench-results/<date>/failover.{csv,png,md} (OUT_DIR to change it) and prints
# the gaps: the longest pause between two deliveries from each event until the next one.
# Usage: bench/failover.sh BUILD_DIR [OUT_DIR]
set -eu
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${2:-$BUILD/bench-results/$(date +%Y-%m-%d)}
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	mkdir -p "$OUT"
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD" "$(cd "$OUT" && pwd)"
fi
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=$WORK/paxos.conf
STORE=$WORK/store
sed -e "s|^storage-path .*|storage-path $STORE|" -e "s|^election .*|election auto|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$SRC/paxos.conf" >"$CONF"
timeout_ms=$(awk '$1 == "heartbeat-timeout-ms" { print $2 }' "$CONF")
CSV=$OUT/failover.csv
EVENTS=$WORK/events

now() { date +%s.%N; }
# sleep_until T0 SECONDS: until SECONDS after T0
sleep_until() {
	d=$(awk -v t0="$1" -v s="$2" -v now="$(now)" 'BEGIN { d = t0 + s - now; print (d > 0 ? d : 0) }')
	sleep "$d"
}
# event T0 NAME: logs the event's time since T0
event() { awk -v t0="$1" -v now="$(now)" -v name="$2" 'BEGIN { printf "%.3f %s\n", now - t0, name }' >>"$EVENTS"; }

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
sleep 0.5
grep -q "proposer 0: leader is 0 at start" "$WORK/proposer0.log" || fail "proposer 0 does not lead"

T0=$(now)
start monitor paxos-monitor -c "$CONF" --interval-ms 100 --csv "$WORK/monitor.csv"
start client paxos-client -c "$CONF" --count 100000000 --outstanding 10 --size 500 \
	--resubmit-ms 3000 --time-limit 13
: >"$EVENTS"

sleep_until "$T0" 3
"$BUILD/paxos-oracle" -c "$CONF" --leader 1 >/dev/null || fail "paxos-oracle --leader 1 failed"
event "$T0" "forced change to proposer 1 (paxos-oracle --leader 1)"
sleep_until "$T0" 6
"$BUILD/paxos-oracle" -c "$CONF" --auto >/dev/null || fail "paxos-oracle --auto failed"
event "$T0" "back to election: proposer 0 (paxos-oracle --auto)"
sleep_until "$T0" 9
kill -9 "$PID_proposer0"
event "$T0" "crash of the leader, proposer 0 (kill -9)"
wait "$PID_proposer0" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_proposer0" | tr '\n' ' ')
sleep_until "$T0" 12
stop_all

grep -q "proposer 1: leader is now 1 (was 0)" "$WORK/proposer1.log" ||
	fail "proposer 1 never led"
[ "$(grep -c "proposer 1: leader is now 1 (was 0)" "$WORK/proposer1.log")" -ge 2 ] ||
	fail "proposer 1 did not take over after the crash"
grep -q "proposer 0: leader is now 0 (was 1)" "$WORK/proposer0.log" ||
	fail "proposer 0 did not get the leadership back"
cp "$WORK/monitor.csv" "$CSV"
grep -h "^delivered\|^latency\|^resubmits" "$WORK/client.log" || true

# Per event: the longest pause that ended within 1 s of the event (from one interval before
# it: a pause may start a little before its event is logged), and the 100 ms intervals
# without a delivery in that second; the same from 0.6 s (the load runs) to the first event
# as a baseline of what the machine does without any event.
MD=$OUT/failover.md
awk -v events="$EVENTS" -v timeout="$timeout_ms" -F, '
	BEGIN {
		n = 1; at[1] = 0.7; name[1] = "baseline: no event (0.6 s to the first event)"
		while ((getline line < events) > 0) {
			n++; at[n] = substr(line, 1, index(line, " ") - 1) + 0
			name[n] = substr(line, index(line, " ") + 1)
		}
		at[n + 1] = 1e9
		for (e = 1; e <= n; e++) {
			from[e] = at[e] - 0.1
			to[e] = e == 1 ? at[2] - 0.1 : at[e] + 1.0
			if (to[e] > at[e + 1] - 0.1) to[e] = at[e + 1] - 0.1
		}
	}
	NR > 1 {
		t = $1 + 0
		for (e = 1; e <= n; e++) {
			if (t > from[e] && t <= to[e]) {
				if ($6 + 0 > pause[e]) pause[e] = $6 + 0
				if ($5 + 0 == 0) zero[e]++
			}
		}
	}
	END {
		printf "| event | at s | longest pause ms | 100 ms intervals with no delivery |\n"
		printf "| --- | --- | --- | --- |\n"
		for (e = 1; e <= n; e++)
			printf "| %s | %.2f | %.1f | %d |\n", name[e], at[e], pause[e] + 0, zero[e] + 0
		printf "\nheartbeat-timeout-ms %d: crash target < %d ms; forced change target < 100 ms\n",
			timeout, 2 * timeout
	}' "$CSV" >"$MD"
cat "$MD"

if command -v gnuplot >/dev/null 2>&1; then
	{
		if gnuplot -e "set terminal" 2>&1 | grep -q pngcairo; then
			echo "set terminal pngcairo size 1000,500 font ',10'"
		else
			echo "set terminal png size 1000,500"
		fi
		echo "set output '$OUT/failover.png'"
		echo "set datafile separator ','"
		echo "set title 'Delivered values per 100 ms while the leader changes (3 acceptors, 2 proposers, 10 x 500 B outstanding)'"
		echo "set xlabel 'seconds since the load started'"
		echo "set ylabel 'values delivered per 100 ms'"
		echo "set grid"
		echo "set key below"
		echo "set bmargin 6"
		echo "set yrange [0:*]"
		echo "set xrange [0:12]"
		i=0
		while read -r at what; do
			i=$((i + 1))
			echo "set arrow $i from $at, graph 0 to $at, graph 1 nohead dt 2 lc rgb 'red'"
			echo "set label $i '$(echo "$what" | sed "s/ (.*//; s/'//g")' at $at, graph 0.97 offset 0.5,0 font ',9' tc rgb 'red'"
		done <"$EVENTS"
		echo "set y2label 'longest pause between deliveries (ms)'"
		echo "set y2tics"
		echo "set y2range [0:*]"
		echo "set ytics nomirror"
		echo "plot '$CSV' every ::1 using 1:5 with steps lw 1.5 lc rgb '#1f5fa8' title 'values per 100 ms'," \
			"'' every ::1 using 1:6 axes x1y2 with impulses lw 2 lc rgb '#e08000' title 'longest pause in the 100 ms (ms, right axis)'"
	} >"$WORK/plot.gp"
	gnuplot "$WORK/plot.gp" || fail "gnuplot failed"
	echo "wrote $CSV, $MD and $OUT/failover.png"
else
	echo "gnuplot is not installed: no plot (apt-get install gnuplot-nox); wrote $CSV and $MD"
fi
