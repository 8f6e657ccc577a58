#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Thesis Fig. 4.3: Paxos with 3, 5, 7 and 9 acceptors (quorum a majority), one proposer, one
# client keeping 30 values of 64 and of 1000 bytes outstanding, non-durable storage, SECONDS
# per point (default 2). Every acceptor is a process on this machine: beyond the core count
# they compete for the CPU, as they compete for the network in the thesis.
# Writes acceptors.{csv,md,png} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/acceptors.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-2}
OUTSTANDING=30

CSV=$OUT/acceptors.csv
echo "acceptors,size_b,values,values_per_s,kb_per_s,p5_ms,p50_ms,p95_ms,p99_ms,max_ms" >"$CSV"
for size in 64 1000; do
	for n in 3 5 7 9; do
		conf=$(bench_conf "acceptors-$n" acceptors "$n")
		json=$(PAXOS_ACCEPTORS=$n bench_run "$conf" "$SECONDS_PER_RUN" --size $size \
			--outstanding $OUTSTANDING) || exit 1
		rate=$(jfield "$json" values_per_s)
		echo "$n,$size,$(jfield "$json" delivered),$rate,$(awk -v r="$rate" -v s=$size \
			'BEGIN { printf "%.1f", r * s / 1000 }'),$(jfield "$json" p5),$(jfield "$json" p50),$(jfield \
				"$json" p95),$(jfield "$json" p99),$(jfield "$json" max)" >>"$CSV"
		tail -n 1 "$CSV"
	done
done

{
	bench_md "$CSV"
	echo
	echo "One proposer, one client with $OUTSTANDING values outstanding, non-durable storage,"
	echo "$SECONDS_PER_RUN s per point, $(nproc) cores. Configurations: configs/acceptors-N.conf."
} >"$OUT/acceptors.md"

cat >"$TMP/plot.gp" <<EOF
set multiplot layout 1,2 title 'Paxos with more acceptors (one proposer, one client, $OUTSTANDING outstanding, $(nproc) cores)'
set xlabel 'acceptors'
set xtics (3, 5, 7, 9)
set xrange [2.5:9.5]
set ylabel 'delivered values/s'
set yrange [0:*]
set format y '%.1s%c'
set key top right
plot '$CSV' using (\$2 == 64 ? \$1 : 1/0):4 with linespoints lw 2 pt 7 title '64 B', \
     '' using (\$2 == 1000 ? \$1 : 1/0):4 with linespoints lw 2 pt 5 title '1000 B'
set ylabel 'latency (ms): median, bars p5 to p95'
set format y '%g'
set key top left
plot '$CSV' using (\$2 == 64 ? \$1 : 1/0):7:6:8 with yerrorlines lw 2 pt 7 title '64 B', \
     '' using (\$2 == 1000 ? \$1 + 0.1 : 1/0):7:6:8 with yerrorlines lw 2 pt 5 title '1000 B'
unset multiplot
EOF
BENCH_PNG_SIZE=1100,500 bench_gnuplot "$OUT/acceptors.png" "$TMP/plot.gp"
echo
cat "$OUT/acceptors.md"
