#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs every libFuzzer target for a bounded time on a copy of its seed corpus (the committed
# corpus is never written to). A failing input is left in BUILD/fuzz-artifacts/; add it to
# tests/fuzz/regressions/TARGET/ once fixed, so that ctest replays it from then on.
# Usage: run.sh BUILD_DIR SOURCE_DIR SECONDS_PER_TARGET
set -eu
BUILD=$1
SRC=$2
SECONDS_EACH=$3
ART=$BUILD/fuzz-artifacts
mkdir -p "$ART"
for target in decode config; do
	work=$BUILD/fuzz-corpus/$target
	rm -rf "$work"
	mkdir -p "$work"
	cp "$SRC/tests/fuzz/corpus/$target/"* "$work/"
	for f in "$SRC/tests/fuzz/regressions/$target/"*; do
		if [ -f "$f" ]; then cp "$f" "$work/"; fi
	done
	echo "fuzz_$target: ${SECONDS_EACH}s on a copy of tests/fuzz/corpus/$target"
	if ! "$BUILD/fuzz_$target" -max_total_time="$SECONDS_EACH" -max_len=8192 \
		-dict="$SRC/tests/fuzz/$target.dict" -print_final_stats=1 \
		-artifact_prefix="$ART/$target-" "$work" >"$BUILD/fuzz-$target.log" 2>&1; then
		tail -n 60 "$BUILD/fuzz-$target.log" >&2
		echo "FAIL: fuzz_$target found a failing input (see $ART/; add it to" \
			"tests/fuzz/regressions/$target/ with the fix)" >&2
		exit 1
	fi
	grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' \
		"$BUILD/fuzz-$target.log" || true
	echo "fuzz_$target: corpus grew from $(ls "$SRC/tests/fuzz/corpus/$target" | wc -l)" \
		"to $(ls "$work" | wc -l) inputs"
done
