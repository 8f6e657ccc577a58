#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Memory errors and leaks over a whole run: 3 acceptors, a proposer and a learner from the
# shipped paxos.conf, with the proposer, acceptor 0 and the learner under valgrind, serve a
# client's 500 values (the proposer its /metrics and /health too); then SIGTERM. Each valgrind-run role must exit 0: no invalid access, no
# use of uninitialised memory, no definitely lost block (those would exit 99).
# Usage: e2e_valgrind.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"
COUNT=500
CONF=$(base_conf)

if grep -Eq '^PAXOS_(SANITIZE|FUZZ):BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
	echo "e2e_valgrind: skipped: $BUILD is built with sanitizers, which valgrind cannot run"
	exit 0
fi
command -v valgrind >/dev/null ||
	fail "valgrind is not installed (scripts/install-deps.sh installs it)"

# vg NAME: the valgrind command line for role NAME, its report in $WORK/NAME.valgrind
vg() {
	echo "valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99" \
		"--log-file=$WORK/$1.valgrind"
}
# Like start (tests/e2e/cluster.sh), under valgrind: start_vg NAME BINARY ARGS...
start_vg() {
	name=$1
	bin=$2
	shift 2
	$(vg "$name") "$BUILD/$bin" "$@" >"$WORK/$name.log" 2>&1 &
	PIDS="$PIDS $!"
	eval "PID_$name=$!"
}

start_vg acceptor0 paxos-acceptor -c "$CONF" -i 0
for i in 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
start_vg proposer0 paxos-proposer -c "$CONF" -i 0 --metrics-listen 127.0.0.1:9510
start_vg learner paxos-learner -c "$CONF" -o "$WORK/learner.out"
# Valgrind takes a moment to start a program; the client resubmits what is lost meanwhile.
while [ ! -f "$WORK/proposer0.log" ]; do sleep 0.1; done
wait_lines "$WORK/proposer0.log" 1 30 || fail "the proposer did not start under valgrind"
sleep 1

"$BUILD/paxos-client" -c "$CONF" --count $COUNT --outstanding 16 --size 16-512 \
	--resubmit-ms 1000 --time-limit 120 --log "$WORK/submitted" >"$WORK/client.log" 2>&1 ||
	fail "paxos-client did not get all $COUNT values delivered"
cat "$WORK/client.log"
wait_lines "$WORK/learner.out" $COUNT 60 || fail "the learner did not write $COUNT values"
for path in /metrics /health /nowhere; do
	curl -s -o /dev/null "http://127.0.0.1:9510$path" || fail "the proposer did not serve $path"
done

# Stop the valgrind-run roles first, one by one, and collect their exit statuses.
for name in proposer0 learner acceptor0; do
	eval "pid=\$PID_$name"
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	PIDS=$(echo "$PIDS" | sed "s/ $pid\b//")
	summary=$(grep -h "ERROR SUMMARY" "$WORK/$name.valgrind" || true)
	echo "e2e_valgrind: $name exited $status: ${summary#==*== }"
	if [ "$status" -eq 99 ] || grep -q "definitely lost: [1-9]" "$WORK/$name.valgrind"; then
		cat "$WORK/$name.valgrind" >&2
		fail "valgrind found memory errors or definite leaks in $name"
	fi
	[ "$status" -eq 0 ] || fail "$name exited $status on SIGTERM"
done
stop_all
# The learner wrote what was decided: every submitted value once, in instance order (values
# resubmitted while valgrind started may have been decided twice: compare distinct values).
consecutive "$WORK/learner.out" || fail "learner output is not 1..N in order"
cut -d' ' -f2 "$WORK/learner.out" | sort -u >"$WORK/delivered.sorted"
cut -d' ' -f2 "$WORK/submitted" | sort -u >"$WORK/submitted.sorted"
cmp -s "$WORK/delivered.sorted" "$WORK/submitted.sorted" ||
	fail "delivered values differ from submitted values"
echo "e2e_valgrind: $COUNT values served; valgrind found no errors and no definite leaks"
