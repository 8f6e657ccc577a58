#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# What auth-key-file costs: Paxos (3 acceptors, proposer 0, one client, memory storage, 64
# values outstanding) without and with a key (cluster-client.sh PAXOS_AUTH=1), at 64 B and
# 1000 B, ROUNDS rounds (default 3) interleaved: every combination runs once per round, in
# turn. With BASE_BUILD=DIR the same runs of another build (e.g. the previous datagram tag)
# join each round. For each run: values/s, p50/p99 and each process's CPU time (user +
# system, /proc/PID/stat at the end; the client's from getrusage) per delivered value, and
# their sum ("all"). Then medians, and the ratios with a key to without of values/s and of
# "all", per build and size. This build runs with a key twice: with auth-mac's default
# (key "yes": AES-256-GCM on a CPU with AES-NI) and with auth-mac chacha20-poly1305 (key
# "chacha"); MACS="" leaves the second out. On a loaded machine values/s varies much from run to run (five
# processes share the cores with others); CPU per value varies less.
# Usage: [BASE_BUILD=DIR] [AUTH_SIZES="64 1000"] bench/auth.sh BUILD_DIR [ROUNDS] [OUT_DIR]
# Writes auth.csv and auth.md to BUILD_DIR/bench-results/<date>/ (or OUT_DIR, or $BENCH_OUT).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$SRC/bench/lib.sh"
bench_setup "$1" "${3:-}"
ROUNDS=${2:-3}
BUILDS="new"
[ -z "${BASE_BUILD:-}" ] || BUILDS="base new"
# size count; AUTH_SIZES="64" (say) keeps only the sizes it lists
SIZES="64 500000
1000 200000"
[ -z "${AUTH_SIZES:-}" ] ||
	SIZES=$(echo "$SIZES" | awk -v keep=" $AUTH_SIZES " 'index(keep, " " $1 " ")')
PROCS="acceptor0 acceptor1 acceptor2 proposer0 client"
conf=$(bench_conf auth)

# run BUILD AUTH SIZE COUNT: prints "values/s p50 p99" and the us/value of each of $PROCS
run() {
	build=$BUILD
	[ "$1" = base ] && build=$(cd "$BASE_BUILD" && pwd)
	rm -rf "$TMP/logs" && mkdir "$TMP/logs"
	mac=
	[ "$2" != 2 ] || mac=chacha20-poly1305
	PAXOS_CONF=$conf PAXOS_AUTH=$((${2} > 0)) PAXOS_AUTH_MAC=$mac PAXOS_LOG_DIR=$TMP/logs \
		"$SRC/bench/cluster-client.sh" \
		"$build" --count "$4" --size "$3" --outstanding 64 >"$TMP/out" 2>"$TMP/err" || true
	rate=$(sed -n 's/.*: \([0-9]*\) values\/s$/\1/p' "$TMP/out")
	p50=$(sed -n 's/.* p50 \([0-9.]*\) .*/\1/p' "$TMP/out")
	p99=$(sed -n 's/.* p99 \([0-9.]*\) .*/\1/p' "$TMP/out")
	delivered=$(sed -n 's/^delivered \([0-9]*\) of.*/\1/p' "$TMP/out")
	client=$(sed -n 's/^client cpu \([0-9.]*\) s.*/\1/p' "$TMP/out")
	cpu=$(for p in $PROCS; do
		if [ "$p" = client ]; then
			awk -v c="${client:-0}" -v d="${delivered:-0}" \
				'BEGIN { printf "%.3f ", (d > 0 ? c * 1e6 / d : 0) }'
		else
			awk -v p="$p" -v d="${delivered:-0}" \
				'$1 == p { us = d > 0 ? $2 * 1e6 / $3 / d : 0 } END { printf "%.3f ", us }' \
				"$TMP/logs/cpu.log" 2>/dev/null || printf "0 "
		fi
	done)
	all=$(echo "$cpu" | awk '{ for (i = 1; i <= NF; i++) s += $i; printf "%.3f", s }')
	echo "${rate:-0} ${p50:-0} ${p99:-0} $cpu$all"
}

CSV=$OUT/auth.csv
echo "round,size_b,build,key,values_per_s,p50_ms,p99_ms,$(echo $PROCS all | sed 's/\([a-z0-9]*\)/\1_us_per_value/g; s/ /,/g')" >"$CSV"
r=1
while [ $r -le "$ROUNDS" ]; do
	echo "$SIZES" | while read -r size count; do
		# Every other round in the reverse order: neither side always runs first.
		builds=$BUILDS keys="0 1 2"
		[ $((r % 2)) = 1 ] || builds=$(echo $BUILDS | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }') keys="2 1 0"
		for build in $builds; do
			for key in $keys; do
				# the base may not know auth-mac: it runs without a key and with its own
				[ "$key" != 2 ] || { [ "$build" = new ] && [ "${MACS-chacha}" = chacha ]; } || continue
				line="$r,$size,$build,$(echo $key | sed 's/0/no/; s/1/yes/; s/2/chacha/'),$(run "$build" $key "$size" "$count" | tr ' ' ',' | sed 's/,$//')"
				echo "$line" >>"$CSV"
				echo "$line"
			done
		done
	done
	r=$((r + 1))
done

# median SIZE BUILD KEY COLUMN
median() {
	awk -F, -v s="$1" -v b="$2" -v k="$3" -v c="$4" 'NR > 1 && $2 == s && $3 == b && $4 == k { print $c }' "$CSV" |
		sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
# ratio SIZE BUILD COLUMN: the median with a key over the median without
ratio() {
	awk -v a="$(median "$1" "$2" "${4:-yes}" "$3")" -v b="$(median "$1" "$2" no "$3")" \
		'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}
{
	echo "Medians of $ROUNDS interleaved rounds ($(nproc) cores, $(uname -r), load average before the summary: $(cut -d' ' -f1-3 /proc/loadavg)); CPU in us per delivered value:"
	echo
	echo "| size | build | key | values/s | p50 ms | p99 ms | $(echo $PROCS all | sed 's/ / | /g') |"
	echo "| --- | --- | --- | --- | --- | --- |$(for p in $PROCS all; do printf ' --- |'; done)"
	echo "$SIZES" | while read -r size count; do
		for build in $BUILDS; do
			for key in no yes chacha; do
				[ -n "$(median "$size" "$build" $key 5)" ] || continue
				line="| $size B | $build | $key |"
				c=5
				for col in values p50 p99 $PROCS all; do
					line="$line $(median "$size" "$build" $key $c) |"
					c=$((c + 1))
				done
				echo "$line"
			done
		done
	done
	echo
	# the column of "all": the last
	all=$(head -n 1 "$CSV" | awk -F, '{ print NF }')
	echo "| size | build | values/s with a key / without | CPU per value (all processes) with a key / without |"
	echo "| --- | --- | --- | --- |"
	echo "$SIZES" | while read -r size count; do
		for build in $BUILDS; do
			echo "| $size B | $build | $(ratio "$size" "$build" 5) | $(ratio "$size" "$build" "$all") |"
			[ "$build" != new ] || [ "${MACS-chacha}" != chacha ] ||
				echo "| $size B | new, chacha20-poly1305 | $(ratio "$size" new 5 chacha) | $(ratio "$size" new "$all" chacha) |"
		done
	done
} >"$OUT/auth.md"
echo
cat "$OUT/auth.md"
