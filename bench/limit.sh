#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What this machine allows: paxos-limit sends one-datagram multicasts of 64 bytes, 1 kB and
# 8 kB to the learners group for SECONDS (default 1) each, inside a private network
# namespace, and a receiving process counts them; both report the CPU time each datagram
# cost them (a floor for any process that receives and sends a value): every other figure
# can be read against it.
# Writes limit.{csv,md,png} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/limit.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-1}

conf=$(bench_conf limit)
CSV=$OUT/limit.csv
echo "datagram_b,sent_per_s,received_per_s,mb_per_s,sender_us_per_datagram,receiver_us_per_datagram" >"$CSV"
for size in 64 1024 8192; do
	# "size 1024 B: sent 549120 datagrams/s, received 533136 datagrams/s = 545.9 MB/s
	# (0 refused by the socket); CPU per datagram: sender 2.194 us, receiver 1.329 us"
	line=$("$SRC/tests/netns-run.sh" "$BUILD/paxos-limit" -c "$conf" --size $size \
		--seconds "$SECONDS_PER_RUN")
	echo "$line" | sed -n 's/^size \([0-9]*\) B: sent \([0-9]*\) datagrams\/s, received \([0-9]*\) datagrams\/s = \([0-9.]*\) MB\/s.*sender \([0-9.]*\) us, receiver \([0-9.]*\) us$/\1,\2,\3,\4,\5,\6/p' >>"$CSV"
	tail -n 1 "$CSV"
done
[ "$(wc -l <"$CSV")" -eq 4 ] || {
	echo "limit.sh: could not read paxos-limit's output" >&2
	exit 1
}

{
	bench_md "$CSV"
	echo
	echo "One sender, one receiving process, the sockets and options of libpaxos (socket-buffer"
	echo "from configs/limit.conf), multicast on loopback, $SECONDS_PER_RUN s per size; sendmmsg of 32"
	echo "and recvmmsg of 64 datagrams, as the transport; CPU is user + system time per datagram."
} >"$OUT/limit.md"

cat >"$TMP/plot.gp" <<EOF
set title 'Raw one-datagram multicast on this machine (one sender, one receiver, loopback)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xlabel 'datagram size'
set ylabel 'datagrams/s received'
set format y '%.1s%c'
set yrange [0:*]
set y2label 'MB/s received'
set y2range [0:*]
set y2tics
set ytics nomirror
set key top left
plot '$CSV' every ::1 using 3:xtic(sprintf('%d B', \$1)) title 'datagrams/s (left)', \
     '' every ::1 using 4 axes x1y2 title 'MB/s (right)'
EOF
bench_gnuplot "$OUT/limit.png" "$TMP/plot.gp"
echo
cat "$OUT/limit.md"
