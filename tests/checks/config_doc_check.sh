#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# docs/configuration.md is what scripts/conf2md.sh makes of paxos.conf: the committed reference
# cannot fall behind the file whose comments it shows. Usage: config_doc_check.sh SOURCE_DIR
set -eu
SRC=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
sh "$SRC/scripts/conf2md.sh" "$SRC/paxos.conf" "$WORK/configuration.md"
if ! diff -u "$SRC/docs/configuration.md" "$WORK/configuration.md" >"$WORK/diff"; then
	head -n 40 "$WORK/diff"
	echo "FAIL: docs/configuration.md is not up to date with paxos.conf; run"
	echo "  scripts/conf2md.sh paxos.conf docs/configuration.md"
	exit 1
fi
echo "config_doc_check: docs/configuration.md matches paxos.conf" \
	"($(grep -c '^| `' "$SRC/docs/configuration.md") keys)"
