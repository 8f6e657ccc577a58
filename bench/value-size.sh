#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Thesis Figs. 4.1 and 4.2: delivered values/s, kB/s and latency for value sizes from 30 bytes
# to the largest value a datagram carries (max-datagram 8192: 8124 bytes), for Paxos (3
# acceptors and a proposer) and the serializer, one client keeping 30 values outstanding,
# non-durable storage, SECONDS per point (default 2).
# Writes value-size.{csv,md}, value-size-throughput.png and value-size-latency.png to
# BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/value-size.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-2}
OUTSTANDING=30

conf=$(bench_conf value-size)
# The largest value: paxos-client names it when refusing a larger one.
max=$("$BUILD/paxos-client" -c "$conf" --size 1000000000 2>&1 |
	sed -n 's/.*[^0-9.]\([0-9][0-9]*\)\.\.\([0-9][0-9]*\) .*/\2/p')
[ -n "$max" ] || {
	echo "value-size.sh: cannot learn the largest value size from paxos-client" >&2
	exit 1
}

CSV=$OUT/value-size.csv
echo "system,size_b,values,values_per_s,kb_per_s,p5_ms,p50_ms,p95_ms,p99_ms,max_ms" >"$CSV"
for system in paxos serializer; do
	for size in 30 64 128 256 512 1024 2048 4096 "$max"; do
		json=$(PAXOS_SYSTEM=$system bench_run "$conf" "$SECONDS_PER_RUN" --size "$size" \
			--outstanding $OUTSTANDING) || exit 1
		rate=$(jfield "$json" values_per_s)
		echo "$system,$size,$(jfield "$json" delivered),$rate,$(awk -v r="$rate" -v s="$size" \
			'BEGIN { printf "%.1f", r * s / 1000 }'),$(jfield "$json" p5),$(jfield "$json" p50),$(jfield \
				"$json" p95),$(jfield "$json" p99),$(jfield "$json" max)" >>"$CSV"
		tail -n 1 "$CSV"
	done
done

{
	bench_md "$CSV"
	echo
	echo "One client, $OUTSTANDING values outstanding, non-durable storage, $SECONDS_PER_RUN s per point;"
	echo "kB/s = values/s x value size (payload only); largest value $max bytes (max-datagram less"
	echo "the message header). Configuration: configs/value-size.conf."
} >"$OUT/value-size.md"

cat >"$TMP/tp.gp" <<EOF
set multiplot layout 1,2 title 'Throughput by value size (one client, $OUTSTANDING outstanding, non-durable)'
set logscale x 2
set xlabel 'value size (bytes, log scale)'
set xrange [24:11000]
set xtics ('30' 30, '64' 64, '128' 128, '256' 256, '512' 512, '1k' 1024, '2k' 2048, '4k' 4096, '8k' 8192)
set ylabel 'delivered values/s'
set yrange [0:*]
set format y '%.1s%c'
set key top right
plot '$CSV' using (strcol(1) eq 'paxos' ? \$2 : 1/0):4 with linespoints lw 2 pt 7 title 'Paxos', \
     '' using (strcol(1) eq 'serializer' ? \$2 : 1/0):4 with linespoints lw 2 pt 5 title 'serializer'
set ylabel 'delivered MB/s (payload)'
set key top left
plot '$CSV' using (strcol(1) eq 'paxos' ? \$2 : 1/0):(\$5/1000) with linespoints lw 2 pt 7 title 'Paxos', \
     '' using (strcol(1) eq 'serializer' ? \$2 : 1/0):(\$5/1000) with linespoints lw 2 pt 5 title 'serializer'
unset multiplot
EOF
BENCH_PNG_SIZE=1100,500 bench_gnuplot "$OUT/value-size-throughput.png" "$TMP/tp.gp"

cat >"$TMP/lat.gp" <<EOF
set title 'Latency by value size: median, bars from p5 to p95 (one client, $OUTSTANDING outstanding)'
set logscale x 2
set xlabel 'value size (bytes, log scale)'
set xrange [24:11000]
set xtics ('30' 30, '64' 64, '128' 128, '256' 256, '512' 512, '1k' 1024, '2k' 2048, '4k' 4096, '8k' 8192)
set ylabel 'latency (ms, log scale)'
set logscale y
set key top left
plot '$CSV' using (strcol(1) eq 'paxos' ? \$2 : 1/0):7:6:8 with yerrorlines lw 2 pt 7 title 'Paxos', \
     '' using (strcol(1) eq 'serializer' ? \$2 * 1.06 : 1/0):7:6:8 with yerrorlines lw 2 pt 5 title 'serializer', \
     '' using (strcol(1) eq 'paxos' ? \$2 : 1/0):9 with points pt 2 lc rgb '#9400d3' title 'Paxos p99', \
     '' using (strcol(1) eq 'serializer' ? \$2 * 1.06 : 1/0):9 with points pt 4 lc rgb '#009e73' title 'serializer p99'
EOF
bench_gnuplot "$OUT/value-size-latency.png" "$TMP/lat.gp"
echo
cat "$OUT/value-size.md"
