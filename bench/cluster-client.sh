#!/bin/sh
# Runs paxos-client against a local cluster (3 acceptors, proposer 0 leading, from
# paxos.conf or $PAXOS_CONF) inside a private network namespace, and prints its report.
# With PAXOS_SYSTEM=serializer it runs paxos-serializer (thesis 4.2) in place of the
# acceptors and proposer (default PAXOS_SYSTEM=paxos).
# Usage: bench/cluster-client.sh BUILD_DIR [paxos-client options...]
# Example: bench/cluster-client.sh build --count 100000 --size 64 --outstanding 64
set -eu
BUILD=$(cd "$1" && pwd)
shift
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD" "$@"
fi
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/cluster.sh"
CONF=${PAXOS_CONF:-$SRC/paxos.conf}
case ${PAXOS_SYSTEM:-paxos} in
paxos)
	for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
	start proposer0 paxos-proposer -c "$CONF" -i 0
	summary="counters proposer"
	log=proposer0
	;;
serializer)
	start serializer paxos-serializer -c "$CONF"
	summary="counters acceptor"
	log=serializer
	;;
*) fail "PAXOS_SYSTEM must be paxos or serializer, not '$PAXOS_SYSTEM'" ;;
esac
sleep 0.3
"$BUILD/paxos-client" -c "$CONF" "$@" || fail "paxos-client failed"
stop_all
grep -h "$summary" "$WORK/$log.log" | tail -n 1 | sed 's/^paxos: /# /'
