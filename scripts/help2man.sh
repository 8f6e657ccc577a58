#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Writes the manual page of an installed binary with help2man, from the binary's own --help,
# so the page always says what the program does. The version comes from the build (the one
# the binaries' --version prints, with the wire version after it, which help2man would take
# for part of the version string). The one-line NAME description is the first
# sentence after the usage lines, up to its first colon, semicolon or parenthesis.
# Usage: help2man.sh BINARY VERSION OUTPUT [SEE_ALSO_PAGE...]   (e.g. paxos.conf.5)
set -eu
BIN=$1
VERSION=$2
OUT=$3
shift 3
name=$("$BIN" --help | awk '
	/^Usage:/ || /^ *or:/ || /^[ \t]/ { if (text) exit; next }
	{ text = text (text ? " " : "") $0; if ($0 ~ /\.$/) exit }
	END { print text }' | sed -e 's/\. .*//' -e 's/\.$//' -e 's/[:;] .*//' -e 's/ (.*//')
[ -n "$name" ] || {
	echo "help2man.sh: $BIN --help has no description line" >&2
	exit 1
}
INCLUDE=$(mktemp)
trap 'rm -f "$INCLUDE"' EXIT
if [ $# -gt 0 ]; then
	printf '[SEE ALSO]\n' >"$INCLUDE"
	n=0
	for page in "$@"; do
		n=$((n + 1))
		comma=","
		[ $n -lt $# ] || comma=""
		printf '.BR %s (%s)%s\n' "${page%.*}" "${page##*.}" "$comma" >>"$INCLUDE"
	done
fi
help2man --no-info --no-discard-stderr --version-string="$VERSION" --name="$name" \
	--include="$INCLUDE" --output="$OUT" "$BIN"
