#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The systemd units as installed: cmake --install into a scratch prefix, systemd-analyze verify
# on the three templates and on instances of them (when systemd-analyze is installed), then a
# cluster started from the units' own ExecStart lines (3 acceptors with LMDB stores, a
# proposer, learner "main") in the units' state directory: values submitted reach the learner's
# file, the stores and the proposer epoch are where paxos.conf's storage-path says, acceptor 1
# serves metrics on the port its instance's environment file gives it, and
# SIGTERM (systemctl stop) makes each role print its counters and exit 0, which
# Restart=on-failure does not restart. Usage: e2e_units.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$2/tests/e2e/cluster.sh"
PREFIX=$WORK/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
UNITS=$PREFIX/lib/systemd/system
for role in acceptor proposer learner; do
	[ -f "$UNITS/paxos-$role@.service" ] || fail "paxos-$role@.service not installed"
done
[ -f "$PREFIX/lib/sysusers.d/paxos.conf" ] || fail "sysusers.d/paxos.conf not installed"

if command -v systemd-analyze >/dev/null 2>&1; then
	# Documentation=man:... is checked too when man can find the installed pages.
	check_man=no
	if command -v man >/dev/null 2>&1 && [ -f "$PREFIX/share/man/man5/paxos.conf.5" ] &&
		[ -f "$PREFIX/share/man/man1/paxos-acceptor.1" ]; then
		check_man=yes
	fi
	for unit in "$UNITS"/paxos-*@.service; do
		instance=$(echo "$unit" | sed 's/@\.service$/@0.service/')
		ln -s "$(basename "$unit")" "$instance"
		MANPATH=$PREFIX/share/man systemd-analyze verify --man=$check_man "$unit" "$instance" ||
			fail "systemd-analyze verify $unit"
		rm "$instance"
	done
	echo "e2e_units: systemd-analyze verify passed (man pages checked: $check_man)"
else
	echo "e2e_units: systemd-analyze not installed: units not verified"
fi

# The units' state directory (%S/paxos) is here; paxos.conf's storage-path must be it.
STATE_ROOT=$WORK/var/lib
STATE=$STATE_ROOT/paxos
mkdir -p "$STATE"
CONF=$PREFIX/etc/paxos/paxos.conf
grep -q '^storage-path[[:space:]]*/var/lib/paxos[[:space:]]' "$CONF" ||
	fail "the installed paxos.conf does not keep storage-path in /var/lib/paxos"
sed -i -e "s|^storage-path[[:space:]]*/var/lib/paxos|storage-path $STATE|" \
	-e 's|^storage .*|storage lmdb|' -e 's|^counters-interval-ms .*|counters-interval-ms 0|' "$CONF"

# run_unit UNIT INSTANCE: starts the unit's ExecStart= as systemd would (%i, %S expanded,
# $PAXOS_OPTIONS from its EnvironmentFile= if that exists, in WorkingDirectory), logging to
# $WORK/UNIT-INSTANCE.log
run_unit() {
	exec_start=$(sed -n 's/^ExecStart=//p' "$UNITS/$1@.service" |
		sed -e "s|%i|$2|g" -e "s|%S|$STATE_ROOT|g")
	[ -n "$exec_start" ] || fail "$1@.service has no ExecStart="
	env_file=$(sed -n 's/^EnvironmentFile=-//p' "$UNITS/$1@.service" | sed -e "s|%i|$2|g")
	options=""
	[ ! -f "$env_file" ] || options=$(sed -n 's/^PAXOS_OPTIONS=//p' "$env_file")
	exec_start=$(echo "$exec_start" | sed "s|\$PAXOS_OPTIONS|$options|")
	name=$(echo "$1-$2" | tr -c 'a-z0-9\n' _)
	# Unquoted on purpose: systemd splits the command line at blanks too.
	# shellcheck disable=SC2086
	(cd "$STATE" && umask 077 && exec $exec_start) >"$WORK/$name.log" 2>&1 &
	PIDS="$PIDS $!"
	eval "PID_$name=$!"
}
# Acceptor 1 has options of its own: a metrics port.
METRICS=127.0.0.1:9501
echo "PAXOS_OPTIONS=--metrics-listen $METRICS" >"$PREFIX/etc/paxos/acceptor-1.env"
for i in 0 1 2; do run_unit paxos-acceptor $i; done
run_unit paxos-proposer 0
run_unit paxos-learner main
sleep 0.5
NAMES="paxos_acceptor_0 paxos_acceptor_1 paxos_acceptor_2 paxos_proposer_0 paxos_learner_main"
for name in $NAMES; do
	eval "pid=\$PID_$name"
	kill -0 "$pid" 2>/dev/null || fail "$name exited at start"
done

COUNT=500
"$PREFIX/bin/paxos-client" -c "$CONF" --count $COUNT --outstanding 16 --size 64 \
	--time-limit 60 --log "$WORK/submitted" >"$WORK/client.log" 2>&1 ||
	fail "paxos-client did not get $COUNT values delivered by the units' cluster"
OUT=$STATE/learner-main.out
wait_lines "$OUT" $COUNT 60 || fail "$OUT has $(wc -l <"$OUT") lines, want $COUNT"
for i in 0 1 2; do
	[ -d "$STATE/acceptor-$i" ] || fail "acceptor $i keeps no store in $STATE"
done
[ -f "$STATE/proposer-0/epoch" ] || fail "proposer 0 keeps no epoch in $STATE"
if command -v curl >/dev/null 2>&1; then
	curl -sf "http://$METRICS/metrics" | grep -q '^paxos_accepteds_sent_total{role="acceptor",id="1"} [1-9]' ||
		fail "acceptor 1 serves no metrics at $METRICS (its instance's PAXOS_OPTIONS)"
else
	echo "e2e_units: curl not installed: acceptor 1's metrics port not checked"
fi

# systemctl stop: SIGTERM to each, which must exit 0 after printing its counters.
for name in $NAMES; do
	eval "pid=\$PID_$name"
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	[ "$status" = 0 ] || fail "$name exited $status on SIGTERM (Restart=on-failure would restart it)"
	grep -q '^paxos: counters transport:' "$WORK/$name.log" ||
		fail "$name printed no counters when stopped"
done
PIDS=""
echo "e2e_units: the units' cluster delivered $COUNT values to $OUT; every role stopped" \
	"cleanly on SIGTERM"
