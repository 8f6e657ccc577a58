#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Timeout calibration, thesis 3.5.3: put the cluster under load, lower the phase 1 and
# phase 2 timeouts step by step, watch the proposer's timeout counters, and recommend the
# smallest timeout that stays quiet (at most one timeout per 10,000 values) with a margin.
# Usage: bench/calibrate.sh BUILD_DIR [SECONDS_PER_STEP] [OUT_DIR]   (PAXOS_CONF picks the
# deployment, e.g. a copy of paxos.conf with storage lmdb; default paxos.conf). With OUT_DIR
# it also writes calibrate.{csv,md,png} there. bench/adaptive.sh shows the adaptive timeouts.
set -eu
BUILD=$(cd "$1" && pwd)
SECONDS_PER_STEP=${2:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BASE=${PAXOS_CONF:-$SRC/paxos.conf}
OUT_DIR=${3:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo "timeout_ms,values_per_s,phase1_timeouts,phase2_timeouts,timeouts_per_10k_values" >"$WORK/steps.csv"

counter() { # counter NAME LINE
	echo "$2" | sed -n "s/.* $1=\([0-9]*\).*/\1/p" | grep . || echo 0
}

printf "%-10s %10s %8s %8s %s\n" "timeout" "values/s" "TO1" "TO2" "timeouts per 10k values"
best=""
for ms in 1000 500 200 100 50 20 10 5 2 1; do
	conf=$WORK/paxos-$ms.conf
	sed -e "s|^phase1-timeout-ms .*|phase1-timeout-ms $ms|" \
		-e "s|^phase2-timeout-ms .*|phase2-timeout-ms $ms|" \
		-e "s|^storage-path .*|storage-path $WORK/store-$ms|" \
		-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$BASE" >"$conf"
	out=$(PAXOS_CONF=$conf "$SRC/bench/cluster-client.sh" "$BUILD" --count 100000000 \
		--time-limit "$SECONDS_PER_STEP" --size 20-2000 --outstanding 64 --json \
		2>/dev/null || true)
	json=$(echo "$out" | grep '^{' || echo '{}')
	line=$(echo "$out" | grep 'counters proposer' || echo '')
	delivered=$(echo "$json" | sed -n 's/.*"delivered":\([0-9]*\).*/\1/p' | grep . || echo 0)
	rate=$(echo "$json" | sed -n 's/.*"values_per_s":\([0-9.]*\).*/\1/p' | grep . || echo 0)
	to1=$(counter phase1_timeouts "$line")
	to2=$(counter phase2_timeouts "$line")
	per10k=$(awk -v t=$((to1 + to2)) -v d="$delivered" 'BEGIN { printf "%.2f", d ? t * 10000 / d : 99999 }')
	printf "%-10s %10.0f %8s %8s %s\n" "${ms} ms" "$rate" "$to1" "$to2" "$per10k"
	echo "$ms,$rate,$to1,$to2,$per10k" >>"$WORK/steps.csv"
	if awk -v p="$per10k" 'BEGIN { exit !(p <= 1) }'; then
		best=$ms
	else
		break
	fi
done
if [ -z "$best" ]; then
	recommendation="even 1000 ms times out under this load: check the deployment (disks, network)"
else
	# Twice the smallest quiet value leaves room for bursts (thesis: a few timeouts at most).
	recommendation="recommended: phase1-timeout-ms $((best * 2)) and phase2-timeout-ms $((best * 2)) (smallest quiet step: $best ms)"
fi
echo "$recommendation"
if [ -n "$OUT_DIR" ]; then
	mkdir -p "$OUT_DIR"
	cp "$WORK/steps.csv" "$OUT_DIR/calibrate.csv"
	{
		echo "| timeout ms | values/s | phase 1 timeouts | phase 2 timeouts | timeouts per 10k values |"
		echo "| --- | --- | --- | --- | --- |"
		tail -n +2 "$WORK/steps.csv" | awk -F, '{ printf "| %s | %.0f | %s | %s | %s |\n", $1, $2, $3, $4, $5 }'
		echo
		echo "$recommendation. Load: one client, 64 values of 20-2000 bytes outstanding,"
		echo "$SECONDS_PER_STEP s per step; a step is quiet with at most 1 timeout per 10k values."
	} >"$OUT_DIR/calibrate.md"
	. "$SRC/bench/lib.sh"
	TMP=$WORK
	cat >"$WORK/plot.gp" <<EOF
set title 'Timeout calibration: fixed phase 1 and 2 timeouts stepped down under load'
set logscale x
set xrange [1500:0.7]
set xlabel 'phase 1 and phase 2 timeout (ms, log scale)'
set ylabel 'delivered values/s'
set format y '%.1s%c'
set yrange [0:*]
set y2label 'timeouts per 10k values'
set y2range [0:*]
set y2tics
set ytics nomirror
set key bottom left
plot '$OUT_DIR/calibrate.csv' using 1:2 with linespoints lw 2 pt 7 title 'values/s (left)', \\
     '' using 1:5 axes x1y2 with linespoints lw 2 pt 5 dt 2 title 'timeouts per 10k values (right)'
EOF
	bench_gnuplot "$OUT_DIR/calibrate.png" "$WORK/plot.gp"
fi
[ -n "$best" ]
