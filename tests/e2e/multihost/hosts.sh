# SPDX-License-Identifier: BSD-3-Clause
# Multi-host helpers: network namespaces ("hosts") joined by one bridge, created inside the
# private network namespace tests/netns-run.sh gives the test, so no datagram leaves it.
# Host N has address 10.77.0.N/24 on its eth0 and a multicast route on it.
# Source after tests/e2e/cluster.sh, with BUILD and WORK set. Functions start with mh_.

# /run/netns is shared with the whole system: names carry our PID so that they are ours.
MH_PREFIX=paxmh$$
MH_NET=10.77.0
MH_BRIDGE=mhbr0
MH_HOSTS=""

mh_ns() { echo "${MH_PREFIX}h$1"; }
mh_addr() { echo "$MH_NET.$1"; }

# mh_exec HOST COMMAND...: runs COMMAND in host HOST's network namespace.
mh_exec() {
	mh_ns=$(mh_ns "$1")
	shift
	ip netns exec "$mh_ns" "$@"
}

# A test killed by a signal other than SIGKILL still runs its EXIT trap; a test killed with
# SIGKILL leaves its names behind: remove those whose creator is gone.
mh_sweep_stale() {
	[ -d /run/netns ] || return 0
	for mh_path in /run/netns/paxmh*h*; do
		[ -e "$mh_path" ] || continue
		mh_pid=${mh_path#/run/netns/paxmh}
		mh_pid=${mh_pid%%h*}
		case $mh_pid in '' | *[!0-9]*) continue ;; esac
		kill -0 "$mh_pid" 2>/dev/null ||
			ip netns del "${mh_path#/run/netns/}" 2>/dev/null || true
	done
}

# mh_create N: the bridge and hosts 1..N.
mh_create() {
	mh_sweep_stale
	ip link add "$MH_BRIDGE" type bridge || return 1
	# Flood multicast to every port: no IGMP snooping state to wait for or to lose.
	ip link set "$MH_BRIDGE" type bridge mcast_snooping 0 || return 1
	ip link set "$MH_BRIDGE" up || return 1
	mh_n=1
	while [ "$mh_n" -le "$1" ]; do
		mh_host_add "$mh_n" || return 1
		mh_n=$((mh_n + 1))
	done
}

mh_host_add() {
	mh_ns=$(mh_ns "$1")
	ip netns add "$mh_ns" || return 1
	MH_HOSTS="$MH_HOSTS $1"
	ip link add "mhv$1" type veth peer name eth0 netns "$mh_ns" || return 1
	ip link set "mhv$1" master "$MH_BRIDGE" up || return 1
	ip -n "$mh_ns" link set lo up || return 1
	ip -n "$mh_ns" addr add "$(mh_addr "$1")/24" dev eth0 || return 1
	ip -n "$mh_ns" link set eth0 up || return 1
	ip -n "$mh_ns" route add 224.0.0.0/4 dev eth0 || return 1
}

# mh_destroy: every host and the bridge. Processes must be stopped first (stop_all).
mh_destroy() {
	for mh_h in $MH_HOSTS; do ip netns del "$(mh_ns "$mh_h")" 2>/dev/null || true; done
	MH_HOSTS=""
	ip link del "$MH_BRIDGE" 2>/dev/null || true
}

# mh_start HOST NAME BINARY ARGS...: like start (tests/e2e/cluster.sh) but on host HOST. ip netns
# exec execs the binary, so the PID remembered is the binary's.
mh_start() {
	mh_host=$1
	mh_name=$2
	mh_bin=$3
	shift 3
	ip netns exec "$(mh_ns "$mh_host")" "$BUILD/$mh_bin" "$@" >"$WORK/$mh_name.log" 2>&1 &
	PIDS="$PIDS $!"
	eval "PID_$mh_name=$!"
}

# mh_kill NAME [SIGNAL]: SIGKILL (or SIGNAL) a process started with mh_start, wait for it,
# and forget it.
mh_kill() {
	eval "mh_pid=\$PID_$1"
	kill -"${2:-KILL}" "$mh_pid" 2>/dev/null || true
	wait "$mh_pid" 2>/dev/null || true
	mh_forget "$mh_pid"
	eval "PID_$1="
}

# mh_forget PID: drop PID from those stop_all stops (once it was waited for, it may be reused).
mh_forget() { PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' '); }

# mh_conf BASE HOST OUT [SED-EXPRESSION...]: BASE made for host HOST: multicast on its address
# with TTL 1 (the other hosts are one hop away on the bridge), extra edits applied.
mh_conf() {
	mh_base=$1
	mh_host=$2
	mh_out=$3
	shift 3
	set -- -e "s|^multicast-interface .*|multicast-interface $(mh_addr "$mh_host")|" \
		-e "s|^multicast-ttl .*|multicast-ttl 1|" "$@"
	sed "$@" "$mh_base" >"$mh_out" || return 1
	grep -q "^multicast-interface $(mh_addr "$mh_host")\( \|$\)" "$mh_out" &&
		grep -q "^multicast-ttl 1\( \|$\)" "$mh_out"
}

# mh_joined HOST GROUP N: at least N sockets on host HOST are members of GROUP (ADDRESS:PORT);
# /proc/net/igmp is per network namespace and shows addresses as little-endian hex.
mh_joined() {
	mh_hex=$(echo "${2%:*}" | awk -F. '{ printf "%02X%02X%02X%02X", $4, $3, $2, $1 }')
	[ "$(mh_exec "$1" awk -v g="$mh_hex" '$1 == g { n += $2 } END { print n + 0 }' \
		/proc/net/igmp)" -ge "$3" ]
}

# mh_bound HOST PORT: a UDP socket on host HOST is bound to PORT, or with PORT "any" to some
# port (/proc/net/udp is per network namespace and shows ports as hex).
mh_bound() {
	mh_port=any
	[ "$2" = any ] || mh_port=$(printf '%04X' "$2")
	mh_exec "$1" awk -v p="$mh_port" 'NR > 1 && (p == "any" ||
		substr($2, index($2, ":") + 1) == p) { n++ } END { exit !n }' /proc/net/udp
}

# mh_wait_bound SECONDS HOST:PORT...: until every HOST has a UDP socket bound to PORT (or
# "any"); fails at once if a process started by mh_start died.
mh_wait_bound() {
	mh_limit=$(($1 * 20))
	shift
	mh_i=0
	for mh_spec in "$@"; do
		until mh_bound "${mh_spec%%:*}" "${mh_spec#*:}"; do
			mh_i=$((mh_i + 1))
			[ "$mh_i" -le "$mh_limit" ] || return 1
			for mh_pid in $PIDS; do kill -0 "$mh_pid" 2>/dev/null || return 1; done
			sleep 0.05
		done
	done
}

# mh_wait_joined SECONDS HOST:GROUP:N...: until every HOST has N members of GROUP; fails at
# once if a process started by mh_start died.
mh_wait_joined() {
	mh_limit=$(($1 * 20))
	shift
	mh_i=0
	for mh_spec in "$@"; do
		mh_host=${mh_spec%%:*}
		mh_rest=${mh_spec#*:}
		until mh_joined "$mh_host" "${mh_rest%:*}" "${mh_rest##*:}"; do
			mh_i=$((mh_i + 1))
			[ "$mh_i" -le "$mh_limit" ] || return 1
			for mh_pid in $PIDS; do kill -0 "$mh_pid" 2>/dev/null || return 1; done
			sleep 0.05
		done
	done
}
