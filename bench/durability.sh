#!/bin/sh
# Thesis 4.4 / Table 4.2: the same workload (one client, 30 values outstanding, 20-2000
# bytes) under every storage backend and durability mode, for Paxos (3 acceptors and a
# proposer) and for the serializer (thesis 4.2), which stores through the same backends.
# Writes bench/results/<date>/durability.{csv,md,png} ($BENCH_OUT: another directory) and
# prints the table.
# Usage: bench/durability.sh BUILD_DIR [SECONDS_PER_MODE]
set -eu
BUILD=$(cd "$1" && pwd)
SECONDS_PER_MODE=${2:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BENCH_OUT:-$SRC/bench/results/$(date +%Y-%m-%d)}
mkdir -p "$OUT"
STORE=$(mktemp -d /var/tmp/paxos-bench.XXXXXX)
TMP=$STORE
trap 'rm -rf "$STORE"' EXIT

CSV=$OUT/durability.csv
echo "system,backend,durability,values,seconds,values_per_s,kb_per_s,p5_ms,p50_ms,p95_ms,max_ms" >"$CSV"
for system in paxos serializer; do
	for mode in memory:none lmdb:nosync lmdb:sync bdb:inmemory-log bdb:nosync bdb:write-nosync \
		bdb:sync bdb:dbsync; do
		backend=${mode%%:*}
		durability=${mode#*:}
		conf=$STORE/$backend-$durability.conf
		rm -rf "$STORE/data"
		sed -e "s|^storage .*|storage $backend|" -e "s|^storage-path .*|storage-path $STORE/data|" \
			-e "s|^#durability .*|durability $durability|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
			"$SRC/paxos.conf" >"$conf"
		# A run of SECONDS_PER_MODE: the client stops at its time limit with values left to
		# deliver and exits non-zero, so a run failed only if it delivered nothing.
		out=$(PAXOS_SYSTEM=$system PAXOS_CONF=$conf "$SRC/bench/cluster-client.sh" "$BUILD" \
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
		echo "$json" | awk -v sys="$system" -v b="$backend" -v d="$durability" '
			function field(name,   m) { match($0, "\"" name "\":[0-9.]+"); return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) }
			{ v = field("delivered"); s = field("seconds");
			  # kB/s from the mean value size of 20-2000 bytes
			  printf "%s,%s,%s,%s,%s,%s,%.1f,%s,%s,%s,%s\n", sys, b, d, v, s, field("values_per_s"),
			         field("values_per_s") * 1010 / 1000, field("p5"), field("p50"), field("p95"), field("max") }' >>"$CSV"
		tail -n 1 "$CSV"
	done
done

MD=$OUT/durability.md
{
	echo "| system | backend | durability | values/s | kB/s | latency 90% interval (ms) | p50 ms | max ms |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
	tail -n +2 "$CSV" | awk -F, '{ printf "| %s | %s | %s | %s | %s | [%s, %s] | %s | %s |\n", $1, $2, $3, $6, $7, $8, $10, $9, $11 }'
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
. "$SRC/bench/lib.sh"
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
