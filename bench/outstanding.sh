#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The Kernel Paxos sweep (reference 000_216408e29dd3c831.txt, sec. VI, Fig. 5): Paxos (3
# acceptors, one proposer) with one client keeping 1, 2, 4, ... 128 values of 64 and of 1000
# bytes outstanding, non-durable storage, SECONDS per run (default 2; each point the median
# run of $BENCH_REPEAT, default 1): values/s, median,
# 95th and 99th percentile latency. The paper grows the number of clients, each with one
# value outstanding; one client with K outstanding values offers the same load.
# Writes outstanding.{csv,md,png} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/outstanding.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-2}

conf=$(bench_conf outstanding)
CSV=$OUT/outstanding.csv
echo "size_b,outstanding,values,values_per_s,kb_per_s,min_ms,p5_ms,p50_ms,p95_ms,p99_ms,max_ms" >"$CSV"
for size in 64 1000; do
	for k in 1 2 4 8 16 32 64 128; do
		json=$(bench_run "$conf" "$SECONDS_PER_RUN" --size $size --outstanding $k) || exit 1
		rate=$(jfield "$json" values_per_s)
		echo "$size,$k,$(jfield "$json" delivered),$rate,$(awk -v r="$rate" -v s=$size \
			'BEGIN { printf "%.1f", r * s / 1000 }'),$(jfield "$json" min),$(jfield "$json" p5),$(jfield \
				"$json" p50),$(jfield "$json" p95),$(jfield "$json" p99),$(jfield "$json" max)" >>"$CSV"
		tail -n 1 "$CSV"
	done
done

{
	bench_md "$CSV"
	echo
	awk -F, 'NR > 1 && $4 + 0 > best[$1] + 0 { best[$1] = $4; at[$1] = $2; p50[$1] = $8; p99[$1] = $10 }
		END { for (s in best) printf "Peak at %s bytes: %s values/s with %s outstanding (p50 %s ms, p99 %s ms).\n", s, best[s], at[s], p50[s], p99[s] }' "$CSV" | sort -n -k3
	echo
	echo "3 acceptors, one proposer, one client, non-durable storage, $SECONDS_PER_RUN s per run; each"
	echo "point is the run with the median values/s of ${BENCH_REPEAT:-1}."
	echo "Configuration: configs/outstanding.conf."
} >"$OUT/outstanding.md"

cat >"$TMP/plot.gp" <<EOF
set multiplot layout 1,2 title 'Paxos by values outstanding (3 acceptors, one proposer, one client)'
set logscale x 2
set xlabel 'values outstanding (log scale)'
set xrange [0.8:160]
set xtics (1, 2, 4, 8, 16, 32, 64, 128)
set ylabel 'delivered values/s'
set yrange [0:*]
set format y '%.1s%c'
plot '$CSV' using (\$1 == 64 ? \$2 : 1/0):4 with linespoints lw 2 pt 7 title '64 B', \
     '' using (\$1 == 1000 ? \$2 : 1/0):4 with linespoints lw 2 pt 5 title '1000 B'
set ylabel 'latency (ms, log scale): median, bars to p95; p99 marks'
set logscale y
set autoscale y
set format y '%g'
plot '$CSV' using (\$1 == 64 ? \$2 : 1/0):8:8:9 with yerrorlines lw 2 pt 7 title '64 B', \
     '' using (\$1 == 1000 ? \$2 * 1.08 : 1/0):8:8:9 with yerrorlines lw 2 pt 5 title '1000 B', \
     '' using (\$1 == 64 ? \$2 : 1/0):10 with points pt 2 lc rgb '#9400d3' title '64 B p99', \
     '' using (\$1 == 1000 ? \$2 * 1.08 : 1/0):10 with points pt 4 lc rgb '#009e73' title '1000 B p99'
unset multiplot
EOF
BENCH_PNG_SIZE=1100,500 bench_gnuplot "$OUT/outstanding.png" "$TMP/plot.gp"
echo
cat "$OUT/outstanding.md"
