#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Latency distribution at 50% of peak load (reference 004_e1d735eb42a680c6.txt, sec. 5: "since
# applications typically do not run at maximum throughput, we report the results for when
# the application is sending traffic at a rate of 50% of the maximum"). The peak is the best
# values/s of bench/outstanding.sh at 64 and at 1000 bytes (run first if its CSV is missing);
# then paxos-client runs open-loop (--rate: values submitted on a timer, latency counted from
# when each was due) at half of it for 1 + SECONDS (default 4), writing every latency but
# those of the first second (warm-up: the cluster has just started); RUNS runs
# (default 3) per size, as the tail differs much from run to run on a small machine.
# Writes latency-cdf.{csv,md,png} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/latency-cdf.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-4}
RUNS=${RUNS:-3}

[ -f "$OUT/outstanding.csv" ] || "$SRC/bench/outstanding.sh" "$BUILD" 2 "$OUT" >/dev/null
conf=$(bench_conf latency-cdf)
CSV=$OUT/latency-cdf.csv
SUMMARY=$TMP/summary.csv
echo "size_b,run,latency_us,fraction" >"$CSV"
echo "size_b,run,peak_values_per_s,offered_values_per_s,delivered_values_per_s,values,min_ms,p50_ms,p90_ms,p95_ms,p99_ms,p99.9_ms,max_ms" >"$SUMMARY"
for size in 64 1000; do
	peak=$(awk -F, -v s=$size 'NR > 1 && $1 == s && $4 + 0 > best { best = $4 + 0 } END { printf "%d", best }' \
		"$OUT/outstanding.csv")
	[ "$peak" -gt 0 ] || {
		echo "latency-cdf.sh: no peak for $size bytes in $OUT/outstanding.csv" >&2
		exit 1
	}
	rate=$((peak / 2))
	run=1
	while [ $run -le "$RUNS" ]; do
		lat=$TMP/latencies-$size-$run
		json=$(BENCH_REPEAT=1 bench_run "$conf" $((SECONDS_PER_RUN + 10)) --size $size \
			--rate $rate --count $((rate * (SECONDS_PER_RUN + 1))) --warmup-ms 1000 \
			--latencies "$lat") || exit 1
		sort -n "$lat" >"$lat.sorted"
		# About 2000 points of the CDF: every latency at which the fraction passes a 1/2000
		# step, and the last one.
		awk -v s=$size -v r=$run -v n="$(wc -l <"$lat.sorted")" '
			{ step = int(NR * 2000 / n) }
			step != last || NR == n { printf "%s,%s,%s,%.6f\n", s, r, $1, NR / n; last = step }' \
			"$lat.sorted" >>"$CSV"
		awk -v s=$size -v r=$run -v peak="$peak" -v rate=$rate -v got="$(jfield "$json" values_per_s)" '
			{ v[NR] = $1 }
			END { n = NR
				printf "%s,%s,%s,%s,%s,%d", s, r, peak, rate, got, n
				split("0 50 90 95 99 99.9 100", q, " ")
				for (i = 1; i <= 7; i++) { k = int(q[i] / 100 * (n - 1) + 0.5) + 1; printf ",%.3f", v[k] / 1000 }
				printf "\n" }' "$lat.sorted" >>"$SUMMARY"
		tail -n 1 "$SUMMARY"
		run=$((run + 1))
	done
done
cp "$SUMMARY" "$OUT/latency-cdf-summary.csv"

{
	bench_md "$SUMMARY"
	echo
	echo "Open loop at half the peak of bench/outstanding.sh (its best values/s at that size);"
	echo "latency from when a value was due to its delivery at the client, $RUNS runs of"
	echo "1 + $SECONDS_PER_RUN s per size (the first second not measured), 3 acceptors, one proposer, non-durable storage. The client keeps at"
	echo "most 1024 values in flight: a value due while all are taken waits, and its wait counts."
	echo "Configuration: configs/latency-cdf.conf."
} >"$OUT/latency-cdf.md"

cat >"$TMP/plot.gp" <<EOF
set title 'Latency CDF at 50% of peak load (open loop; 3 acceptors, one proposer)'
set logscale x
set xlabel 'latency (microseconds, log scale)'
set ylabel 'fraction of values delivered within'
set yrange [0:1.02]
set ytics 0.1
set key bottom right
plot for [r=1:$RUNS] '$CSV' using (\$1 == 64 && \$2 == r ? \$3 : 1/0):4 with lines lw 2 lc rgb '#9400d3' dt r \\
        title sprintf('64 B at %s values/s, run %d', '$(awk -F, '$1 == 64 { print $4; exit }' "$SUMMARY")', r), \\
     for [r=1:$RUNS] '' using (\$1 == 1000 && \$2 == r ? \$3 : 1/0):4 with lines lw 2 lc rgb '#009e73' dt r \\
        title sprintf('1000 B at %s values/s, run %d', '$(awk -F, '$1 == 1000 { print $4; exit }' "$SUMMARY")', r)
EOF
bench_gnuplot "$OUT/latency-cdf.png" "$TMP/plot.gp"
echo
cat "$OUT/latency-cdf.md"
