#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Partitions against one log: 2 proposers and 3 acceptors per partition, each partition with
# acceptors of its own (partition-acceptors spread: 3 acceptors for 1 partition, 6 for 2, 12
# for 4; SPREAD=no: 3 acceptors serving every partition, as without acceptor sets) (memory
# storage, multicast, inside a private network namespace); one paxos-client per partition,
# each with 64 values outstanding, for SECONDS. Rounds interleave the configurations (the
# machine's noise hits both alike); each line is the median of ROUNDS.
# For each run: values/s delivered (all clients), and the CPU time per delivered value of every
# process (user + system from /proc/PID/stat at the end of the run); "busiest" is the
# largest among the acceptors and proposers, and 1 / busiest the rate one host per process
# could reach ("projected"): on one machine every process shares the same cores.
# Latency: the median over the clients of each one's p50 and the largest p99.
# PARTS="1 2 4" chooses the partition counts; MERGE=yes runs them with learner-merge (the
# leaders' skips included; the clients learn their partition alone as before).
# Usage: bench/partitions.sh BUILD_DIR [SIZE [SECONDS [ROUNDS]]]   (defaults 64 5 3)
set -eu
[ -z "${BENCH_TRACE:-}" ] || set -x
BUILD=$(cd "$1" && pwd)
SIZE=${2:-64}
SECS=${3:-5}
ROUNDS=${4:-3}
PARTS=${PARTS:-1 2 4}
MERGE=${MERGE:-no}
SPREAD=${SPREAD:-yes}
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	export PARTS MERGE SPREAD
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD" "$SIZE" "$SECS" "$ROUNDS"
fi
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
TICK=$(getconf CLK_TCK)

cpu_ticks() { # cpu_ticks PID: user + system time so far, in clock ticks
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# run PARTITIONS ROUND: one run; appends "values_per_s busiest_us acceptor_us proposer_us
# clients_us" to $WORK/p$PARTITIONS (CPU per delivered value: the busiest acceptor, the
# busiest proposer, all clients together)
run() {
	conf=$WORK/p$1.conf
	accs=3
	sets=all
	if [ "$SPREAD" = yes ]; then
		accs=$((3 * $1))
		sets=spread
	fi
	sed -e "s|^partitions .*|partitions $1|" -e "s|^storage-path .*|storage-path $WORK/store$1.$2|" \
		-e "s|^acceptors .*|acceptors $accs|" -e "s|^partition-acceptors .*|partition-acceptors $sets|" \
		-e "s|^learner-merge .*|learner-merge $MERGE|" \
		-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$SRC/paxos.conf" >"$conf"
	PIDS=""
	i=0
	while [ $i -lt $accs ]; do
		start acceptor$i paxos-acceptor -c "$conf" -i $i
		i=$((i + 1))
	done
	for i in 0 1; do start proposer$i paxos-proposer -c "$conf" -i $i; done
	sleep 0.5
	clients=""
	p=0
	while [ $p -lt "$1" ]; do
		"$BUILD/paxos-client" -c "$conf" --partition $p --count 100000000 --outstanding 64 \
			--size "$SIZE" --time-limit "$SECS" --json >"$WORK/client$p.json" 2>/dev/null &
		clients="$clients $!"
		p=$((p + 1))
	done
	# The clients' own CPU, read just before they end.
	sleep "$SECS"
	client_ticks=0
	for pid in $clients; do
		t=$(cpu_ticks "$pid" 2>/dev/null || echo 0)
		client_ticks=$((client_ticks + t))
	done
	for pid in $clients; do wait "$pid" || true; done
	acc=0
	i=0
	while [ $i -lt $accs ]; do
		eval "t=\$(cpu_ticks \$PID_acceptor$i)"
		[ "$t" -gt "$acc" ] && acc=$t
		i=$((i + 1))
	done
	prop=0
	for i in 0 1; do
		eval "t=\$(cpu_ticks \$PID_proposer$i)"
		[ "$t" -gt "$prop" ] && prop=$t
	done
	stop_all
	delivered=0
	rate=0
	p50s=""
	p99=0
	for f in "$WORK"/client*.json; do
		d=$(sed -n 's/.*"delivered":\([0-9]*\).*/\1/p' "$f" | head -n 1)
		per_s=$(sed -n 's/.*"values_per_s":\([0-9.]*\).*/\1/p' "$f" | head -n 1)
		delivered=$((delivered + ${d:-0}))
		rate=$(awk -v a="$rate" -v b="${per_s:-0}" 'BEGIN { printf "%.0f", a + b }')
		p50s="$p50s $(sed -n 's/.*"p50":\([0-9.]*\).*/\1/p' "$f" | head -n 1)"
		p99=$(sed -n 's/.*"p99":\([0-9.]*\).*/\1/p' "$f" | head -n 1 |
			awk -v m="$p99" '{ print ($1 > m ? $1 : m) }')
	done
	rm -f "$WORK"/client*.json
	[ "$delivered" -gt 0 ] || fail "no value delivered with $1 partitions"
	p50=$(echo "$p50s" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	awk -v r="$rate" -v d="$delivered" -v a="$acc" -v p="$prop" -v c="$client_ticks" \
		-v hz="$TICK" -v l50="$p50" -v l99="$p99" 'BEGIN { us = 1e6 / hz / d; b = (a > p ? a : p) * us
		printf "%s %.3f %.3f %.3f %.3f %s %s\n", r, b, a * us, p * us, c * us, l50, l99 }' >>"$WORK/p$1"
}

median() { # median FILE COLUMN
	awk -v c="$2" '{ print $c }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

round=1
while [ $round -le "$ROUNDS" ]; do
	for p in $PARTS; do run "$p" $round; done
	round=$((round + 1))
done
echo "partitions,size,merge,values/s,busiest us/value,acceptor us/value,proposer us/value,clients us/value,projected values/s,p50 ms,p99 ms,acceptors"
for p in $PARTS; do
	busiest=$(median "$WORK/p$p" 2)
	echo "$p,$SIZE,$MERGE,$(median "$WORK/p$p" 1),$busiest,$(median "$WORK/p$p" 3),$(median "$WORK/p$p" 4),$(median "$WORK/p$p" 5),$(awk -v b="$busiest" 'BEGIN { printf "%.0f", 1e6 / b }'),$(median "$WORK/p$p" 6),$(median "$WORK/p$p" 7),$([ "$SPREAD" = yes ] && echo "$((3 * p)) spread" || echo "3 all")"
done
