#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Thesis Fig. 4.4: Paxos (3 acceptors, one proposer) with 1 to 24 extra paxos-learner
# processes, each learning every value and writing it to /dev/null, measured by one client
# keeping 30 values of 1000 bytes outstanding (the client learns too), non-durable storage,
# SECONDS per point (default 2). On a machine with few cores the learners take the CPU from
# the cluster: the figure shows where this machine saturates.
# Writes learners.{csv,md,png} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/learners.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-2}
OUTSTANDING=30
SIZE=1000

conf=$(bench_conf learners)
CSV=$OUT/learners.csv
echo "learners,size_b,values,values_per_s,kb_per_s,p5_ms,p50_ms,p95_ms,p99_ms,max_ms,resubmits" >"$CSV"
for n in 1 2 4 8 12 16 20 24; do
	json=$(PAXOS_LEARNERS=$n bench_run "$conf" "$SECONDS_PER_RUN" --size $SIZE \
		--outstanding $OUTSTANDING) || exit 1
	rate=$(jfield "$json" values_per_s)
	echo "$n,$SIZE,$(jfield "$json" delivered),$rate,$(awk -v r="$rate" -v s=$SIZE \
		'BEGIN { printf "%.1f", r * s / 1000 }'),$(jfield "$json" p5),$(jfield "$json" p50),$(jfield \
			"$json" p95),$(jfield "$json" p99),$(jfield "$json" max),$(jfield "$json" resubmits)" >>"$CSV"
	tail -n 1 "$CSV"
done

{
	bench_md "$CSV"
	echo
	echo "learners: paxos-learner processes besides the client (which learns too); 3 acceptors,"
	echo "one proposer, $OUTSTANDING values of $SIZE bytes outstanding, non-durable storage,"
	echo "$SECONDS_PER_RUN s per point, $(nproc) cores. Configuration: configs/learners.conf."
} >"$OUT/learners.md"

cat >"$TMP/plot.gp" <<EOF
set title 'Paxos with more learners ($SIZE B values, $OUTSTANDING outstanding, 3 acceptors, $(nproc) cores)'
set xlabel 'paxos-learner processes (besides the client)'
set xrange [0:25]
set xtics (1, 2, 4, 8, 12, 16, 20, 24)
set ylabel 'delivered values/s (client)'
set yrange [0:*]
set format y '%.1s%c'
set y2label 'median latency (ms)'
set y2range [0:*]
set y2tics
set ytics nomirror
set key top center
plot '$CSV' using 1:4 with linespoints lw 2 pt 7 title 'values/s (left)', \
     '' using 1:7 axes x1y2 with linespoints lw 2 pt 5 dt 2 title 'median latency (ms, right)'
EOF
bench_gnuplot "$OUT/learners.png" "$TMP/plot.gp"
echo
cat "$OUT/learners.md"
