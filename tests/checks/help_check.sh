#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every program the project builds answers -h and --help with its usage on stdout ("Usage:"
# first), nothing on stderr, and exit status 0: the binaries cmake --install puts in a scratch
# prefix, the kvstore sample's, the test tools and benchmark helpers (paxos-send,
# paxos-witness, ...) and the API examples. A role binary missing its -i says so before the
# usage.
# Usage: help_check.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
fail=0
n=0
for bin in "$WORK"/prefix/bin/* "$BUILD"/sample/kvstore/kvstore-* "$BUILD"/paxos-* \
	"$BUILD"/example_*; do
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	name=$(basename "$bin")
	for option in --help -h; do
		n=$((n + 1))
		status=0
		env -u LD_LIBRARY_PATH "$bin" "$option" >"$WORK/out" 2>"$WORK/err" </dev/null || status=$?
		if [ "$status" != 0 ]; then
			echo "FAIL: $name $option exits with $status: $(head -n 3 "$WORK/err")"
			fail=1
		elif ! head -n 1 "$WORK/out" | grep -qi '^usage: '; then
			echo "FAIL: $name $option prints no usage on stdout: $(head -n 1 "$WORK/out")"
			fail=1
		elif [ -s "$WORK/err" ]; then
			echo "FAIL: $name $option writes to stderr: $(head -n 3 "$WORK/err")"
			fail=1
		fi
	done
done
# the installed role binaries (5), the other installed programs, the kvstore sample's three, the
# test tools, two benchmark helpers and the three examples: each twice
[ "$n" -ge 50 ] || { echo "FAIL: only $n runs: binaries missing from $BUILD?"; exit 1; }

# A command line without a required option names it first.
for case in "paxos-acceptor:-c $SRC/paxos.conf:missing -i ID" \
	"paxos-proposer:-c $SRC/paxos.conf:missing -i ID" "paxos-learner::missing -c FILE"; do
	name=${case%%:*}
	rest=${case#*:}
	args=${rest%%:*}
	want=${rest#*:}
	status=0
	# shellcheck disable=SC2086
	"$WORK/prefix/bin/$name" $args >/dev/null 2>"$WORK/err" || status=$?
	first=$(head -n 1 "$WORK/err")
	if [ "$status" != 2 ] || ! printf '%s\n' "$first" | grep -q "^$name: $want"; then
		echo "FAIL: $name $args: exit $status, first line '$first', not '$name: $want ...'"
		fail=1
	fi
done
[ "$fail" = 0 ] || exit 1
echo "help_check: $n runs of -h and --help print the usage and exit 0; missing options named"
