#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# paxos-storage-bench commits through every durable backend and reports what it measured;
# a store it cannot open is an error, not a zero.
# Usage: tests/checks/storage_bench.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
DIR=$(mktemp -d "$BUILD/storage-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

for mode in memory:none lmdb:sync bdb:sync; do
	backend=${mode%%:*}
	sed -e "s|^storage .*|storage $backend|" -e "s|^storage-path .*|storage-path $DIR/store|" \
		-e "s|^#durability .*|durability ${mode#*:}|" "$SRC/paxos.conf" >"$DIR/$backend.conf"
	out=$("$BUILD/paxos-storage-bench" -c "$DIR/$backend.conf" --writers 2 --records 2 \
		--size 500 --final --seconds 0.3)
	echo "$out"
	echo "$out" | grep -Eq "^storage $backend, durability ${mode#*:}: 2 writers, 2 records of 500 B per commit \+ as many final rewrites: [1-9][0-9]* commits/s per writer; commit p50 [0-9]+ p90 [0-9]+ p99 [0-9]+ max [0-9]+ us$" || {
		echo "storage_bench: unexpected report for $mode" >&2
		exit 1
	}
	# Its scratch stores are gone afterwards.
	[ -z "$(ls -A "$DIR/store" 2>/dev/null)" ] || {
		echo "storage_bench: $mode left $(ls "$DIR/store") behind" >&2
		exit 1
	}
done

# Stores that cannot be created: exit status 1 and the reason.
sed -e "s|^storage .*|storage lmdb|" -e "s|^storage-path .*|storage-path /proc/no-such-dir|" \
	"$SRC/paxos.conf" >"$DIR/bad.conf"
if "$BUILD/paxos-storage-bench" -c "$DIR/bad.conf" --seconds 0.1 2>"$DIR/err"; then
	echo "storage_bench: a store that cannot be created was not reported" >&2
	exit 1
fi
grep -q "/proc/no-such-dir" "$DIR/err"
# Bad arguments: usage, exit status 2.
status=0
"$BUILD/paxos-storage-bench" -c "$DIR/memory.conf" --writers 99 2>/dev/null || status=$?
[ "$status" -eq 2 ]
echo "storage_bench: ok"
