#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A whole memory cluster with two partitions (paxos.conf "partitions 2") restarted, inside a
# private network namespace: each partition is a log of its own, with its own generation files
# (storage-path/partition-1/acceptor-N/generation; partition 0's are where an unpartitioned
# cluster keeps them). 3 acceptors and 2 proposers serve both; a client submits to both
# partitions; then every acceptor and proposer is stopped with SIGTERM and started again on the
# same files. Both partitions begin a new log, generation G above every one kept (1 after a
# first start that left every acceptor in generation 0). A learner hosting both partitions
# (learner-merge no) that ran through the restart says "P new log G" for each partition P
# before it delivers anything of that partition's new log, which it delivers from instance 1.
# A learner with learner-merge yes cannot put a second log of a partition into the merged
# order: it stops with an error that says so, and delivers nothing of the new logs.
# Usage: e2e_new_log_partitions.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
MCONF=$WORK/merge.conf
sed -e "s|^partitions .*|partitions 2|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 200|" "$(base_conf)" >"$CONF"
sed -e "s|^learner-merge .*|learner-merge yes|" "$CONF" >"$MCONF"
grep -q "^partitions 2$" "$CONF" && grep -q "^storage *memory" "$CONF" &&
	grep -q "^learner-merge yes" "$MCONF" || fail "cannot write the test configurations"

# The acceptors and proposers run with learner-merge yes: an idle leader closes instances
# with skips, so the merged learner moves on (the other learner is not concerned).
start_cluster() { # start_cluster SUFFIX
	for i in 0 1; do start "proposer$i$1" paxos-proposer -c "$MCONF" -i $i; done
	for i in 0 1 2; do start "acceptor$i$1" paxos-acceptor -c "$MCONF" -i $i; done
}
stop_cluster() { # stop_cluster SUFFIX
	for name in proposer0 proposer1 acceptor0 acceptor1 acceptor2; do stop_one "$name$1"; done
}
# lines_of FILE P: partition P's lines of a learner's output, without the partition
lines_of() { sed -n "s/^$2 //p" "$1"; }

start_cluster a
start learner paxos-learner -c "$CONF" -o "$WORK/learner.out"
start merged paxos-learner -c "$MCONF" -o "$WORK/merged.out"
"$BUILD/paxos-client" -c "$CONF" --partitions 2 --count 1000 --outstanding 16 --size 32 \
	--time-limit 60 >"$WORK/client0.log" 2>&1 || fail "the first start did not deliver 1000 values"
for f in learner merged; do
	i=0
	until [ "$(lines_of "$WORK/$f.out" 0 | wc -l)" -gt 0 ] &&
		[ "$(lines_of "$WORK/$f.out" 1 | wc -l)" -gt 0 ] &&
		[ "$(wc -l <"$WORK/$f.out")" -ge 1000 ]; do
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "$f did not deliver both partitions' values"
		sleep 0.1
	done
done
echo "e2e_new_log_partitions: first start: 1000 values over both partitions, the learners wrote $(wc -l <"$WORK/learner.out") and $(wc -l <"$WORK/merged.out") lines"

stop_cluster a
start_cluster b
"$BUILD/paxos-client" -c "$CONF" --partitions 2 --count 1000 --outstanding 16 --size 32 \
	--time-limit 60 >"$WORK/client1.log" 2>&1 ||
	fail "after the restart the client did not get 1000 values delivered"
# new_generation P: ng, the generation partition P's acceptors began at the restart (one above
# every generation they kept).
new_generation() {
	ng_i=0
	until ng=$(sed -n "s/.*partition $1: every acceptor lost the log of generation [0-9]*, .*began a new log, generation \([0-9]*\), .*/\1/p" \
		"$WORK"/acceptor?b.log | sort -u) && [ -n "$ng" ]; do
		ng_i=$((ng_i + 1))
		[ "$ng_i" -le 300 ] || fail "no acceptor began partition $1's new log"
		sleep 0.1
	done
	[ "$(echo "$ng" | wc -l)" -eq 1 ] || fail "partition $1's acceptors began several logs: $ng"
}
for p in 0 1; do
	new_generation $p
	g=$ng
	eval "G$p=$ng"
	old=$(sed -n "s/.*partition $p: recovered: .*(log generation \([0-9]*\))/\1/p" \
		"$WORK"/acceptor?a.log | sort -n | tail -n 1)
	[ "$g" -gt "${old:-0}" ] || fail "partition $p's new log $g is not above its old one ${old:-0}"
	for i in 0 1 2; do wait_log "acceptor${i}b" "acceptor $i partition $p: recovered: .*(log generation $g)"; done
done
for i in 0 1 2; do
	for dir in "$WORK/store/acceptor-$i" "$WORK/store/partition-1/acceptor-$i"; do
		g=$G0
		[ "$dir" = "$WORK/store/acceptor-$i" ] || g=$G1
		[ "$(cat "$dir/generation" 2>/dev/null)" = "$g" ] ||
			fail "$dir/generation does not say $g: $(cat "$dir/generation" 2>/dev/null)"
	done
done

# The learner that ran through: each partition's "P new log G" once, before that
# partition's new log, which runs from instance 1.
for p in 0 1; do
	eval "g=\$G$p"
	i=0
	until grep -q "^$p new log $g\$" "$WORK/learner.out" &&
		[ "$(sed -n "/^$p new log $g\$/,\$p" "$WORK/learner.out" | grep -c "^$p [0-9]")" -gt 0 ]; do
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "the learner did not deliver partition $p's new log"
		sleep 0.1
	done
	# Once; a generation no quorum served may come first (a learner moves to what a quorum
	# reports at least), but nothing is delivered in it.
	awk -v p="$p" -v g="$g" '$1 == p && $2 == "new" { on = $4 + 0 != g; next }
		on && $1 == p { bad = 1 } END { exit bad }' "$WORK/learner.out" ||
		fail "the learner delivered partition $p's values between its new logs"
	grep "^$p new log" "$WORK/learner.out" | awk -v g="$g" '$4 + 0 > g || $4 + 0 <= prev { bad = 1 }
		{ prev = $4 + 0 } END { exit bad || prev != g }' ||
		fail "the learner's new logs of partition $p are not ascending to $g: $(grep "^$p new log" "$WORK/learner.out" | tr '\n' ' ')"
	sed -n "/^$p new log $g\$/,\$p" "$WORK/learner.out" | sed -n "s/^$p \([0-9]\)/\1/p" \
		>"$WORK/new$p.out"
	sed -n "1,/^$p new log $g\$/p" "$WORK/learner.out" | sed -n "s/^$p \([0-9]\)/\1/p" \
		>"$WORK/old$p.out"
	# With learner-merge yes the leaders close idle instances with skips, which this learner
	# does not write: the instances go up, from the new log's first ones again.
	awk 'NR > 1 && $1 < prev { print "instance " $1 " at line " NR; bad = 1; exit }
		{ prev = $1 } END { exit bad }' "$WORK/new$p.out" ||
		fail "partition $p's new log is not delivered in order"
	first=$(head -n 1 "$WORK/new$p.out" | cut -d' ' -f1)
	last=$(tail -n 1 "$WORK/old$p.out" | cut -d' ' -f1)
	[ "$first" -lt "$last" ] ||
		fail "partition $p's new log starts at instance $first, the old one ended at $last"
	wait_log learner "learner partition $p: the acceptors began a new log (generation $g)"
done
i=0
until [ "$(grep -c '^[01] [0-9]' "$WORK/learner.out")" -ge 2000 ]; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "the learner did not deliver the second 1000 values"
	sleep 0.1
done
echo "e2e_new_log_partitions: learner-merge no: \"0 new log $G0\" and \"1 new log $G1\", each before its partition's new log, delivered from its first instances again ($(wc -l <"$WORK/new0.out") and $(wc -l <"$WORK/new1.out") values)"

# The merged learner: stopped with the reason, nothing of a new log in its order.
i=0
while kill -0 "$PID_merged" 2>/dev/null; do
	i=$((i + 1))
	[ "$i" -le 300 ] || fail "the merged learner did not stop at the new log"
	sleep 0.1
done
if wait "$PID_merged"; then fail "the merged learner stopped with status 0"; fi
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$PID_merged" | tr '\n' ' ')
grep -q "learner-merge: partition [01] began a new log (generation [0-9]*).*this learner stops" \
	"$WORK/merged.log" || fail "the merged learner did not say why it stopped"
merged_lines=$(grep -c '^[01] [0-9]' "$WORK/merged.out")
[ "$merged_lines" -le 1000 ] || fail "the merged learner delivered $merged_lines values, more than the old logs held"
echo "e2e_new_log_partitions: learner-merge yes: stopped, $(grep -m 1 -o 'learner-merge: partition [01] began a new log[^:]*' "$WORK/merged.log")"
stop_all
