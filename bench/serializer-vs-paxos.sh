#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Thesis 4.3 / Table 4.1: Paxos (3 acceptors and a proposer) against the serializer (thesis
# 4.2), both on non-durable storage, under one client with 30 values outstanding of 20-2000
# bytes, each for SECONDS (default 10). Writes serializer-vs-paxos.{csv,md,png} to
# BUILD_DIR/bench-results/<date>/ and prints the table ($BENCH_OUT: another directory for the
# results).
# Nothing trims the stores during a run: each acceptor and the serializer keep every value
# in memory (about 1 kB each), so keep runs short (10 s needs some 4 GB for the serializer).
# Usage: bench/serializer-vs-paxos.sh BUILD_DIR [SECONDS]
set -eu
BUILD=$(cd "$1" && pwd)
SECONDS_PER_RUN=${2:-10}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_OUT:-$BUILD/bench-results/$(date +%Y-%m-%d)}
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CONF=$TMP/paxos.conf
sed -e "s|^storage .*|storage memory|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
	"$SRC/paxos.conf" >"$CONF"

# run SYSTEM: the JSON report of a run of SECONDS_PER_RUN. The client stops at its time
# limit with values left to deliver, so it exits non-zero: a run failed if nothing was
# delivered.
run() {
	out=$(PAXOS_SYSTEM=$1 PAXOS_CONF=$CONF "$SRC/bench/cluster-client.sh" "$BUILD" \
		--count 100000000 --time-limit "$SECONDS_PER_RUN" --size 20-2000 --outstanding 30 \
		--json 2>"$TMP/$1.err" || true)
	json=$(echo "$out" | grep '^{' || true)
	case $json in
	*'"delivered":0,'* | '') echo "$1: the run failed:" >&2; cat "$TMP/$1.err" >&2; return 1 ;;
	esac
	echo "$json"
}

CSV=$OUT/serializer-vs-paxos.csv
echo "system,values,seconds,values_per_s,kb_per_s,min_ms,max_ms,p5_ms,p50_ms,p95_ms" >"$CSV"
for system in paxos serializer; do
	json=$(run $system) || exit 1
	echo "$json" | awk -v sys=$system '
		function field(name) {
			if (!match($0, "\"" name "\":[0-9.]+")) return "n/a"
			return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) }
		{ # kB/s from the mean value size of 20-2000 bytes
		  printf "%s,%s,%s,%s,%.1f,%s,%s,%s,%s,%s\n", sys, field("delivered"), field("seconds"),
		         field("values_per_s"), field("values_per_s") * 1010 / 1000, field("min"),
		         field("max"), field("p5"), field("p50"), field("p95") }' >>"$CSV"
	tail -n 1 "$CSV"
done

MD=$OUT/serializer-vs-paxos.md
awk -F, -v secs="$SECONDS_PER_RUN" '
	NR == 2 { for (i = 1; i <= NF; i++) p[i] = $i }
	NR == 3 { for (i = 1; i <= NF; i++) s[i] = $i }
	END {
		print "| | Paxos | Serializer | unit | Paxos / serializer |"
		print "| --- | --- | --- | --- | --- |"
		printf "| Average delivery rate | %s | %s | val/s | %.2f |\n", p[4], s[4], (s[4] > 0 ? p[4] / s[4] : 0)
		printf "| Average delivery rate | %s | %s | kB/s | %.2f |\n", p[5], s[5], (s[5] > 0 ? p[5] / s[5] : 0)
		printf "| Minimum latency | %s | %s | ms | |\n", p[6], s[6]
		printf "| Maximum latency | %s | %s | ms | |\n", p[7], s[7]
		printf "| 90%% interval latency [p5, p95] | [%s, %s] | [%s, %s] | ms | |\n", p[8], p[10], s[8], s[10]
		printf "| Median latency | %s | %s | ms | |\n", p[9], s[9]
		printf "\nOne client, 30 values outstanding, 20-2000 bytes, non-durable storage, %s s per run;\n", secs
		printf "Paxos: 3 acceptors and 1 proposer; values: %s (Paxos), %s (serializer).\n", p[2], s[2]
	}' "$CSV" >"$MD"
echo
cat "$MD"
echo "(kB/s from the mean value size, 1010 bytes; machine: $(nproc) cores, $(uname -r))"

# The table as a plot: delivery rate and latency, side by side.
. "$SRC/bench/lib.sh"
cat >"$TMP/plot.gp" <<EOF
set multiplot layout 1,2 title 'Paxos vs serializer (one client, 30 outstanding, 20-2000 B, non-durable)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set format y '%.1s%c'
set ylabel 'delivered values/s'
set key off
plot '$CSV' every ::1 using 4:xtic(1) lc rgb '#1f5fa8'
set format y '%g'
set ylabel 'latency (ms)'
set key top left
plot '$CSV' every ::1 using 8:xtic(1) title 'p5', '' every ::1 using 9 title 'median', \\
     '' every ::1 using 10 title 'p95'
unset multiplot
EOF
BENCH_PNG_SIZE=1000,450 bench_gnuplot "$OUT/serializer-vs-paxos.png" "$TMP/plot.gp"
