# SPDX-License-Identifier: BSD-3-Clause
# Shell helpers for end-to-end tests: start role binaries, remember their PIDs, stop only
# those. Source it with BUILD set to the build directory and WORK to a scratch directory.
PIDS=""

start() { # start NAME BINARY ARGS...: runs in the background, logs to $WORK/NAME.log
	name=$1
	shift
	"$BUILD/$@" >"$WORK/$name.log" 2>&1 &
	PIDS="$PIDS $!"
	NAMES="${NAMES:-} $name"
	eval "PID_$name=$!"
}

stop_all() {
	# A process a test stopped (SIGSTOP) takes the signal only once continued.
	for pid in $PIDS; do kill -TERM "$pid" 2>/dev/null && kill -CONT "$pid" 2>/dev/null || true; done
	for pid in $PIDS; do wait "$pid" 2>/dev/null || true; done
	PIDS=""
}

stop_one() { # stop_one NAME: stops it (SIGTERM) and forgets it
	eval "pid=\$PID_$1"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
}

# wait_log NAME PATTERN: until NAME's log has a line matching PATTERN (30 s); prints it
wait_log() {
	i=0
	until grep -q "$2" "$WORK/$1.log"; do
		i=$((i + 1))
		[ "$i" -le 300 ] || fail "$1 did not log \"$2\""
		sleep 0.1
	done
	echo "$(basename "$0" .sh): $1: $(grep -m 1 "$2" "$WORK/$1.log")"
}

fail() {
	echo "FAIL: $*" >&2
	for f in "$WORK"/*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; } >&2
	done
	# Partition clients still running (no status yet: see partition_client) stop too.
	for f in "$WORK"/*.pid; do
		[ -f "$f" ] && [ ! -f "${f%.pid}.status" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	stop_all
	# PAXOS_E2E_KEEP=DIR keeps the whole scratch directory of a failed run (logs, outputs).
	if [ -n "${PAXOS_E2E_KEEP:-}" ]; then
		mkdir -p "$PAXOS_E2E_KEEP" && cp -r "$WORK" "$PAXOS_E2E_KEEP/" &&
			echo "kept $WORK in $PAXOS_E2E_KEEP" >&2
	fi
	exit 1
}

# eventually SECONDS COMMAND...: until COMMAND succeeds, tried every 0.1 s; fails (1) after
# SECONDS. A test waits for what the protocol promises, not for a time a machine may exceed.
eventually() {
	ev_limit=$(($1 * 10))
	shift
	ev_i=0
	until "$@"; do
		ev_i=$((ev_i + 1))
		[ "$ev_i" -le "$ev_limit" ] || return 1
		sleep 0.1
	done
}

# counter_values NAME WHAT FIELD: FIELD of every "paxos: counters WHAT:" line of NAME's log,
# one a line; 0 where a line leaves it out (a line names only the counters above 0).
counter_values() {
	awk -v what="paxos: counters $2:" -v f="$3=" 'index($0, what) == 1 {
		v = 0
		for (i = 1; i <= NF; i++) if (index($i, f) == 1) v = substr($i, length(f) + 1) + 0
		print v }' "$WORK/$1.log"
}

# counter NAME WHAT FIELD: FIELD of the last such line; nothing before NAME printed one.
counter() { counter_values "$@" | tail -n 1; }

# steady COMMAND...: waits (30 s) until COMMAND, which prints a counter's reports one a line,
# printed two from now on that agree, and prints that value: the counter stopped moving.
steady() {
	sc_seen=$("$@" | wc -l)
	sc_i=0
	until "$@" | awk -v skip="$sc_seen" 'NR > skip { n++; prev = last; last = $0 }
		END { if (n >= 2 && prev == last) print last; exit !(n >= 2 && prev == last) }'; do
		sc_i=$((sc_i + 1))
		[ "$sc_i" -le 300 ] || return 1
		sleep 0.1
	done
}

# steady_counter NAME WHAT FIELD: steady for FIELD of NAME's counters of WHAT.
steady_counter() { steady counter_values "$@"; }

# wait_lines FILE N SECONDS: until FILE has at least N lines
wait_lines() {
	i=0
	while [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -lt "$2" ]; do
		i=$((i + 1))
		[ "$i" -gt $(($3 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# consecutive FILE: the instances of "IID HEX" lines run 1, 2, 3, ... in order; several lines
# may share an instance (values batched into it, thesis 3.7.4).
consecutive() {
	awk '$1 != (NR == 1 ? 1 : prev) && $1 != prev + 1 { print "instance " $1 " at line " NR; bad = 1; exit }
		{ prev = $1 } END { exit bad }' "$1"
}

# check_outputs EXPECTED_COUNT SUBMITTED_LOG OUTPUT...: identical outputs, consecutive
# instances from 1 (several lines share an instance when values were batched into it), every
# submitted value exactly once.
check_outputs() {
	count=$1
	submitted=$2
	shift 2
	first=$1
	for out in "$@"; do
		cmp -s "$first" "$out" || fail "learner outputs $first and $out differ"
	done
	[ "$(wc -l <"$first")" -eq "$count" ] || fail "$first has $(wc -l <"$first") lines, want $count"
	consecutive "$first" || fail "instances in $first are not consecutive from 1"
	cut -d' ' -f2 "$first" | sort >"$WORK/delivered.sorted"
	cut -d' ' -f2 "$submitted" | sort >"$WORK/submitted.sorted"
	[ -z "$(uniq -d "$WORK/delivered.sorted")" ] || fail "a value was delivered twice"
	cmp -s "$WORK/delivered.sorted" "$WORK/submitted.sorted" ||
		fail "delivered values differ from submitted values"
}

# at_least_once SUBMITTED_LOG OUTPUT...: identical outputs, consecutive instances from 1, every
# submitted value delivered and no other, some maybe twice (after a resubmit, or a leader that
# moved: see resubmitted and leader_moved).
at_least_once() {
	submitted=$1
	shift
	for out in "$@"; do
		cmp -s "$1" "$out" || fail "learner outputs $1 and $out differ"
	done
	consecutive "$1" || fail "instances in $1 are not consecutive from 1"
	cut -d' ' -f2 "$1" | sort -u >"$WORK/delivered.set"
	cut -d' ' -f2 "$submitted" | sort -u >"$WORK/submitted.set"
	cmp -s "$WORK/delivered.set" "$WORK/submitted.set" ||
		fail "delivered values differ from submitted values"
}

# resubmitted LOG...: a paxos-client's LOG says it resubmitted values: a value it resubmitted
# after its timeout (which a loaded machine may exceed) may be delivered twice.
resubmitted() { awk '$1 == "resubmits" && $2 + 0 > 0 { found = 1 } END { exit !found }' "$@"; }

# converged COUNT SUBMITTED_LOG OUTPUT...: waits up to 60 s until every output has the same
# number of lines, at least COUNT (files are flushed every 100 ms); stops the cluster; then the
# outputs must be identical, consecutive from instance 1 and hold every submitted value (a
# leader change may deliver one twice: at-least-once). Sets LINES to the outputs' length.
converged() {
	count=$1
	submitted=$2
	shift 2
	i=0
	while :; do
		LINES=$(wc -l <"$1")
		same=1
		for out in "$@"; do
			[ "$(wc -l <"$out")" -eq "$LINES" ] || same=0
		done
		[ "$same" -eq 1 ] && [ "$LINES" -ge "$count" ] && break
		i=$((i + 1))
		[ "$i" -le 600 ] || fail "learners did not converge ($(wc -l "$@" | head -n -1 | tr -s ' \n' ' '))"
		sleep 0.1
	done
	stop_all
	for out in "$@"; do
		cmp -s "$1" "$out" || fail "learner outputs $1 and $out differ"
	done
	consecutive "$1" || fail "learner instances are not consecutive from 1"
	cut -d' ' -f2 "$1" | sort -u >"$WORK/delivered.set"
	cut -d' ' -f2 "$submitted" | sort -u >"$WORK/submitted.set"
	missing=$(comm -23 "$WORK/submitted.set" "$WORK/delivered.set" | wc -l)
	[ "$missing" -eq 0 ] || fail "$missing submitted values were never delivered"
}

# base_conf: prints the configuration a test starts from, for the transport PAXOS_TRANSPORT
# (multicast, the default, or unicast): $WORK/multicast.conf, paxos.conf with its storage-path
# in $WORK/store (the proposers' epoch files of other runs there would make every acceptor of
# a new cluster wait, rightly, for the state of a cluster that ran before), or for unicast
# $WORK/unicast.conf, the same plus the transport, member and lease lines of
# $SRC/paxos-unicast.conf (the same local cluster). Tests derive their configurations from it
# with sed, as from paxos.conf. Both name $WORK/admin.key, a fresh key, as admin-key-file: what
# paxos-admin and the proposers need for a membership change.
UNICAST_KEYS='^(transport|acceptor|proposer|subscription-lease-ms)[[:blank:]]'
base_conf() {
	"$BUILD/paxos-keygen" --force "$WORK/admin.key" >/dev/null || {
		echo "FAIL: cannot write $WORK/admin.key" >&2
		return 1
	}
	case ${PAXOS_TRANSPORT:-multicast} in
	multicast)
		sed -e "s|^storage-path .*|storage-path $WORK/store|" \
			-e "s|^#admin-key-file .*|admin-key-file $WORK/admin.key|" "$SRC/paxos.conf" \
			>"$WORK/multicast.conf" || {
			echo "FAIL: cannot write $WORK/multicast.conf" >&2
			return 1
		}
		echo "$WORK/multicast.conf"
		;;
	unicast)
		# A key may appear only once: paxos.conf's own lines of these keys give way.
		sed -e "s|^storage-path .*|storage-path $WORK/store|" \
			-e "s|^#admin-key-file .*|admin-key-file $WORK/admin.key|" "$SRC/paxos.conf" |
			grep -Ev "$UNICAST_KEYS" >"$WORK/unicast.conf" &&
			grep -E "$UNICAST_KEYS" "$SRC/paxos-unicast.conf" >>"$WORK/unicast.conf" &&
			grep -q '^transport[[:blank:]]\{1,\}unicast' "$WORK/unicast.conf" || {
			echo "FAIL: cannot write $WORK/unicast.conf" >&2
			return 1
		}
		echo "$WORK/unicast.conf"
		;;
	*)
		echo "FAIL: PAXOS_TRANSPORT is '$PAXOS_TRANSPORT', not multicast or unicast" >&2
		return 1
		;;
	esac
}

# is_unicast FILE: FILE sets transport unicast.
is_unicast() { grep -q '^transport[[:blank:]]\{1,\}unicast' "$1"; }

# local_members FILE: for a unicast FILE, one member line per acceptor and proposer it counts
# (after a test changed `acceptors` or `proposers`: the ids must match the counts), all on
# 127.0.0.1 with the ports of paxos-unicast.conf (acceptor i 7201+i, proposer i 7301+i). A
# multicast FILE stays as it is.
local_members() {
	is_unicast "$1" || return 0
	awk 'BEGIN { a = 3; p = 2 } # the defaults
		$1 == "acceptors" { a = $2 } $1 == "proposers" { p = $2 }
		$1 != "acceptor" && $1 != "proposer" { print }
		END { for (i = 0; i < a; i++) print "acceptor " i " 127.0.0.1:" 7201 + i
			for (i = 0; i < p; i++) print "proposer " i " 127.0.0.1:" 7301 + i }' \
		"$1" >"$1.members" && mv "$1.members" "$1"
}

# leader_moved LOG...: a proposer's LOG names a change of leader past instance 1 (one from
# instance 1, as the proposers start, precedes every value). A heartbeat missed under load may
# move the leadership, and a value in flight then may be chosen twice (at-least-once:
# docs/using.md, "Submitting values").
leader_moved() {
	awk '/: leader is now [0-9]* \(was [0-9]*\) from instance [0-9]*/ {
		for (i = 1; i < NF; i++) if ($i == "instance" && $(i + 1) + 0 > 1) found = 1 }
		END { exit !found }' "$@"
}

# retry_admin OUT ERR COMMAND...: COMMAND (a paxos-admin change), its output in OUT and ERR,
# again while it refuses only because too few acceptors answered in time, or the acceptor to
# add did not (it counts those heard in the last few acceptor ticks, which a busy machine may
# delay, and waits 3 s for one just started; 30 s at most). Returns its last status.
retry_admin() {
	ra_out=$1
	ra_err=$2
	shift 2
	ra_i=0
	while :; do
		ra_rc=0
		"$@" >"$ra_out" 2>"$ra_err" || ra_rc=$?
		[ "$ra_rc" -ne 0 ] && grep -qE "no live quorum|does not answer" "$ra_err" &&
			[ "$ra_i" -lt 30 ] ||
			return "$ra_rc"
		ra_i=$((ra_i + 1))
		sleep 1
	done
}

# client_bg LOG ARGS...: paxos-client ARGS in the background, its output in LOG and its PID in
# CLIENT (stopped with the others if the test fails). SIGUSR1 (drain: tests run a client until
# a condition holds, not for a count a fast machine gets through too early) stays ignored
# until the client listens for it: an early one is lost, not fatal.
client_bg() {
	cb_log=$1
	shift
	(
		trap '' USR1
		exec "$BUILD/paxos-client" "$@" >"$cb_log" 2>&1
	) &
	CLIENT=$!
	PIDS="$PIDS $CLIENT"
}

# client_drain: CLIENT (client_bg) submits no new value and ends once its values are delivered;
# returns its exit status, and forgets it.
client_drain() {
	kill -USR1 "$CLIENT" 2>/dev/null || true
	cd_status=0
	wait "$CLIENT" || cd_status=$?
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$CLIENT" | tr '\n' ' ')
	return "$cd_status"
}

# partition_client NAME PARTITION COUNT [OPTIONS]: paxos-client on $CONF in the background, 16
# values outstanding, its output in $WORK/NAME.log and its status in $WORK/NAME.status; PARTITION
# x spreads the values over partitions 0 and 1 round-robin, PARTITION key by key (--spread key,
# client id 77); OPTIONS (one word list) go to paxos-client as well. COUNT "drain" runs it until
# drain NAME (120 s at most; else 30 s).
partition_client() {
	where="--partition $2"
	[ "$2" != x ] || where="--partitions 2"
	[ "$2" != key ] || where="--partitions 2 --spread key --keys 64 --id 77"
	count=$3
	limit=30
	[ "$count" != drain ] || { count=10000000; limit=120; }
	rm -f "$WORK/$1.pid" "$WORK/$1.status"
	(
		status=0
		# shellcheck disable=SC2086
		client_bg "$WORK/$1.log" -c "$CONF" $where --count "$count" --outstanding 16 \
			--size 32 --time-limit $limit ${4:-}
		echo "$CLIENT" >"$WORK/$1.pid"
		wait "$CLIENT" || status=$?
		echo "$status" >"$WORK/$1.status"
	) &
	CLIENTS="${CLIENTS:-} $!"
}

# drain NAME: partition client NAME submits no new value and ends once its values are
# delivered (paxos-client's SIGUSR1).
drain() {
	eventually 10 test -s "$WORK/$1.pid" || fail "$1 did not start"
	kill -USR1 "$(cat "$WORK/$1.pid")" 2>/dev/null || true
}

# clients_served NAME...: waits for the partition clients; each named one delivered all its
# values.
clients_served() {
	for pid in $CLIENTS; do wait "$pid" || true; done
	CLIENTS=""
	for name in "$@"; do
		[ "$(cat "$WORK/$name.status")" = 0 ] ||
			fail "$name: $(tail -n 3 "$WORK/$name.log")"
		grep -q "^delivered \([0-9]*\) of \1 values" "$WORK/$name.log" ||
			fail "$name: $(head -n 1 "$WORK/$name.log")"
	done
}
