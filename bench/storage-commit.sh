#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What one acceptor group commit costs on this machine's disk, per backend and durability
# mode: paxos-storage-bench commits, in 1 and in 3 processes at once (three acceptors on one
# host share one disk), 5 new instances of 6000 bytes plus 5 final rewrites per commit, the
# size of one round of the Table 4.2 workload (30 values of 20-2000 bytes in instances of up to
# max-datagram). docs/BENCHMARKS.md reads the durability table against it.
# Writes storage-commit.{csv,md} to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
# Usage: bench/storage-commit.sh BUILD_DIR [SECONDS] [OUT_DIR]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
SECONDS_PER_RUN=${2:-2}
# On the disk, not in a tmpfs /tmp where a sync costs nothing.
STORE=$(mktemp -d /var/tmp/paxos-storage-bench.XXXXXX)
trap 'rm -rf "$TMP" "$STORE"' EXIT

CSV=$OUT/storage-commit.csv
echo "backend,durability,writers,commits_per_s_per_writer,p50_us,p90_us,p99_us,max_us" >"$CSV"
for mode in memory:none lmdb:nosync lmdb:sync bdb:inmemory-log bdb:nosync bdb:write-nosync \
	bdb:sync bdb:dbsync; do
	backend=${mode%%:*}
	durability=${mode#*:}
	conf=$(bench_conf "storage-$backend-$durability" storage "$backend" durability "$durability" \
		storage-path "$STORE" lmdb-map-size 17179869184)
	for writers in 1 3; do
		rm -rf "${STORE:?}"/*
		# "... 1 writers, 5 records of 6000 B per commit + ...: 12438 commits/s per writer;
		#  commit p50 75 p90 108 p99 117 max 1451 us"
		line=$("$BUILD/paxos-storage-bench" -c "$conf" --writers $writers --records 5 \
			--size 6000 --final --seconds "$SECONDS_PER_RUN")
		echo "$line" | sed -n "s/.*: \([0-9]*\) commits\/s per writer; commit p50 \([0-9]*\) p90 \([0-9]*\) p99 \([0-9]*\) max \([0-9]*\) us/$backend,$durability,$writers,\1,\2,\3,\4,\5/p" >>"$CSV"
		tail -n 1 "$CSV"
	done
done
[ "$(wc -l <"$CSV")" -eq 17 ] || {
	echo "storage-commit.sh: could not read paxos-storage-bench's output" >&2
	exit 1
}
{
	bench_md "$CSV"
	echo
	echo "paxos-storage-bench --records 5 --size 6000 --final --seconds $SECONDS_PER_RUN: each"
	echo "writer its own store in $(dirname "$STORE") ($(df -T "$STORE" | awk 'NR == 2 { print $2 " on " $1 }'))."
} >"$OUT/storage-commit.md"
echo
cat "$OUT/storage-commit.md"
