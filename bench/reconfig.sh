#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Changing the acceptor set under load (docs/operating.md, "Changing the cluster"), inside a private
# network namespace: acceptor ids 0..4, 0..2 the members at the start (initial-members 3,
# membership-alpha 256), proposers 0 and 1, a closed-loop client keeping 64 values of 64
# bytes outstanding, and paxos-monitor timestamping deliveries. Per round:
#   before   4 s of load with acceptors 0,1,2 running (after 2 s of warm-up): values/s, p50, p99
#   changes  one load, while paxos-admin says the status (no change), replaces 2 by 3, grows to 5 (adds 2, then 4) and
#            shrinks to 3 (removes 4, then 2), 1 s apart: the longest pause between two
#            deliveries from each change's start until 0.5 s after it is in force, and in the
#            second before the first change (no change). The monitor runs from the cluster's
#            start to the round's end, through both loads.
#   after    4 s of load with acceptors 0,1,3 running: values/s. Acceptors 3 and 4 start just
#            before the changes and 2 and 4 stop after them, as an operator would: both loads
#            run three acceptor processes, which share this machine's cores with the rest.
# Rounds run one after the other on fresh clusters; the table gives each figure's median. The
# target for a pause: at most 2 x p99 + one round trip, with the before p50 (a value's
# whole way: client, leader, acceptors, learner) as the round trip. The monitor runs at
# real-time priority (chrt -f 1) when allowed; MONITOR_RT=0 runs it as any process.
# Writes BUILD_DIR/bench-results/<date>/reconfig.{csv,md} (OUT_DIR to change it).
# Usage: bench/reconfig.sh BUILD_DIR [ROUNDS] [OUT_DIR]
set -eu
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${3:-$BUILD/bench-results/$(date +%Y-%m-%d)}
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	mkdir -p "$OUT"
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD" "$ROUNDS" "$(cd "$OUT" && pwd)"
fi
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=$WORK/reconfig.conf
# One leader throughout: a late heartbeat on a busy machine would move the leadership, whose
# pause is bench/failover.sh's, not a change's.
sed -e "s|^storage-path .*|storage-path $WORK/store|" -e 's/^acceptors .*/acceptors 5/' \
	-e 's/^membership-alpha .*/membership-alpha 256/' \
	-e 's/^initial-members .*/initial-members 3/' \
	-e 's/^heartbeat-timeout-ms .*/heartbeat-timeout-ms 3000/' \
	-e 's/^counters-interval-ms .*/counters-interval-ms 0/' \
	-e "s|^#admin-key-file .*|admin-key-file $WORK/admin.key|" "$SRC/paxos.conf" >"$CONF"
grep -q '^initial-members' "$CONF" || echo "initial-members 3" >>"$CONF"
"$BUILD/paxos-keygen" --force "$WORK/admin.key" >/dev/null
CSV=$OUT/reconfig.csv
echo "round,phase,values_per_s,p50_ms,p99_ms,longest_pause_ms" >"$CSV"

now() { date +%s.%N; }
since() { awk -v t0="$1" -v now="$(now)" 'BEGIN { printf "%.3f", now - t0 }'; }
# load SECONDS: a closed-loop client for SECONDS; prints "values/s p50 p99"
load() {
	"$BUILD/paxos-client" -c "$CONF" --count 100000000 --outstanding 64 --size 64 \
		--time-limit "$1" >"$WORK/client.out" 2>&1 || true
	rate=$(sed -n 's/.*s: \([0-9]*\) values\/s$/\1/p' "$WORK/client.out")
	lat=$(sed -n 's/^latency ms: min [0-9.]*  p50 \([0-9.]*\)  p90 [0-9.]*  p99 \([0-9.]*\) .*/\1 \2/p' \
		"$WORK/client.out")
	[ -n "$rate" ] && [ -n "$lat" ] || fail "no figures from paxos-client: $(cat "$WORK/client.out")"
	echo "$rate $lat"
}
# change T0 NAME ARGS...: paxos-admin ARGS; notes NAME's start and end since T0
change() {
	t0=$1
	name=$2
	shift 2
	from=$(since "$t0")
	"$BUILD/paxos-admin" -c "$CONF" "$@" >"$WORK/admin.out" 2>&1 ||
		fail "paxos-admin $*: $(cat "$WORK/admin.out")"
	echo "$name $from $(since "$t0")" >>"$WORK/events"
}
# pause NAME: the longest pause in monitor.csv from NAME's first start to its last end + 0.5 s
pause() {
	awk -v name="$1" '$1 == name { if (!f || $2 < f) f = $2; if ($3 > t) t = $3 }
		END { print f, t + 0.5 }' "$WORK/events" | {
		read -r from to
		awk -F, -v from="$from" -v to="$to" \
			'NR > 1 && $1 + 0 > from && $1 - 0.1 < to && $6 + 0 > p { p = $6 + 0 }
			END { printf "%.1f", p + 0 }' "$WORK/monitor.csv"
	}
}

for round in $(seq 1 "$ROUNDS"); do
	rm -rf "$WORK/store"
	for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
	for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
	sleep 0.5
	: >"$WORK/events"
	T0=$(now)
	# From the cluster's start, so that its learner follows the log as it grows: one started
	# later spends its first seconds catching up and records the repeat answers' rhythm, not
	# the cluster's deliveries.
	start monitor paxos-monitor -c "$CONF" --interval-ms 100 --csv "$WORK/monitor.csv"
	# Real-time priority where allowed (root): on a machine with fewer cores than busy
	# processes the monitor otherwise waits its turn for a CPU, and records that wait (tens
	# of ms, a scheduler period) as a pause of the cluster's deliveries.
	[ "${MONITOR_RT:-1}" = 0 ] || chrt -f -p 1 "$PID_monitor" 2>/dev/null || true
	load 2 >/dev/null # warm-up: a fresh cluster's first seconds are slower
	set -- $(load 4)
	echo "$round,before,$1,$2,$3," >>"$CSV"

	for i in 3 4; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
	sleep 0.5
	start client paxos-client -c "$CONF" --count 100000000 --outstanding 64 --size 64 \
		--time-limit 60
	sleep 1.5
	since "$T0" | awk '{ printf "none %.3f %.3f\n", $1 - 1, $1 - 0.5 }' >>"$WORK/events"
	change "$T0" status status
	sleep 1
	change "$T0" replace replace-acceptor 2 3
	sleep 1
	change "$T0" grow add-acceptor 2
	change "$T0" grow add-acceptor 4
	sleep 1
	change "$T0" shrink remove-acceptor 4
	change "$T0" shrink remove-acceptor 2
	sleep 1
	grep -q "acceptors 0,1,3$" "$WORK/admin.out" || fail "not back to 0,1,3: $(cat "$WORK/admin.out")"
	kill "$PID_client"
	wait "$PID_client" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_client" | tr '\n' ' ')
	for what in none status replace grow shrink; do
		echo "$round,$what,,,,$(pause $what)" >>"$CSV"
	done
	stop_one acceptor2
	stop_one acceptor4
	grep -h "learner starts at" "$WORK/acceptor3.log" || true

	set -- $(load 4)
	echo "$round,after,$1,$2,$3," >>"$CSV"
	stop_all
	echo "reconfig: round $round done"
done

# Medians per phase and column.
median() { # median PHASE COLUMN
	awk -F, -v p="$1" -v c="$2" 'NR > 1 && $2 == p { print $c }' "$CSV" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
MD=$OUT/reconfig.md
before=$(median before 3)
after=$(median after 3)
p50=$(median before 4)
p99=$(median before 5)
{
	echo "Closed loop, 64 values of 64 B outstanding; medians of $ROUNDS rounds, each on a fresh"
	echo "cluster (acceptors 0,1,2 running before, 0,1,3 after, membership-alpha 256, memory storage)."
	echo
	echo "| phase | longest pause ms | target: 2 x p99 + p50 ms | within |"
	echo "| --- | --- | --- | --- |"
	target=$(awk -v a="$p99" -v b="$p50" 'BEGIN { printf "%.1f", 2 * a + b }')
	for what in none status replace grow shrink; do
		p=$(median $what 6)
		ok=$(awk -v p="$p" -v t="$target" 'BEGIN { print (p <= t ? "yes" : "no") }')
		case $what in
		none) label="no change (1 s before the first)" ;;
		status) label="paxos-admin status, no change" ;;
		replace) label="replace acceptor 2 by 3" ;;
		grow) label="grow 3 -> 5 (add 2, add 4)" ;;
		shrink) label="shrink 5 -> 3 (remove 4, remove 2)" ;;
		esac
		echo "| $label | $p | $target | $ok |"
	done
	echo
	echo "| load | values/s | p50 ms | p99 ms |"
	echo "| --- | --- | --- | --- |"
	echo "| before, acceptors 0,1,2 | $before | $p50 | $p99 |"
	echo "| after, acceptors 0,1,3 | $after | $(median after 4) | $(median after 5) |"
	echo
	awk -v a="$after" -v b="$before" 'BEGIN { printf "values/s after / before: %.3f (target: within 5%%)\n", a / b }'
} >"$MD"
cat "$MD"
