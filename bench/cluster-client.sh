#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs paxos-client against a local cluster (the configuration's acceptors, proposer 0
# leading, from paxos.conf or $PAXOS_CONF) inside a private network namespace, and prints its
# report. With PAXOS_SYSTEM=serializer it runs paxos-serializer (thesis 4.2) in place of the
# acceptors and proposer (default PAXOS_SYSTEM=paxos).
# --transport multicast|unicast (or PAXOS_TRANSPORT=...; the option wins) runs the cluster over
# that transport, whatever the configuration says (default: the configuration's transport).
# With unicast, every member the configuration counts runs on 127.0.0.1, acceptor i at port
# 7201+i and proposer i at 7301+i (as in paxos-unicast.conf); its own member lines give way.
# With PAXOS_SYSTEM=replicas: paxos-replica processes (acceptor i, proposer 0 in the
# first, a learner writing to /dev/null in each).
# Environment: PAXOS_ACCEPTORS=N starts acceptors 0..N-1 (default: `acceptors` of the
# configuration, which must count them); PAXOS_LEARNERS=N adds N paxos-learner processes
# writing to /dev/null (default 0); PAXOS_LOG_DIR=DIR keeps every process' log there, and
# cpu.log: "NAME NANOSECONDS 1000000000" per role process, its CPU time (user + system) while
# the client ran, and switches.log: "NAME SLEEPS", its wake-ups meanwhile;
# PAXOS_PERF_DIR=DIR profiles each role process while the client runs (perf record, one
# DIR/NAME.data each; read with perf report -i; PAXOS_PERF_OPTIONS adds options, -g say); PAXOS_AUTH=1 gives every process, the client included, a fresh key (paxos-keygen) as
# auth-key-file in a copy of the configuration: authenticated datagrams; with
# PAXOS_AUTH_MAC=NAME every process tags with auth-mac NAME (default: the configuration's).
# Usage: bench/cluster-client.sh BUILD_DIR [--transport multicast|unicast]
#                                [paxos-client options...]
# Example: bench/cluster-client.sh build --count 100000 --size 64 --outstanding 64
#          bench/cluster-client.sh build --transport unicast --count 100000 --outstanding 64
set -eu
BUILD=$(cd "$1" && pwd)
shift
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ "${PAXOS_IN_NETNS:-}" != 1 ]; then
	exec "$SRC/tests/netns-run.sh" "$0" "$BUILD" "$@"
fi
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
CONF=${PAXOS_CONF:-$SRC/paxos.conf}
TRANSPORT=${PAXOS_TRANSPORT:-}
case ${1:-} in
--transport)
	[ $# -ge 2 ] || fail "--transport needs multicast or unicast"
	TRANSPORT=$2
	shift 2
	;;
--transport=*)
	TRANSPORT=${1#--transport=}
	shift
	;;
esac
if [ -n "$TRANSPORT" ]; then
	case $TRANSPORT in
	multicast | unicast) ;;
	*) fail "the transport must be multicast or unicast, not '$TRANSPORT'" ;;
	esac
	# A key may appear only once: the configuration's transport and members give way.
	grep -Ev '^(transport|acceptor|proposer)[[:blank:]]' "$CONF" >"$WORK/transport.conf" || true
	echo "transport $TRANSPORT" >>"$WORK/transport.conf"
	CONF=$WORK/transport.conf
fi
# A store of its own for each run: a proposer's epoch file left by an earlier run would tell
# memory acceptors that the cluster ran before, and they would wait for its lost state.
grep -v '^storage-path[[:blank:]]' "$CONF" >"$WORK/store.conf" || true
echo "storage-path $WORK/store" >>"$WORK/store.conf"
CONF=$WORK/store.conf
if [ "${PAXOS_SYSTEM:-paxos}" != serializer ]; then
	# Only proposer 0 runs: say so, or acceptors starting without state (memory storage)
	# would wait 2 s for proposer 1 before voting, and the machine would idle meanwhile.
	sed 's/^proposers .*/proposers 1/' "$CONF" >"$WORK/paxos.conf"
	CONF=$WORK/paxos.conf
fi
# Unicast: an address for each member the file counts now, and none for another (in a copy:
# the caller's file stays as it is).
if is_unicast "$CONF"; then
	cp "$CONF" "$WORK/members.conf"
	CONF=$WORK/members.conf
	local_members "$CONF" || fail "cannot write the member addresses"
fi
[ -z "${PAXOS_LOG_DIR:-}" ] || trap 'stop_all; cp "$WORK"/*.log "$PAXOS_LOG_DIR"/ 2>/dev/null; rm -rf "$WORK"' EXIT
if [ "${PAXOS_AUTH:-0}" = 1 ]; then
	"$BUILD/paxos-keygen" "$WORK/auth.key" 2>/dev/null || fail "paxos-keygen failed"
	grep -v '^auth-key-file[[:blank:]]' "$CONF" >"$WORK/auth.conf" || true
	echo "auth-key-file $WORK/auth.key" >>"$WORK/auth.conf"
	if [ -n "${PAXOS_AUTH_MAC:-}" ]; then
		grep -v '^auth-mac[[:blank:]]' "$WORK/auth.conf" >"$WORK/auth.conf.mac" || true
		echo "auth-mac $PAXOS_AUTH_MAC" >>"$WORK/auth.conf.mac"
		mv "$WORK/auth.conf.mac" "$WORK/auth.conf"
	fi
	CONF=$WORK/auth.conf
fi
ACCEPTORS=${PAXOS_ACCEPTORS:-$(awk '$1 == "acceptors" { print $2 }' "$CONF")}
ACCEPTORS=${ACCEPTORS:-3}
case ${PAXOS_SYSTEM:-paxos} in
paxos)
	i=0
	while [ $i -lt "$ACCEPTORS" ]; do
		start acceptor$i paxos-acceptor -c "$CONF" -i $i
		i=$((i + 1))
	done
	start proposer0 paxos-proposer -c "$CONF" -i 0
	summary="counters proposer"
	log=proposer0
	;;
replicas)
	i=0
	while [ $i -lt "$ACCEPTORS" ]; do
		start replica$i paxos-replica -c "$CONF" -i $i -o /dev/null
		i=$((i + 1))
	done
	summary="counters proposer"
	log=replica0
	;;
serializer)
	start serializer paxos-serializer -c "$CONF"
	summary="counters acceptor"
	log=serializer
	;;
*) fail "PAXOS_SYSTEM must be paxos, replicas or serializer, not '$PAXOS_SYSTEM'" ;;
esac
i=0
while [ $i -lt "${PAXOS_LEARNERS:-0}" ]; do
	start learner$i paxos-learner -c "$CONF" -o /dev/null
	i=$((i + 1))
done
sleep 0.3
# Acceptors that start without earlier state recover before they vote (2 s when a configured
# proposer, here proposer 1, never answers): the measurement starts once every one votes.
i=0
for f in "$WORK"/acceptor*.log "$WORK"/replica*.log; do
	[ -e "$f" ] || continue
	while grep -q "recovering, no votes" "$f" && ! grep -q "recovered: votes again" "$f"; do
		i=$((i + 1))
		[ "$i" -le 100 ] || fail "$(basename "$f" .log) did not recover in 10 s"
		sleep 0.1
	done
done
# cpu_ns PID: the CPU time (user + system) of every thread of PID so far, in nanoseconds:
# from /proc/PID/task/*/sched where the kernel keeps it (se.sum_exec_runtime, in ms to the
# ns), else from /proc/PID/stat in clock ticks (10 ms each, too coarse for a short run).
cpu_ns() {
	if [ -r "/proc/$1/sched" ]; then
		cat /proc/"$1"/task/*/sched 2>/dev/null |
			awk '$1 == "se.sum_exec_runtime" { s += $3 } END { printf "%.0f\n", s * 1e6 }'
	else
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f\n", ($14 + $15) * 1e9 / hz }' \
			"/proc/$1/stat" 2>/dev/null || echo 0
	fi
}
# switches PID: how often PID's threads have slept so far (voluntary context switches: one per
# wake-up of an event loop, about).
switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '$1 == "voluntary_ctxt_switches:" { s += $2 } END { print s + 0 }'
}
# Each role process's CPU time before the client starts: what the run costs is counted from
# here, without the processes' start and recovery.
for name in $NAMES; do
	eval "pid=\$PID_$name"
	eval "CPU0_$name=$(cpu_ns "$pid") SW0_$name=$(switches "$pid")"
done
# A run that stops at its time limit exits non-zero: still print the counters, then pass
# the client's status on.
PERFS=""
if [ -n "${PAXOS_PERF_DIR:-}" ]; then
	for name in $NAMES; do
		eval "pid=\$PID_$name"
		# shellcheck disable=SC2086
		perf record -q ${PAXOS_PERF_OPTIONS:-} -o "$PAXOS_PERF_DIR/$name.data" -p "$pid" \
			>/dev/null 2>&1 &
		PERFS="$PERFS $!"
	done
fi
status=0
"$BUILD/paxos-client" -c "$CONF" "$@" || status=$?
for p in $PERFS; do
	kill -INT "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
done
# Each role process's CPU time (user + system) while the client ran, for CPU per value: cpu.log
# among the kept logs, "NAME NANOSECONDS 1000000000".
for name in $NAMES; do
	eval "pid=\$PID_$name cpu0=\$CPU0_$name sw0=\$SW0_$name"
	# shellcheck disable=SC2154
	if [ -d "/proc/$pid" ]; then
		echo "$name $(($(cpu_ns "$pid") - cpu0)) 1000000000"
		echo "$name $(($(switches "$pid") - sw0))" >>"$WORK/switches.log"
	fi
done >"$WORK/cpu.log"
stop_all
grep -h "$summary" "$WORK/$log.log" | tail -n 1 | sed 's/^paxos: /# /'
[ $status -eq 0 ] || echo "cluster-client.sh: paxos-client exited with status $status" >&2
exit $status
