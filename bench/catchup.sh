#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A learner that starts late, under load, inside a private network namespace: 3 acceptors
# (memory storage), 1 proposer and a closed-loop client (64 values of 64 B outstanding) run
# for LOAD seconds; then paxos-monitor starts at instance 1 while the load goes on, and the
# time it takes to reach the head is measured: catching up, it delivers more than 2.5x the
# live rate (its last second's); it has reached the head at the first of five 100 ms
# intervals in a row that deliver less. Also how many values it had to deliver to get there.
# A learner that cannot catch up faster than the cluster moves on never gets there ("never"
# within CATCH_LIMIT seconds, default 10). BASE_BUILD=DIR runs that build
# too, in the same rounds. Writes BUILD_DIR/bench-results/<date>/catchup.md (OUT_DIR to change
# it).
# Usage: bench/catchup.sh BUILD_DIR [ROUNDS] [LOAD] [OUT_DIR]
set -eu
BUILD=$(cd "$1" && pwd)
ROUNDS=${2:-3}
LOAD=${3:-6}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${4:-$BUILD/bench-results/$(date +%Y-%m-%d)}
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	mkdir -p "$OUT"
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD" "$ROUNDS" "$LOAD" "$(cd "$OUT" && pwd)"
fi
LIMIT=${CATCH_LIMIT:-10}
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=$WORK/catchup.conf
sed -e "s|^storage-path .*|storage-path $WORK/store|" \
	-e 's/^counters-interval-ms .*/counters-interval-ms 0/' "$SRC/paxos.conf" >"$CONF"

# round BUILD: prints "seconds values" (seconds "never" if the monitor did not catch up)
round() {
	BUILD=$1 # this subshell's (round runs in $(...))
	rm -rf "$WORK/store"
	PIDS=""
	for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
	start proposer0 paxos-proposer -c "$CONF" -i 0
	sleep 0.5
	start client paxos-client -c "$CONF" --count 100000000 --outstanding 64 --size 64 \
		--time-limit $((LOAD + LIMIT + 1))
	sleep "$LOAD"
	start monitor paxos-monitor -c "$CONF" --interval-ms 100 --csv "$WORK/m.csv"
	sleep "$LIMIT"
	stop_all
	# The live rate: the median values per interval of the last second. Catching up, the
	# monitor delivers more than 2.5x that; caught up at the first of 5 intervals in a row
	# (0.5 s) that deliver no more than that, once it had been catching up.
	live=$(tail -n 10 "$WORK/m.csv" | cut -d, -f5 | sort -n | sed -n 5p)
	awk -F, -v live="$live" 'NR > 1 { t[NR] = $1; v[NR] = $5; total[NR] = $4; n = NR }
		END {
			for (i = 2; i <= n - 4; i++) {
				if (v[i] > 2.5 * live) { busy = 1; continue }
				if (!busy || v[i] == 0) continue
				calm = 1
				for (j = i + 1; j < i + 5; j++) if (v[j] > 2.5 * live) calm = 0
				if (calm) { print t[i], total[i]; exit }
			}
			print "never", total[n]
		}' "$WORK/m.csv"
}

{
	echo "Learner started after $LOAD s of closed-loop load (64 values of 64 B outstanding, 3"
	echo "acceptors, 1 proposer, memory storage), from instance 1, the load going on."
	echo
	echo "| round | build | seconds to reach the head | values delivered by then |"
	echo "| --- | --- | --- | --- |"
} >"$WORK/table"
for r in $(seq 1 "$ROUNDS"); do
	for b in ${BASE_BUILD:+base} this; do
		if [ "$b" = base ]; then dir=$(cd "$BASE_BUILD" && pwd); else dir=$BUILD; fi
		set -- $(round "$dir")
		echo "| $r | $b | $1 | $2 |" >>"$WORK/table"
		echo "catchup: round $r, $b: $1 s, $2 values"
	done
done
cp "$WORK/table" "$OUT/catchup.md"
cat "$OUT/catchup.md"
