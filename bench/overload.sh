#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Goodput under overload: 3 acceptors, one proposer, one client, memory storage, on both
# transports, 64 and 1000 B values. First closed loop with 128, 256, 512, 1024 and 4096 values
# outstanding; the best of those is the closed-loop peak. Then open loop (--rate, at most
# 4096 outstanding, as many as the closed loop's largest) at 0.25, 0.5, 0.75, 1, 1.5 and 2
# times that peak. More load than the cluster carries must not lower what it carries: each
# point's values/s is set against the peak (ratio), with p50/p99 latency, the client's resubmits and duplicates, and the role
# processes' CPU time per value (the busiest one's, and all of theirs). SECONDS per run
# (default 3); each point is the run with the median values/s of $BENCH_REPEAT (default 3).
# Writes overload.{csv,md,png} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/overload.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-3}
BENCH_REPEAT=${BENCH_REPEAT:-3}
export BENCH_REPEAT

conf=$(bench_conf overload)
CSV=$OUT/overload.csv
echo "transport,size_b,loop,outstanding,offered_per_s,values_per_s,ratio,p50_ms,p99_ms,resubmits,duplicates,busiest_us_per_value,all_us_per_value,offered_ratio" >"$CSV"

# point TRANSPORT SIZE LOOP OUTSTANDING OFFERED PEAK CLIENT_OPTIONS...: one CSV row
point() {
	p_transport=$1 p_size=$2 p_loop=$3 p_k=$4 p_offered=$5 p_peak=$6
	shift 6
	json=$(PAXOS_TRANSPORT=$p_transport bench_run "$conf" "$SECONDS_PER_RUN" --size "$p_size" "$@") ||
		exit 1
	rate=$(jfield "$json" values_per_s)
	[ "$p_peak" != 0 ] || p_peak=$rate
	echo "$p_transport,$p_size,$p_loop,$p_k,$p_offered,$rate,$(awk -v r="$rate" -v p="$p_peak" \
		'BEGIN { printf "%.2f", r / p }'),$(jfield "$json" p50),$(jfield "$json" p99),$(jfield \
			"$json" resubmits),$(jfield "$json" duplicates),$(jfield "$json" \
			busiest_us_per_value),$(jfield "$json" all_us_per_value),0" >>"$CSV"
	tail -n 1 "$CSV"
}

for transport in multicast unicast; do
	for size in 64 1000; do
		first=$(($(wc -l <"$CSV") + 1))
		for k in 128 256 512 1024 4096; do
			point $transport $size closed $k 0 0 --outstanding $k
		done
		# The peak of this transport and size, then each ratio of the block against it.
		peak=$(awk -F, -v f="$first" 'NR >= f && $6 + 0 > best { best = $6 + 0 } END { print best }' "$CSV")
		for f in 0.25 0.5 0.75 1 1.5 2; do
			rate=$(awk -v p="$peak" -v f=$f 'BEGIN { printf "%d", p * f }')
			point $transport $size open 4096 "$rate" "$peak" --rate "$rate" --outstanding 4096
		done
		awk -F, -v OFS=, -v f="$first" -v p="$peak" 'NR >= f { $7 = sprintf("%.2f", $6 / p)
			$14 = sprintf("%.2f", $5 / p) } 1' "$CSV" >"$TMP/csv" && mv "$TMP/csv" "$CSV"
	done
done

{
	bench_md "$CSV"
	echo
	echo "ratio: values/s over the best closed-loop values/s of the same transport and size;"
	echo "offered_ratio: the offered rate over that peak."
	echo "Open loop: --rate offered_per_s with at most 4096 values outstanding; closed loop:"
	echo "outstanding values. CPU: role processes' user + system time per delivered value (us)."
	echo "3 acceptors, one proposer, one client, memory storage, $SECONDS_PER_RUN s per run; each"
	echo "point is the run with the median values/s of $BENCH_REPEAT. Configuration:"
	echo "configs/overload.conf. $(uname -m), $(nproc) cores, $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d)."
} >"$OUT/overload.md"

cat >"$TMP/plot.gp" <<EOF
set multiplot layout 1,2 title 'Goodput against offered load (open loop; 3 acceptors, one proposer, one client)'
set xlabel 'offered load, times the closed-loop peak'
set ylabel 'delivered, times the closed-loop peak'
set xrange [0:2.2]
set yrange [0:1.3]
set title '64 B'
plot x with lines dt 2 lc rgb '#888888' title 'delivered = offered', \
     '$CSV' using (\$2 == 64 && strcol(3) eq 'open' && strcol(1) eq 'multicast' ? \$14 : 1/0):7 with linespoints lw 2 pt 7 title 'multicast', \
     '' using (\$2 == 64 && strcol(3) eq 'open' && strcol(1) eq 'unicast' ? \$14 : 1/0):7 with linespoints lw 2 pt 5 title 'unicast'
set title '1000 B'
plot x with lines dt 2 lc rgb '#888888' title 'delivered = offered', \
     '$CSV' using (\$2 == 1000 && strcol(3) eq 'open' && strcol(1) eq 'multicast' ? \$14 : 1/0):7 with linespoints lw 2 pt 7 title 'multicast', \
     '' using (\$2 == 1000 && strcol(3) eq 'open' && strcol(1) eq 'unicast' ? \$14 : 1/0):7 with linespoints lw 2 pt 5 title 'unicast'
unset multiplot
EOF
BENCH_PNG_SIZE=1100,480 bench_gnuplot "$OUT/overload.png" "$TMP/plot.gp"
echo
cat "$OUT/overload.md"
