#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The partitions benchmark for bench/run-all: bench/partitions.sh at 64 B and 1000 B with 1, 2
# and 4 partitions over 2 proposers, 3 acceptors per partition (partition-acceptors spread;
# SPREAD=no passes through to keep 3 acceptors for all) and 64 outstanding per partition, and
# once more with learner-merge on. Writes partitions.{csv,md,png} to
# BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT): measured and projected values/s
# (1 / the busiest process's CPU per value).
# Usage: bench/partitions-report.sh BUILD_DIR [SECONDS [ROUNDS [OUT_DIR]]]   (defaults 5 3)
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
SECS=${2:-5}
ROUNDS=${3:-3}
bench_setup "$1" "${4:-}"
CSV=$OUT/partitions.csv
first=yes
for merge in no yes; do
	for size in 64 1000; do
		MERGE=$merge PARTS="1 2 4" "$SRC/bench/partitions.sh" "$BUILD" "$size" "$SECS" "$ROUNDS" \
			>"$TMP/run.csv"
		if [ $first = yes ]; then
			head -n 1 "$TMP/run.csv" >"$CSV"
			first=no
		fi
		tail -n +2 "$TMP/run.csv" >>"$CSV"
	done
done
{
	echo "Partitions over 2 proposers, 3 acceptors of its own per partition (partition-acceptors"
	echo "spread; SPREAD=no: 3 serving all), memory storage, one client per partition"
	echo "with 64 values outstanding, $SECS s per run, medians of $ROUNDS interleaved rounds,"
	echo "$(nproc) cores. CPU per delivered value from /proc/PID/stat; projected = 1 / busiest."
	echo
	bench_md "$CSV"
} >"$OUT/partitions.md"
cat >"$TMP/plot.gp" <<GP
set multiplot layout 1,2 title 'Partitions over 2 proposers ($(nproc) cores; projected: one host per process)'
set datafile separator ','
set xlabel 'partitions'
set xtics (1, 2, 4)
set ylabel 'values/s'
set yrange [0:*]
set format y '%.1s%c'
set key top left
set title '64 B'
plot '$CSV' using (\$2 == 64 && strcol(3) eq 'no' ? \$1 : 1/0):4 with linespoints lw 2 pt 7 title 'measured', \
     '' using (\$2 == 64 && strcol(3) eq 'no' ? \$1 : 1/0):9 with linespoints lw 2 pt 5 title 'projected', \
     '' using (\$2 == 64 && strcol(3) eq 'yes' ? \$1 : 1/0):9 with linespoints lw 2 pt 4 title 'projected, merged'
set title '1000 B'
plot '$CSV' using (\$2 == 1000 && strcol(3) eq 'no' ? \$1 : 1/0):4 with linespoints lw 2 pt 7 title 'measured', \
     '' using (\$2 == 1000 && strcol(3) eq 'no' ? \$1 : 1/0):9 with linespoints lw 2 pt 5 title 'projected', \
     '' using (\$2 == 1000 && strcol(3) eq 'yes' ? \$1 : 1/0):9 with linespoints lw 2 pt 4 title 'projected, merged'
unset multiplot
GP
BENCH_PNG_SIZE=1100,500 bench_gnuplot "$OUT/partitions.png" "$TMP/plot.gp"
cat "$OUT/partitions.md"
