#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A cluster whose acceptors host no learner (learning-acceptors no) changes under load
# (docs/operating.md, "Changing the cluster"): acceptors 0..3 run, 0..2 are the members at the start
# (initial-members 3, membership-alpha 256). A client submits 2000 values of 64 bytes a
# second, resubmitting only after 5 s, until every change below is done, while
#  - paxos-admin status answers (the acceptors answer configuration requests without a
#    learner);
#  - acceptor 3 is added, then removed: the acceptors learn each change from the proposers'
#    pushes (acceptor 0 logs the configuration, acceptor 3 that it was removed);
#  - multicast: set-address is refused (an acceptor is heard wherever it runs);
#  - unicast: acceptor 1 moves to another port: it is stopped, paxos-admin set-address 1
#    127.0.0.1:7291 is chosen and in force, acceptor 1 starts there without its state (memory
#    storage: it recovers, with the answers of 0 and 2, which send to its new address), acceptor
#    2 stops, and values are chosen by 0 and the moved 1 alone. Bad input is refused: an address
#    that is none, the address it has already.
# Every value is delivered once (the client counts 0 duplicates; at least once if a loaded
# machine held one 5 s, or a leader moved) and both learners write the same file.
# Usage: e2e_move.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
BASE=$(base_conf)
CONF=$WORK/move.conf
# One leader throughout (see e2e_reconfig.sh): duplicates then count what the changes cause.
sed -e 's/^acceptors .*/acceptors 4/' -e 's/^membership-alpha .*/membership-alpha 256/' \
	-e 's/^initial-members .*/initial-members 3/' \
	-e 's/^learning-acceptors .*/learning-acceptors no/' \
	-e 's/^heartbeat-timeout-ms .*/heartbeat-timeout-ms 3000/' "$BASE" >"$CONF"
grep -q '^learning-acceptors no' "$CONF" || echo "learning-acceptors no" >>"$CONF"
local_members "$CONF"

for i in 0 1 2 3; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start proposer0 paxos-proposer -c "$CONF" -i 0
start proposer1 paxos-proposer -c "$CONF" -i 1
for i in 0 1; do start learner$i paxos-learner -c "$CONF" -o "$WORK/learner$i.out"; done
sleep 0.5

: >"$WORK/submitted"
client_bg "$WORK/client.log" -c "$CONF" --count 10000000 --rate 2000 --size 64 \
	--resubmit-ms 5000 --time-limit 200 --log "$WORK/submitted"
# once LOG: the client of LOG resubmitted nothing and no leader moved (leader_moved): then it
# must count no duplicate, and true is returned; else every value at least once will do.
once() {
	grep -q "resubmits 0," "$1" && ! leader_moved "$WORK"/proposer*.log || return 1
	grep -q "resubmits 0, duplicates 0," "$1" ||
		fail "values were delivered twice: $(grep resubmits "$1")"
}

admin() { # admin WHAT ARGS...: must succeed; prints its line
	what=$1
	shift
	retry_admin "$WORK/admin.out" "$WORK/admin.err" "$BUILD/paxos-admin" -c "$CONF" "$@" ||
		fail "paxos-admin $* ($what): $(cat "$WORK/admin.err")"
	echo "e2e_move: $what: $(cat "$WORK/admin.out")"
}
refused() { # refused STATUS WHAT ARGS...: must exit with STATUS, saying why
	want=$1
	what=$2
	shift 2
	rc=0
	"$BUILD/paxos-admin" -c "$CONF" "$@" >"$WORK/admin.out" 2>"$WORK/admin.err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "paxos-admin $* ($what) exited $rc, want $want"
	echo "e2e_move: refused, $what: $(head -n 1 "$WORK/admin.err")"
}

wait_lines "$WORK/learner0.out" 2000 60 || fail "no progress before the changes"
admin "status, answered by acceptors without a learner" status
grep -q "^configuration 1 in force from instance 1: acceptors 0,1,2 " "$WORK/admin.out" ||
	fail "status does not name configuration 1 of acceptors 0,1,2"
admin "add acceptor 3" add-acceptor 3
grep -q "acceptors 0,1,2,3$" "$WORK/admin.out" || fail "acceptor 3 was not added"
wait_log acceptor0 "configuration 2 (acceptors 0,1,2,3, proposers 0,1 from instance [0-9]*), as proposer [01]'s learner applied it"
admin "remove acceptor 3" remove-acceptor 3
grep -q "acceptors 0,1,2$" "$WORK/admin.out" || fail "acceptor 3 was not removed"
wait_log acceptor3 "acceptor 3: removed: configuration 3 (acceptors 0,1,2, from instance"
stop_one acceptor3

if is_unicast "$CONF"; then
	refused 2 "an address that is none" set-address 1 nowhere
	refused 1 "the address it has already" set-address 1 127.0.0.1:7202
	stop_one acceptor1
	admin "move acceptor 1" set-address 1 127.0.0.1:7291
	grep -q "acceptor 1 at 127.0.0.1:7291$" "$WORK/admin.out" || fail "acceptor 1 was not moved"
	# Its own paxos.conf binds the new address; the others learned it from the log.
	sed -e 's/^acceptor 1 .*/acceptor 1 127.0.0.1:7291/' "$CONF" >"$WORK/moved.conf"
	start acceptor1 paxos-acceptor -c "$WORK/moved.conf" -i 1
	wait_log acceptor1 "acceptor 1: recovered: votes again"
	admin "status after the move" status
	grep -q "^acceptor 1 at 127.0.0.1:7291 " "$WORK/admin.out" ||
		fail "status does not give acceptor 1's new address"
	for dir in proposer-0 acceptor-0 acceptor-2; do
		grep -q "^address 1 " "$WORK/store/$dir/membership" ||
			fail "$dir did not keep acceptor 1's address: $(cat "$WORK/store/$dir/membership")"
	done
	# At or below its floor the moved acceptor, which lost its state, promises nothing (it
	# may have voted there before): instances up to it close with acceptors 0 and 2, so 2
	# stops only once every learner closed them. The leader's too: it opens no instance a
	# window or more past its learner's first open one, so a delivery past floor + window
	# says its learner got past the floor.
	floor=$(sed -n 's/.*acceptor 1: recovered: votes again above instance \([0-9]*\) .*/\1/p' \
		"$WORK/acceptor1.log" | tail -n 1)
	[ -n "$floor" ] || fail "acceptor 1 did not log its floor"
	window=$(awk '$1 == "proposer-window" { print $2 }' "$CONF")
	past=$((floor + ${window:-128}))
	for l in 0 1; do
		i=0
		until [ "$(tail -n 1 "$WORK/learner$l.out" | cut -d' ' -f1)" -gt "$past" ]; do
			i=$((i + 1))
			[ "$i" -le 300 ] || fail "learner $l did not get past $past (acceptor 1's" \
				"floor $floor plus the window)"
			sleep 0.1
		done
	done
	stop_one acceptor2
	before=$(wc -l <"$WORK/learner0.out")
	# A second client, from the moved acceptor's new line: a process without a membership
	# file learns the configuration from a quorum of its members, and acceptor 2 is gone.
	"$BUILD/paxos-client" -c "$WORK/moved.conf" --count 2000 --outstanding 16 --size 64 \
		--resubmit-ms 5000 --time-limit 60 --log "$WORK/submitted2" \
		>"$WORK/client2.log" 2>&1 ||
		fail "no delivery with acceptors 0 and 1 (moved) alone: $(tail -n 3 "$WORK/client2.log")"
	echo "e2e_move: acceptors 0 and 1 (moved) alone: $before values, then" \
		"$(wc -l <"$WORK/learner0.out")"
else
	refused 1 "set-address with multicast" set-address 1 127.0.0.1:7291
fi

client_drain || fail "paxos-client did not get all its values delivered: $(tail -n 3 "$WORK/client.log")"
grep -E "latency|resubmits" "$WORK/client.log"
how=once
once "$WORK/client.log" || how="at least once"
if [ -f "$WORK/submitted2" ]; then
	once "$WORK/client2.log" || how="at least once"
	cat "$WORK/submitted2" >>"$WORK/submitted"
fi
total=$(wc -l <"$WORK/submitted")
i=0
until [ "$(wc -l <"$WORK/learner0.out")" -ge "$total" ] &&
	[ "$(wc -l <"$WORK/learner1.out")" -ge "$total" ]; do
	i=$((i + 1))
	[ "$i" -le 600 ] || fail "learners did not deliver every value"
	sleep 0.1
done
stop_all
cmp -s "$WORK/learner0.out" "$WORK/learner1.out" || fail "learner outputs differ"
cut -d' ' -f2 "$WORK/learner0.out" | sort >"$WORK/delivered.sorted"
cut -d' ' -f2 "$WORK/submitted" | sort -u >"$WORK/submitted.sorted"
if [ "$how" = once ]; then
	[ -z "$(uniq -d "$WORK/delivered.sorted")" ] || fail "a value was delivered twice"
	cmp -s "$WORK/delivered.sorted" "$WORK/submitted.sorted" ||
		fail "delivered values differ from submitted values"
else
	sort -u "$WORK/delivered.sorted" | cmp -s - "$WORK/submitted.sorted" ||
		fail "delivered values differ from submitted values"
fi
echo "e2e_move: $total values delivered $how, identically by 2 learners, through changes" \
	"learned by acceptors without a learner$(is_unicast "$CONF" && echo ", acceptor 1 moved")"
