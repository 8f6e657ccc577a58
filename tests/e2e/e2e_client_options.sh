#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# paxos-client names the option it rejects and the value it got, and exits 2 before it
# sends anything. Usage: e2e_client_options.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CONF=$SRC/paxos.conf
failures=0

# rejects 'EXPECTED STDERR' ARGS...: paxos-client ARGS exits 2 saying exactly that
rejects() {
	want=$1
	shift
	rc=0
	"$BUILD/paxos-client" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	got=$(cat "$WORK/err")
	if [ "$rc" -ne 2 ] || [ "$got" != "$want" ] || [ -s "$WORK/out" ]; then
		echo "FAIL: paxos-client $*: exit $rc, said '$got', want '$want'" >&2
		failures=$((failures + 1))
	fi
}

P=paxos-client
rejects "$P: --count: expected a number in 1..100000000, not 'abc'" -c "$CONF" -n abc
rejects "$P: --count: expected a number in 1..100000000, not '0'" -c "$CONF" --count 0
rejects "$P: --count: expected a number in 1..100000000, not '-5'" -c "$CONF" --count=-5
rejects "$P: --outstanding: expected a number in 1..100000, not '100001'" -c "$CONF" -k 100001
rejects "$P: --rate: expected a number in 1..10000000, not '1e3'" -c "$CONF" --rate 1e3
rejects "$P: --resubmit-ms: expected a number in 1..3600000, not ' 5'" -c "$CONF" -r " 5"
rejects "$P: --time-limit: expected a number in 1..86400, not '99999'" -c "$CONF" -t 99999
rejects "$P: --warmup-ms: expected a number in 0..3600000, not '1s'" -c "$CONF" --warmup-ms 1s
rejects "$P: --id: expected a number in 0..4294967295, not '4294967296'" -c "$CONF" \
	--id 4294967296
SIZE="expected N or MIN-MAX bytes, each 16..8124 (max-datagram 8192)"
rejects "$P: --size: $SIZE, not 'abc'" -c "$CONF" --size abc
rejects "$P: --size: $SIZE, not '8'" -c "$CONF" -s 8
rejects "$P: --size: $SIZE, not '100-50'" -c "$CONF" --size 100-50
rejects "$P: --size: $SIZE, not '64-99999'" -c "$CONF" --size 64-99999
rejects "$P: --size: $SIZE, not '64-'" -c "$CONF" --size 64-
rejects "$P: unknown option '--bogus' (see --help)" -c "$CONF" --bogus
rejects "$P: unknown option '-x' (see --help)" -c "$CONF" -x
rejects "$P: --json=yes: takes no value (see --help)" -c "$CONF" --json=yes
rejects "$P: --count: needs a value (see --help)" -c "$CONF" --count
rejects "$P: -n: needs a value (see --help)" -c "$CONF" -n
rejects "$P: unexpected argument 'extra' (options take the forms in --help)" -c "$CONF" extra
rejects "$P: -c/--config FILE is required (see --help)" -n 5
# Partitions: ids beyond paxos.conf's, and the ways to spread over them.
sed -e "s|^partitions .*|partitions 2|" "$CONF" >"$WORK/p2.conf"
rejects "$P: --partition: expected a number in 0..0, not '1'" -c "$CONF" --partition 1
rejects "$P: --partition: expected a number in 0..1, not '2'" -c "$WORK/p2.conf" --partition 2
rejects "$P: --partitions: expected a number in 1..2, not '3'" -c "$WORK/p2.conf" \
	--partitions 3
rejects "$P: --partition and --partitions exclude each other" -c "$WORK/p2.conf" \
	--partition 1 --partitions 2
rejects "$P: --spread needs --partitions N" -c "$WORK/p2.conf" --spread key
rejects "$P: --keys needs --partitions N" -c "$WORK/p2.conf" --keys 10
rejects "$P: --spread: expected rr or key, not 'hash'" -c "$WORK/p2.conf" --partitions 2 \
	--spread hash
rejects "$P: --keys needs --spread key" -c "$WORK/p2.conf" --partitions 2 --keys 10
rejects "$P: --keys: expected a number in 1..18446744073709551615, not '0'" \
	-c "$WORK/p2.conf" --partitions 2 --spread key --keys 0
[ "$failures" -eq 0 ] || exit 1
echo "e2e_client_options: every rejected option is named with its value"
