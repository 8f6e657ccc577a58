#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A local cluster from paxos.conf (or CONF, e.g. paxos-unicast.conf for the unicast
# transport): 3 acceptors, 2 proposers (0 leads), a learner and a benchmark client. Runs inside
# a private network namespace when it can, so nothing can leave the host (paxos.conf also
# keeps multicast on loopback with TTL 0, paxos-unicast.conf its members on 127.0.0.1).
# Usage: demo.sh BUILD_DIR [CONF]
set -eu
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
CONF=${2:-$SRC/paxos.conf}
[ -f "$CONF" ] || {
	echo "demo.sh: no configuration file $CONF" >&2
	exit 1
}
if [ "${PAXOS_IN_NETNS:-}" != 1 ] && "$SRC/tests/netns-run.sh" true 2>/dev/null; then
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD" "$CONF"
fi
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
# A new cluster each time: its proposers' epoch files go to a storage-path of its own (with
# those of an earlier run, its memory acceptors would rightly wait for that cluster's state).
sed -e "s|^storage-path .*|storage-path $WORK/store|" "$CONF" >"$WORK/demo.conf"
NAME=$CONF
CONF=$WORK/demo.conf

echo "== starting 3 acceptors, 2 proposers and a learner from $NAME"
for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
start learner paxos-learner -c "$CONF" -o "$WORK/learner.out"
sleep 0.5

echo "== paxos-client: 5000 values of 64 bytes, 16 outstanding"
"$BUILD/paxos-client" -c "$CONF" --count 5000 --size 64 --outstanding 16 ||
	fail "the client did not get all its values delivered"
wait_lines "$WORK/learner.out" 5000 10 || true

echo "== the learner's first deliveries (instance, value in hex)"
head -n 5 "$WORK/learner.out" | cut -c1-60 | sed 's/$/.../'
echo "   ... $(wc -l <"$WORK/learner.out") values delivered in all"

echo "== stopping the cluster; each role reports its event counters"
stop_all
grep -h "counters" "$WORK"/acceptor0.log "$WORK"/proposer0.log "$WORK"/learner.log |
	sed 's/^paxos: /   /'
echo "== done"
