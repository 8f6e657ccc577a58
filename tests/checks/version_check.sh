#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every installed binary, and the kvstore sample's, answers --version with one line
# "NAME (libpaxos) VERSION, wire version N" and exits 0: VERSION is the project's (CMake), N the
# codec's PAXOS_WIRE_VERSION. The binaries are the ones cmake --install puts in a scratch prefix.
# Usage: version_check.sh BUILD_DIR SOURCE_DIR VERSION
set -eu
BUILD=$1
SRC=$2
VERSION=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
WIRE=$(sed -n 's/^#define PAXOS_WIRE_VERSION \([0-9]*\)u*$/\1/p' "$SRC/lib/net/codec.h")
[ -n "$WIRE" ] || { echo "FAIL: no PAXOS_WIRE_VERSION in lib/net/codec.h"; exit 1; }
fail=0
n=0
for bin in "$WORK"/prefix/bin/* "$BUILD"/sample/kvstore/kvstore-replica \
	"$BUILD"/sample/kvstore/kvstore-cli "$BUILD"/sample/kvstore/kvstore-load; do
	n=$((n + 1))
	name=$(basename "$bin")
	want="$name (libpaxos) $VERSION, wire version $WIRE"
	if ! got=$(env -u LD_LIBRARY_PATH "$bin" --version 2>&1); then
		echo "FAIL: $name --version exits with an error: $got"
		fail=1
	elif [ "$got" != "$want" ]; then
		echo "FAIL: $name --version says '$got', not '$want'"
		fail=1
	fi
done
# acceptor, proposer, learner, serializer, replica, client, monitor, storage-bench, oracle,
# keygen, limit and the three kvstore programs
[ "$n" -ge 14 ] || { echo "FAIL: only $n binaries found"; exit 1; }
[ "$fail" = 0 ] || exit 1
echo "version_check: $n binaries say $VERSION, wire version $WIRE"
