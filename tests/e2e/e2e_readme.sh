#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The README's local cluster ("A local cluster in five minutes"), as written there, inside a
# private network namespace: every command of its block, with the shipped paxos.conf (its
# storage-path moved into a scratch directory). The roles start in the background, the client
# must get its values delivered and the learner write them as "INSTANCE HEX" lines from
# instance 1. Then what the README says to try: with proposer 0 stopped, proposer 1 leads and
# a new client is served, and paxos-admin status answers.
# Usage: e2e_readme.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$(PAXOS_TRANSPORT=multicast base_conf)
awk '/^## A local cluster in five minutes/ { s = 1 } s && /^```sh$/ { c = 1; next }
	c && /^```$/ { exit } c { sub(/[[:blank:]]+#.*/, ""); if (NF) print }' \
	"$SRC/README.md" >"$WORK/commands"
[ "$(wc -l <"$WORK/commands")" -ge 4 ] || fail "no command block in README.md's local cluster"

client=""
n=0
while read -r binary args; do
	case $binary in
	build/paxos-*) ;;
	*) fail "README.md's local cluster runs $binary, not a binary of build/" ;;
	esac
	# shellcheck disable=SC2086
	set -- $args
	line=""
	for arg in "$@"; do
		case $arg in
		paxos.conf) arg=$CONF ;;
		out.txt) arg=$WORK/out.txt ;;
		esac
		line="$line $arg"
	done
	role=${binary#build/paxos-}
	if [ "$role" = client ]; then
		client=$line
		continue
	fi
	n=$((n + 1))
	case "$role $*" in
	"proposer -c paxos.conf -i 0") proposer0=$role$n ;;
	esac
	# shellcheck disable=SC2086
	start "$role$n" "paxos-$role" $line
done <"$WORK/commands"
[ -n "$client" ] || fail "README.md's local cluster runs no paxos-client"
[ -n "${proposer0:-}" ] || fail "README.md's local cluster starts no proposer 0"
count=$(echo "$client" | sed -n 's/.*--count \([0-9]*\).*/\1/p')
[ -n "$count" ] || fail "README.md's client has no --count"

# shellcheck disable=SC2086
"$BUILD/paxos-client" $client --time-limit 120 >"$WORK/client.log" 2>&1 ||
	fail "the README's client did not get its $count values delivered"
wait_lines "$WORK/out.txt" "$count" 30 || fail "the learner wrote fewer than $count lines"
consecutive "$WORK/out.txt" || fail "the learner's instances are not consecutive from 1"
grep -q '^[0-9][0-9]* [0-9a-f][0-9a-f]*$' "$WORK/out.txt" ||
	fail "the learner's lines are not \"INSTANCE HEX\""
echo "e2e_readme: $(grep -c . "$WORK/commands") commands; $count values delivered," \
	"$(sed -n 's/^\(resubmits [0-9]*, duplicates [0-9]*\).*/\1/p' "$WORK/client.log")"

stop_one "$proposer0"
"$BUILD/paxos-client" -c "$CONF" --count 1000 --size 64 --outstanding 64 --time-limit 120 \
	>"$WORK/client2.log" 2>&1 || fail "with proposer 0 stopped, a client was not served"
"$BUILD/paxos-admin" -c "$CONF" status >"$WORK/admin.log" 2>&1 ||
	fail "paxos-admin status failed: $(cat "$WORK/admin.log")"
echo "e2e_readme: proposer 0 stopped: 1000 more values delivered; paxos-admin status answers"
stop_all
