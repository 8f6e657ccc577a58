#!/bin/sh
# Thesis 4.4 / Table 4.2: the same workload (one client, 30 values outstanding, 20-2000
# bytes, 3 acceptors) under every storage backend and durability mode. Writes
# bench/results/<date>/durability.{csv,md} and prints the table.
# Usage: bench/durability.sh BUILD_DIR [SECONDS_PER_MODE]
set -eu
BUILD=$(cd "$1" && pwd)
SECONDS_PER_MODE=${2:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$SRC/bench/results/$(date +%Y-%m-%d)
mkdir -p "$OUT"
STORE=$(mktemp -d /var/tmp/paxos-bench.XXXXXX)
trap 'rm -rf "$STORE"' EXIT

CSV=$OUT/durability.csv
echo "backend,durability,values,seconds,values_per_s,kb_per_s,p5_ms,p50_ms,p95_ms,max_ms" >"$CSV"
for mode in memory:none lmdb:nosync lmdb:sync bdb:inmemory-log bdb:nosync bdb:write-nosync \
	bdb:sync bdb:dbsync; do
	backend=${mode%%:*}
	durability=${mode#*:}
	conf=$STORE/$backend-$durability.conf
	rm -rf "$STORE/data"
	sed -e "s|^storage .*|storage $backend|" -e "s|^storage-path .*|storage-path $STORE/data|" \
		-e "s|^#durability .*|durability $durability|" -e "s|^counters-interval-ms .*|counters-interval-ms 0|" \
		"$SRC/paxos.conf" >"$conf"
	# Run long enough to last about SECONDS_PER_MODE: probe the rate with a short run first.
	probe=$(PAXOS_CONF=$conf "$SRC/bench/cluster-client.sh" "$BUILD" --count 300 \
		--size 20-2000 --outstanding 30 --json 2>/dev/null | grep '^{')
	rate=$(echo "$probe" | sed 's/.*"values_per_s":\([0-9.]*\).*/\1/')
	count=$(awk -v r="$rate" -v s="$SECONDS_PER_MODE" 'BEGIN { c = int(r * s); print (c < 300 ? 300 : c) }')
	rm -rf "$STORE/data"
	json=$(PAXOS_CONF=$conf "$SRC/bench/cluster-client.sh" "$BUILD" --count "$count" \
		--size 20-2000 --outstanding 30 --time-limit 300 --json 2>/dev/null | grep '^{')
	echo "$json" | awk -v b="$backend" -v d="$durability" '
		function field(name,   m) { match($0, "\"" name "\":[0-9.]+"); return substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3) }
		{ v = field("delivered"); s = field("seconds");
		  # kB/s from the mean value size of 20-2000 bytes
		  printf "%s,%s,%s,%s,%s,%.1f,%s,%s,%s,%s\n", b, d, v, s, field("values_per_s"),
		         field("values_per_s") * 1010 / 1000, field("p5"), field("p50"), field("p95"), field("max") }' >>"$CSV"
	tail -n 1 "$CSV"
done

MD=$OUT/durability.md
{
	echo "| backend | durability | values/s | kB/s | latency 90% interval (ms) | p50 ms | max ms |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	tail -n +2 "$CSV" | awk -F, '{ printf "| %s | %s | %s | %s | [%s, %s] | %s | %s |\n", $1, $2, $5, $6, $7, $9, $8, $10 }'
} >"$MD"
echo
cat "$MD"
echo "(kB/s from the mean value size, 1010 bytes; machine: $(nproc) cores, $(uname -r))"
