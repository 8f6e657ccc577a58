#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Where a round's CPU goes at one value outstanding (64 B): Paxos (3 acceptors, 1 proposer)
# and the serializer each run COUNT values under perf (call graphs), and for each role
# process this prints its CPU per value, its wake-ups per value (voluntary context switches)
# and the share of its samples under each system call it makes per round: sendmmsg (with
# the kernel's local delivery to every receiving socket, wake-ups of the receivers
# included), epoll_wait (the loop's sleep and wake-up) and recvmmsg, the rest being the
# libraries' own work and timers. With BASE_BUILD=DIR the Paxos of that build runs too,
# first, with BASE_CONF (default this tree's paxos.conf; give the base's own when it lacks keys
# of this one). ROUNDS (default 1) repeats the lot, interleaved.
# Usage: bench/round-profile.sh BUILD_DIR [COUNT]
set -eu
BUILD=$(cd "$1" && pwd)
COUNT=${2:-20000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
command -v perf >/dev/null || {
	echo "round-profile.sh: needs perf (apt-get install linux-perf)" >&2
	exit 1
}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SYSTEMS="paxos serializer"
[ -z "${BASE_BUILD:-}" ] || SYSTEMS="base $SYSTEMS"

# share FILE SYMBOL: the percentage of FILE's samples with SYMBOL on their call chain.
share() {
	perf report -i "$1" --children --sort sym --stdio 2>/dev/null |
		awk -v s="$2" '$1 ~ /%$/ && $NF == s { sub("%", "", $1); print $1; found = 1; exit }
			END { if (!found) print 0 }'
}

echo "round system process us/value wake-ups/value sendmmsg% epoll_wait% recvmmsg% rest%"
r=1
while [ "$r" -le "${ROUNDS:-1}" ]; do
	for system in $SYSTEMS; do
		build=$BUILD sys=$system conf=$SRC/paxos.conf
		[ "$system" = base ] && build=$(cd "$BASE_BUILD" && pwd) sys=paxos \
			conf=${BASE_CONF:-$conf}
		rm -rf "$TMP/logs" "$TMP/perf" && mkdir "$TMP/logs" "$TMP/perf"
		PAXOS_CONF=$conf PAXOS_SYSTEM=$sys PAXOS_LOG_DIR=$TMP/logs PAXOS_PERF_DIR=$TMP/perf \
			PAXOS_PERF_OPTIONS=-g "$SRC/bench/cluster-client.sh" "$build" \
			--count "$COUNT" --size 64 --outstanding 1 >"$TMP/out" 2>&1 || true
		delivered=$(sed -n 's/^delivered \([0-9]*\) of.*/\1/p' "$TMP/out")
		[ -n "$delivered" ] && [ "$delivered" -gt 0 ] || {
			echo "round-profile.sh: $system delivered nothing" >&2
			cat "$TMP/out" >&2
			exit 1
		}
		while read -r name ns hz; do
			sleeps=$(awk -v n="$name" '$1 == n { print $2 }' "$TMP/logs/switches.log")
			f=$TMP/perf/$name.data
			send=$(share "$f" __sendmmsg) wait=$(share "$f" epoll_wait)
			recv=$(share "$f" __recvmmsg)
			awk -v r="$r" -v s="$system" -v n="$name" -v ns="$ns" -v hz="$hz" \
				-v d="$delivered" -v w="${sleeps:-0}" -v a="$send" -v b="$wait" \
				-v c="$recv" 'BEGIN {
				printf "%s %s %s %.2f %.2f %.1f %.1f %.1f %.1f\n", r, s, n,
					ns * 1e6 / hz / d, w / d, a, b, c, 100 - a - b - c }'
		done <"$TMP/logs/cpu.log"
	done
	r=$((r + 1))
done
