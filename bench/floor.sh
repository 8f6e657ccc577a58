#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# How far each process is above the machine's floor: the CPU time per delivered
# value of every process of a Paxos cluster (3 acceptors, proposer 0, one client with 64
# values outstanding) and of the serializer, beside what the datagrams that process received
# and sent would cost it if it did nothing but move them. The per-datagram costs come from
# paxos-limit in the same run (--receivers R processes hear each datagram, default 4: a
# value's datagram reaches about that many on one host), fitted as a + b * bytes for sending
# and for receiving; each process's transport counters (datagrams and bytes, received and
# sent) turn them into its floor per value. CPU per value is user + system time from
# /proc/PID/stat at the end of the run (the client's from getrusage) over the values
# delivered. ROUNDS rounds (default 3), Paxos and serializer interleaved in each; medians.
# Writes floor.{csv,md} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/floor.sh BUILD_DIR [ROUNDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
ROUNDS=${2:-3}
RECEIVERS=${FLOOR_RECEIVERS:-4}
CSV=$OUT/floor.csv

# limit_fit: prints "a_tx b_tx a_rx b_rx" (us, us per byte) from paxos-limit at 64, 1024 and
# 8192 bytes, least squares.
limit_fit() {
	conf=$(bench_conf floor-limit)
	for size in 64 1024 8192; do
		"$SRC/tests/netns-run.sh" "$BUILD/paxos-limit" -c "$conf" --size $size --seconds 1 \
			--receivers "$RECEIVERS" |
			sed -n 's/^size \([0-9]*\) B: .*sender \([0-9.]*\) us, receiver \([0-9.]*\) us$/\1 \2 \3/p'
	done | tee "$TMP/limit" | awk '
		{ n++; x += $1; xx += $1 * $1; t += $2; xt += $1 * $2; r += $3; xr += $1 * $3 }
		END {
			if (n < 3) exit 1
			d = n * xx - x * x
			bt = (n * xt - x * t) / d; br = (n * xr - x * r) / d
			printf "%.4f %.6f %.4f %.6f\n", (t - bt * x) / n, bt, (r - br * x) / n, br
		}'
}

# counters FILE: "dg_rx dg_tx bytes_rx bytes_tx" from the last transport counters line
counters() {
	grep "counters transport:" "$1" 2>/dev/null | tail -n 1 |
		sed -n 's/.*datagrams_received=\([0-9]*\) datagrams_sent=\([0-9]*\) .*bytes_received=\([0-9]*\) bytes_sent=\([0-9]*\).*/\1 \2 \3 \4/p'
}

# run SYSTEM SIZE COUNT: one line per process, "process us dg_rx dg_tx b_rx b_tx floor" per
# value
run() {
	rm -rf "$TMP/logs" && mkdir "$TMP/logs"
	PAXOS_SYSTEM=$1 PAXOS_LOG_DIR=$TMP/logs "$SRC/bench/cluster-client.sh" "$BUILD" \
		--count "$3" --size "$2" --outstanding 64 --counters >"$TMP/out" 2>"$TMP/err" || true
	delivered=$(sed -n 's/^delivered \([0-9]*\) of.*/\1/p' "$TMP/out")
	[ "${delivered:-0}" -gt 0 ] || {
		echo "floor.sh: the $1 run at $2 B delivered nothing" >&2
		tail -n 20 "$TMP/err" >&2
		return 1
	}
	{
		while read -r name ticks hz; do
			echo "$name $(awk -v t="$ticks" -v h="$hz" 'BEGIN { print t * 1e6 / h }') \
$(counters "$TMP/logs/$name.log")"
		done <"$TMP/logs/cpu.log"
		echo "client $(sed -n 's/^client cpu \([0-9.]*\) s.*/\1/p' "$TMP/out" |
			awk '{ print $1 * 1e6 }') $(counters "$TMP/err")"
	} | awk -v d="$delivered" -v fit="$FIT" '
		BEGIN { split(fit, f, " ") }
		NF == 6 {
			floor = ($3 * f[3] + $5 * f[4] + $4 * f[1] + $6 * f[2]) / d
			printf "%s %.3f %.4f %.4f %.1f %.1f %.3f\n", $1, $2 / d, $3 / d, $4 / d,
				$5 / d, $6 / d, floor
		}'
}

FIT=$(limit_fit) || {
	echo "floor.sh: could not read paxos-limit's output" >&2
	exit 1
}
echo "paxos-limit, $RECEIVERS receivers (size B, sender us/datagram, receiver us/datagram):"
cat "$TMP/limit"
echo "fit: sending $(echo "$FIT" | cut -d' ' -f1) us + $(echo "$FIT" | cut -d' ' -f2) us/B," \
	"receiving $(echo "$FIT" | cut -d' ' -f3) us + $(echo "$FIT" | cut -d' ' -f4) us/B"

echo "round,size,system,process,us_per_value,datagrams_received,datagrams_sent,bytes_received,bytes_sent,floor_us,load" >"$CSV"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for size_count in "64 500000" "1000 200000"; do
		set -- $size_count
		for system in paxos serializer; do
			run "$system" "$1" "$2" | while read -r line; do
				echo "$r,$1,$system,$(echo "$line" | tr ' ' ','),$(cut -d' ' -f1 /proc/loadavg)"
			done | tee -a "$CSV"
		done
	done
	r=$((r + 1))
done

{
	echo "Per delivered value, medians of $ROUNDS rounds ($(nproc) cores, $(uname -r)); floor:"
	echo "the datagrams the process moved, priced by paxos-limit with $RECEIVERS receivers"
	echo "(sending $(echo "$FIT" | cut -d' ' -f1) us + $(echo "$FIT" | cut -d' ' -f2) us/B, receiving"
	echo "$(echo "$FIT" | cut -d' ' -f3) us + $(echo "$FIT" | cut -d' ' -f4) us/B per datagram)."
	echo
	echo "| size | system | process | CPU us | datagrams in | datagrams out | bytes in | bytes out | floor us | above the floor us |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	tail -n +2 "$CSV" | cut -d, -f2-4 | sort -u -t, -k1,1n -k2,2 -k3,3 | while IFS=, read -r size system proc; do
		line="| $size | $system | $proc |"
		for col in 5 6 7 8 9 10; do
			m=$(awk -F, -v s="$size" -v y="$system" -v p="$proc" -v c=$col \
				'$2 == s && $3 == y && $4 == p { print $c }' "$CSV" | sort -g |
				awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
			line="$line $m |"
			[ $col -eq 5 ] && cpu=$m
			[ $col -eq 10 ] && floor=$m
		done
		echo "$line $(awk -v c="$cpu" -v f="$floor" 'BEGIN { printf "%.3f", c - f }') |"
	done
} | tee "$OUT/floor.md"
