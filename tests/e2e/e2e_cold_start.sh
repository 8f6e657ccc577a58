#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A cluster whose acceptors all start without state (storage memory) must reach its first
# values as soon as they recovered, not after a phase 1 timeout: while recovering they
# withhold their votes, then answer the prepares they withheld, and the fence they learned
# from the proposer is the proposer's own ballot, which their rejects tell it to go above.
# With both phase timeouts at 10 minutes, any wait for one would hold the client past its
# time limit; the leader's counters must show no timeout (inside a private network namespace).
# Usage: e2e_cold_start.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=2000
CONF=$WORK/paxos.conf
sed -e "s|^phase1-timeout-ms .*|phase1-timeout-ms 600000|" \
	-e "s|^phase2-timeout-ms .*|phase2-timeout-ms 600000|" \
	-e "s|^timeout-ceiling-ms .*|timeout-ceiling-ms 600000|" \
	-e "s|^counters-interval-ms .*|counters-interval-ms 0|" "$(base_conf)" >"$CONF"
grep -q "^storage *memory" "$CONF" || fail "the shipped configuration does not use memory storage"

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
# Each acceptor is up before the proposers start: a first prepare an acceptor still starting
# misses is lost, and only a phase 1 timeout (10 minutes here) would send it again.
for i in 0 1 2; do wait_log acceptor$i "acceptor $i: started without earlier state" >/dev/null; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
"$BUILD/paxos-client" -c "$CONF" --count $COUNT --outstanding 16 --size 64 \
	--time-limit 30 >"$WORK/client.log" 2>&1 ||
	fail "paxos-client did not get $COUNT values delivered in 30 s: $(tail -n 3 "$WORK/client.log")"
stop_all
for i in 0 1 2; do
	grep -q "acceptor $i: recovered" "$WORK/acceptor$i.log" ||
		fail "acceptor $i did not say it recovered"
done
line=$(grep "counters proposer 0:" "$WORK/proposer0.log" | tail -n 1)
[ -n "$line" ] || fail "proposer 0 printed no counters"
case $line in
*phase1_timeouts=* | *phase2_timeouts=*) fail "the leader waited for a timeout: $line" ;;
esac
echo "e2e_cold_start: $COUNT values from acceptors that all started empty, no phase timeout"
