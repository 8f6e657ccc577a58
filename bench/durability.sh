#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Thesis 4.4 / Table 4.2: the same workload (one client, 30 values outstanding, 20-2000
# bytes) under every storage backend and durability mode, for Paxos (3 acceptors and a
# proposer) and for the serializer (thesis 4.2), which stores through the same backends:
# durability.{csv,md,png}, with acceptor 0's (or the serializer's) flush counters where
# commits are pipelined.
# Then the outstanding sweep: 500-byte values with 30, 64, 128 and 256 outstanding on memory,
# LMDB sync and Berkeley DB sync, the durable ones flushing on the acceptor's loop (default)
# and on the storage's thread (storage-flush-thread yes; "thread" in the series' name), each
# point the median of $BENCH_REPEAT runs (default 3) taken side by side, one run of every
# series and point per round, with acceptor 0's flush counters: durability-sweep.{csv,md,png},
# every run in durability-sweep-runs.csv. With DURABILITY_BASELINE=BUILD_DIR the durable modes
# also run with that build (one without pipelined commits: its configuration has no
# storage-flush-thread), in the same rounds. PAXOS_SYSTEM=replicas runs the sweep on replicas
# (bench/cluster-client.sh).
# Results go to BUILD_DIR/bench-results/<date>/ ($BENCH_OUT: another directory); the tables
# are printed.
# Usage: bench/durability.sh BUILD_DIR [SECONDS_PER_RUN] [table|sweep|all]
set -eu
BUILD=$(cd "$1" && pwd)
SECONDS_PER_MODE=${2:-5}
PART=${3:-all}
case $PART in table | sweep | all) ;; *)
	echo "usage: bench/durability.sh BUILD_DIR [SECONDS_PER_RUN] [table|sweep|all]" >&2
	exit 2
	;;
esac
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_OUT:-$BUILD/bench-results/$(date +%Y-%m-%d)}
mkdir -p "$OUT"
STORE=$(mktemp -d /var/tmp/paxos-bench.XXXXXX)
TMP=$STORE
trap 'rm -rf "$STORE"' EXIT
trap 'exit 1' INT TERM
. "$SRC/bench/lib.sh"

# durable_conf BACKEND DURABILITY [FLUSH_THREAD]: paxos.conf on that storage in $STORE/data,
# no periodic counters, storage-flush-thread FLUSH_THREAD (no); "-" leaves the key out, for a
# build that does not know it. Prints its path.
durable_conf() {
	thread=${3:-no}
	conf=$STORE/$1-$2-$thread.conf
	drop="s|^storage-flush-thread .*|storage-flush-thread $thread|"
	[ "$thread" != - ] || drop="/^storage-flush-thread /d"
	sed -e "s|^storage .*|storage $1|" -e "s|^storage-path .*|storage-path $STORE/data|" \
		-e "s|^#durability .*|durability $2|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
		-e "$drop" "$SRC/paxos.conf" >"$conf"
	echo "$conf"
}

# flush_counters LOG: storage_flushes, storage_flush_records and storage_flush_us of the last
# "counters acceptor" line in LOG (0 where there is none), comma-separated.
flush_counters() {
	counters=$(grep -h "counters acceptor" "$1" 2>/dev/null | tail -n 1)
	line=""
	for c in storage_flushes storage_flush_records storage_flush_us; do
		v=$(echo "$counters" | sed -n "s/.* $c=\([0-9]*\).*/\1/p")
		line="$line${line:+,}${v:-0}"
	done
	echo "$line"
}

table() {

CSV=$OUT/durability.csv
echo "system,backend,durability,values,seconds,values_per_s,kb_per_s,p5_ms,p50_ms,p95_ms,max_ms,flushes,flush_records,flush_us" >"$CSV"
for system in paxos serializer; do
	for mode in memory:none lmdb:nosync lmdb:sync bdb:inmemory-log bdb:nosync bdb:write-nosync \
		bdb:sync bdb:dbsync; do
		backend=${mode%%:*}
		durability=${mode#*:}
		conf=$(durable_conf "$backend" "$durability")
		rm -rf "$STORE/data" "$STORE/logs"
		mkdir -p "$STORE/logs"
		# A run of SECONDS_PER_MODE: the client stops at its time limit with values left to
		# deliver and exits non-zero, so a run failed only if it delivered nothing.
		out=$(PAXOS_SYSTEM=$system PAXOS_LOG_DIR=$STORE/logs PAXOS_CONF=$conf \
			"$SRC/bench/cluster-client.sh" "$BUILD" \
			--count 100000000 --time-limit "$SECONDS_PER_MODE" --size 20-2000 --outstanding 30 \
			--json 2>"$STORE/err" || true)
		json=$(echo "$out" | grep '^{' || true)
		case $json in
		*'"delivered":0,'* | '')
			echo "$system $mode: the run failed:" >&2
			cat "$STORE/err" >&2
			exit 1
			;;
		esac
		log=$STORE/logs/acceptor0.log
		[ "$system" = paxos ] || log=$STORE/logs/serializer.log
		echo "$json" | awk -v sys="$system" -v b="$backend" -v d="$durability" -v fl="$(flush_counters "$log")" '
			function field(name,   m) { match($0, "\"" name "\":[0-9.]+"); return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) }
			{ v = field("delivered"); s = field("seconds");
			  # kB/s from the mean value size of 20-2000 bytes
			  printf "%s,%s,%s,%s,%s,%s,%.1f,%s,%s,%s,%s,%s\n", sys, b, d, v, s, field("values_per_s"),
			         field("values_per_s") * 1010 / 1000, field("p5"), field("p50"), field("p95"), field("max"), fl }' >>"$CSV"
		tail -n 1 "$CSV"
	done
done

MD=$OUT/durability.md
{
	echo "| system | backend | durability | values/s | kB/s | latency 90% interval (ms) | p50 ms | max ms | records/flush | us/flush |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	tail -n +2 "$CSV" | awk -F, '{ printf "| %s | %s | %s | %s | %s | [%s, %s] | %s | %s | %s | %s |\n", $1, $2, $3, $6, $7, $8, $10, $9, $11,
		($12 > 0 ? sprintf("%.1f", $13 / $12) : "-"), ($12 > 0 ? sprintf("%.0f", $14 / $12) : "-") }'
	echo
	echo "Serializer / Paxos delivery rate per mode:"
	echo
	echo "| backend | durability | Paxos values/s | serializer values/s | serializer / Paxos |"
	echo "| --- | --- | --- | --- | --- |"
	tail -n +2 "$CSV" | awk -F, '$1 == "paxos" { p[$2 ":" $3] = $6; order[++n] = $2 ":" $3 }
		$1 == "serializer" { s[$2 ":" $3] = $6 }
		END { for (i = 1; i <= n; i++) { k = order[i]; split(k, bd, ":")
			printf "| %s | %s | %s | %s | %.2f |\n", bd[1], bd[2], p[k], s[k], (p[k] > 0 ? s[k] / p[k] : 0) } }'
} >"$MD"
echo
cat "$MD"
echo "(kB/s from the mean value size, 1010 bytes; machine: $(nproc) cores, $(uname -r))"

# The table as a plot: values/s per storage mode, Paxos and serializer side by side.
awk -F, 'NR > 1 && $1 == "paxos" { p[$2 " " $3] = $6; order[++n] = $2 " " $3 }
	NR > 1 && $1 == "serializer" { s[$2 " " $3] = $6 }
	END { print "mode,paxos,serializer"; for (i = 1; i <= n; i++) print order[i] "," p[order[i]] "," s[order[i]] }' \
	"$CSV" >"$STORE/bars.csv"
cat >"$STORE/plot.gp" <<EOF
set title 'Storage backends and durability modes (one client, 30 outstanding, 20-2000 B)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set format y '%.1s%c'
set ylabel 'delivered values/s'
set xlabel 'storage backend and durability mode'
set xtics rotate by -25
set key top right
plot '$STORE/bars.csv' every ::1 using 2:xtic(1) title 'Paxos', '' every ::1 using 3 title 'serializer'
EOF
BENCH_PNG_SIZE=1000,500 bench_gnuplot "$OUT/durability.png" "$STORE/plot.gp"
}

# sweep_run BUILD BACKEND:DURABILITY:FLUSH_THREAD OUTSTANDING: one run of the sweep; prints
# values/s, p50 latency (ms) and acceptor 0's storage_flushes, storage_flush_records,
# storage_flush_us.
sweep_run() {
	mode=${2#*:}
	conf=$(durable_conf "${2%%:*}" "${mode%%:*}" "${mode#*:}")
	rm -rf "$STORE/data" "$STORE/logs"
	mkdir -p "$STORE/logs"
	out=$(PAXOS_LOG_DIR=$STORE/logs PAXOS_CONF=$conf "$SRC/bench/cluster-client.sh" "$1" \
		--count 100000000 --time-limit "$SECONDS_PER_MODE" --size 500 --outstanding "$3" \
		--json 2>"$STORE/err" || true)
	json=$(echo "$out" | grep '^{' || true)
	case $json in
	*'"delivered":0,'* | '')
		echo "sweep $2 $3 outstanding ($1): the run failed:" >&2
		tail -n 30 "$STORE/err" >&2
		exit 1
		;;
	esac
	log=$STORE/logs/acceptor0.log
	[ -e "$log" ] || log=$STORE/logs/replica0.log
	echo "$(jfield "$json" values_per_s),$(jfield "$json" p50),$(flush_counters "$log")"
}

sweep() {
	RUNS=$OUT/durability-sweep-runs.csv
	echo "series,outstanding,round,values_per_s,p50_ms,flushes,flush_records,flush_us" >"$RUNS"
	round=1
	while [ "$round" -le "${BENCH_REPEAT:-3}" ]; do
		for k in 30 64 128 256; do
			for mode in memory:none:no lmdb:sync:no lmdb:sync:yes bdb:sync:no bdb:sync:yes; do
				series=$(echo "$mode" | sed 's/:none:no//; s/:no$//; s/:yes$/ thread/; s/:/ /')
				echo "$series,$k,$round,$(sweep_run "$BUILD" "$mode" "$k")" >>"$RUNS"
				tail -n 1 "$RUNS"
				case $mode in *:sync:no) ;; *) continue ;; esac
				[ -n "${DURABILITY_BASELINE:-}" ] || continue
				echo "$series (baseline),$k,$round,$(sweep_run "$DURABILITY_BASELINE" "${mode%:no}:-" "$k")" >>"$RUNS"
				tail -n 1 "$RUNS"
			done
		done
		round=$((round + 1))
	done
	# Per series and point, the run with the median values/s; its ratio to memory's median.
	CSV=$OUT/durability-sweep.csv
	tail -n +2 "$RUNS" | sort -t, -k1,1 -k2,2n -k4,4n | awk -F, -v secs="$SECONDS_PER_MODE" '
		function done_key() { if (n) { split(row[int((n + 1) / 2)], f, ",")
			med[key] = f[4]; pick[key] = row[int((n + 1) / 2)]; keys[++nk] = key }; n = 0 }
		{ k = $1 "," $2; if (k != key) { done_key(); key = k }; row[++n] = $0 }
		END { done_key()
			print "series,outstanding,values_per_s,vs_memory,p50_ms,flushes_per_s,records_per_flush,us_per_flush"
			for (i = 1; i <= nk; i++) { split(pick[keys[i]], f, ","); mem = med["memory," f[2]]
				fl = f[6]; printf "%s,%s,%s,%.2f,%s,%.0f,%s,%s\n", f[1], f[2], f[4],
				(mem > 0 ? f[4] / mem : 0), f[5], fl / secs,
				(fl > 0 ? sprintf("%.1f", f[7] / fl) : "-"), (fl > 0 ? sprintf("%.0f", f[8] / fl) : "-") } }' >"$CSV"
	bench_md "$CSV" >"$OUT/durability-sweep.md"
	echo
	cat "$OUT/durability-sweep.md"
	echo "(median of ${BENCH_REPEAT:-3} runs of $SECONDS_PER_MODE s per point; flush counters:" \
		"acceptor 0 in that run; machine: $(nproc) cores, $(uname -r))"

	# values/s against outstanding, one line per series
	plot=""
	for series in $(tail -n +2 "$CSV" | cut -d, -f1 | sort -u | tr ' ' '_'); do
		name=$(echo "$series" | tr '_' ' ')
		awk -F, -v s="$name" '$1 == s { print $2 "," $3 }' "$CSV" >"$STORE/$series.csv"
		plot="$plot${plot:+, }'$STORE/$series.csv' using 1:2 with linespoints title '$name'"
	done
	system=""
	[ "${PAXOS_SYSTEM:-paxos}" = paxos ] || system=", $PAXOS_SYSTEM"
	cat >"$STORE/sweep.gp" <<EOF
set title 'Durable acceptors: delivered values/s by values outstanding (500 B, median of ${BENCH_REPEAT:-3}$system)'
set xlabel 'values outstanding'
set ylabel 'delivered values/s'
set logscale x 2
set xrange [24:320]
set xtics (30, 64, 128, 256)
set yrange [0:*]
set format y '%.1s%c'
plot $plot
EOF
	bench_gnuplot "$OUT/durability-sweep.png" "$STORE/sweep.gp"
}

[ "$PART" = sweep ] || table
[ "$PART" = table ] || sweep
