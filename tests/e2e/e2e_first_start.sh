#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The role list (docs/operating.md, "Role binaries") on a fresh machine (inside a private network namespace): 3 acceptors
# and both proposers of the shipped paxos.conf, memory storage, started together (proposers
# first), and a client at once. The acceptors recover as a first start without waiting for
# anyone: the client's 64 values are delivered with no resubmit (it would wait 10 s: a loaded
# machine may hold a value past a second) and no duplicate, and no acceptor says it waits for
# a proposer. Then the same with proposer 1 not started: each acceptor says at once whom it
# waits for and until when. (How long the first value takes is printed, not asserted: the
# machine may be busy; before this test it was about 1.1 s, with 64 duplicates.)
# Usage: e2e_first_start.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$(base_conf)" >"$CONF"
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"
grep -q "^proposers *2 " "$CONF" || fail "the shipped configuration does not name 2 proposers"

# The proposers first: started after the acceptors on a loaded machine, they may come up after
# an acceptor's second tick, which is when it says whom it still waits for.
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
"$BUILD/paxos-client" -c "$CONF" --count 64 --outstanding 64 --size 64 --resubmit-ms 10000 \
	--time-limit 60 >"$WORK/client.log" 2>&1 || fail "the client did not get its 64 values delivered"
grep -q "^resubmits 0, duplicates 0," "$WORK/client.log" ||
	fail "values were resubmitted or delivered twice: $(grep resubmits "$WORK/client.log")"
for i in 0 1 2; do
	grep -q "acceptor $i: recovered:" "$WORK/acceptor$i.log" ||
		fail "acceptor $i did not recover"
	grep -q "proposers paxos.conf names" "$WORK/acceptor$i.log" &&
		fail "acceptor $i waited for a proposer although both run"
done
echo "e2e_first_start: every role of paxos.conf started: 64 values, no resubmit, no duplicate; latency ms $(sed -n 's/^latency ms: min \([0-9.]*\) .* max \([0-9.]*\) .*/\1 to \2/p' "$WORK/client.log")"
stop_all

# Proposer 1 not started: the acceptors say so at once (within a few ticks).
rm -rf "$WORK/store"
start proposer0b paxos-proposer -c "$CONF" -i 0
for i in 0 1 2; do start acceptor${i}b paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1 2; do
	said=""
	for _ in $(seq 300); do # printed at the second tick; up to 30 s on a loaded machine
		# "1 of the 2" unless proposer 0 had not answered yet either (a loaded machine)
		grep -Eq "acceptor $i: (1 of the 2 proposers paxos.conf names has not answered; votes are withheld until it answers|2 of the 2 proposers paxos.conf names have not answered; votes are withheld until they answer) or for 2000 ms" \
			"$WORK/acceptor${i}b.log" && said=yes && break
		sleep 0.1
	done
	[ -n "$said" ] || fail "acceptor $i did not say whom it waits for"
done
echo "e2e_first_start: with proposer 1 not started, each acceptor said at once whom it waits for"
stop_all
