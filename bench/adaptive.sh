#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Adaptive timeouts converging (beyond thesis 3.5.3; bench/calibrate.sh is the thesis' fixed
# procedure): the proposer starts with 1000 ms phase 1 and phase 2 timeouts and
# adaptive-timeouts yes, under the load of calibrate.sh (one client, 64 values of 20-2000
# bytes outstanding) for SECONDS (default 5), and prints its counters as JSON every 200 ms;
# phase1_timeout_us and phase2_timeout_us are its timeouts at that moment (smoothed round trip
# plus four deviations, within timeout-floor-ms and timeout-ceiling-ms). Two deployments:
# non-durable storage, and lmdb with sync (an fsync per commit: longer, more variable round
# trips).
# Writes adaptive.{csv,md,png} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/adaptive.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-5}
INTERVAL_MS=200

CSV=$OUT/adaptive.csv
echo "deployment,t_s,phase1_timeout_ms,phase2_timeout_ms,phase1_timeouts,phase2_timeouts,values_per_s" >"$CSV"
SUMMARY=$TMP/summary
# settled COLUMN CSV: the median of COLUMN over the second half of the lines
settled() {
	awk -F, -v c="$1" '{ v[NR] = $c } END { for (i = int(NR / 2) + 1; i <= NR; i++) print v[i] }' "$2" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
: >"$SUMMARY"
for deployment in memory:none lmdb:sync; do
	backend=${deployment%%:*}
	durability=${deployment#*:}
	name=adaptive-$backend-$durability
	conf=$(bench_conf "$name" storage "$backend" durability "$durability" storage-fresh yes \
		adaptive-timeouts yes phase1-timeout-ms 1000 phase2-timeout-ms 1000 \
		counters-interval-ms $INTERVAL_MS counters-json yes)
	logs=$TMP/logs-$name
	mkdir -p "$logs"
	json=$(PAXOS_LOG_DIR=$logs BENCH_REPEAT=1 bench_run "$conf" "$SECONDS_PER_RUN" \
		--size 20-2000 --outstanding 64) || exit 1
	# One JSON line per interval; the timeouts are levels, the rest counts since the start.
	grep '^{"role":"proposer"' "$logs/proposer0.log" | awk -v d="$backend $durability" \
		-v ms=$INTERVAL_MS '
		function f(name,   v) { if (!match($0, "\"" name "\":[0-9]+")) return 0
			return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) + 0 }
		{ n++; v = f("values_proposed")
		  printf "%s,%.1f,%.3f,%.3f,%d,%d,%.0f\n", d, n * ms / 1000, f("phase1_timeout_us") / 1000,
			f("phase2_timeout_us") / 1000, f("phase1_timeouts") - t1, f("phase2_timeouts") - t2,
			(v - last) * 1000 / ms
		  t1 = f("phase1_timeouts"); t2 = f("phase2_timeouts"); last = v }' >"$TMP/$name.csv"
	[ -s "$TMP/$name.csv" ] || {
		echo "adaptive.sh: no proposer counters in $name's log" >&2
		exit 1
	}
	cat "$TMP/$name.csv" >>"$CSV"
	# Settled: the median timeouts of the second half of the run.
	settled1=$(settled 3 "$TMP/$name.csv")
	settled2=$(settled 4 "$TMP/$name.csv")
	awk -F, -v d="$backend $durability" -v delivered="$(jfield "$json" delivered)" \
		-v p50="$(jfield "$json" p50)" -v p99="$(jfield "$json" p99)" -v s1="$settled1" -v s2="$settled2" '
		{ to += $5 + $6 }
		END { printf "| %s | %s | %s | %s | %s | %d | %.2f |\n", d, s1, s2, p50, p99, to,
			delivered ? to * 10000 / delivered : 0 }' "$TMP/$name.csv" >>"$SUMMARY"
	tail -n 1 "$SUMMARY"
done

floor=$(awk '$1 == "timeout-floor-ms" { print $2 }' "$conf")
ceiling=$(awk '$1 == "timeout-ceiling-ms" { print $2 }' "$conf")
{
	echo "| deployment | settled phase 1 timeout ms | settled phase 2 timeout ms | client p50 ms | client p99 ms | timeouts | timeouts per 10k values |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	cat "$SUMMARY"
	echo
	echo "Start 1000 ms, adaptive-timeouts yes, floor $floor ms, ceiling $ceiling ms, counters every"
	echo "$INTERVAL_MS ms; settled = median over the second half of the $SECONDS_PER_RUN s run. One client, 64"
	echo "values of 20-2000 bytes outstanding, 3 acceptors. Configurations: configs/adaptive-*.conf."
	echo "The per-interval series is adaptive.csv."
} >"$OUT/adaptive.md"

cat >"$TMP/plot.gp" <<EOF
set multiplot layout 2,1 title 'Adaptive timeouts from 1000 ms (floor $floor ms; counters every $INTERVAL_MS ms; 64 x 20-2000 B outstanding)'
set xlabel 'seconds since the proposer started'
set xrange [0:$SECONDS_PER_RUN + 0.5]
set ylabel 'timeout now (ms, log scale)'
set logscale y
set yrange [0.5:2000]
set key top right
plot '$CSV' using (strcol(1) eq 'memory none' ? \$2 : 1/0):3 with steps lw 2 title 'phase 1, memory', \
     '' using (strcol(1) eq 'memory none' ? \$2 : 1/0):4 with steps lw 2 dt 2 title 'phase 2, memory', \
     '' using (strcol(1) eq 'lmdb sync' ? \$2 : 1/0):3 with steps lw 2 title 'phase 1, lmdb sync', \
     '' using (strcol(1) eq 'lmdb sync' ? \$2 : 1/0):4 with steps lw 2 dt 2 title 'phase 2, lmdb sync'
unset logscale y
set yrange [0:*]
set ylabel 'timeouts in the interval'
plot '$CSV' using (strcol(1) eq 'memory none' ? \$2 - 0.03 : 1/0):(\$5 + \$6) with impulses lw 4 title 'memory (phase 1 + 2)', \
     '' using (strcol(1) eq 'lmdb sync' ? \$2 + 0.03 : 1/0):(\$5 + \$6) with impulses lw 4 title 'lmdb sync (phase 1 + 2)'
unset multiplot
EOF
BENCH_PNG_SIZE=900,700 bench_gnuplot "$OUT/adaptive.png" "$TMP/plot.gp"
echo
cat "$OUT/adaptive.md"
