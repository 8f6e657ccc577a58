# SPDX-License-Identifier: BSD-3-Clause
# Network faults between the hosts of tests/e2e/multihost/hosts.sh. Faults act on what the bridge
# delivers to a host, so each receiver of a multicast datagram loses or delays its copy on its
# own, as on separate links. Backends, best first:
#  - tc netem on the bridge side of each host's veth (loss, delay with jitter);
#  - kernels without sch_netem: iptables in each host, the statistic match for loss and
#    NFQUEUE with tests/e2e/multihost/nfq-delay.c (compiled here) for delay with jitter;
#  - neither: mh_fault_backend says so and the caller skips.
# Partitions need neither: the host's port on the bridge goes down.
# Source after hosts.sh, with SRC set.

MH_FAULT_PIDS=""
MH_NFQ_DELAYED=0

# mh_fault_backend: prints netem, iptables or none (probes on host 1's port).
mh_fault_backend() {
	if tc qdisc add dev mhv1 root netem delay 0ms 2>/dev/null; then
		tc qdisc del dev mhv1 root 2>/dev/null || true
		echo netem
	elif command -v iptables >/dev/null 2>&1 &&
		mh_exec 1 iptables -w -A INPUT -m statistic --mode random --probability 0 -j DROP \
			2>/dev/null; then
		mh_exec 1 iptables -w -F INPUT
		echo iptables
	else
		echo none
	fi
}

# mh_netem_why: why netem is unavailable, for the skip line.
mh_netem_why() {
	tc qdisc add dev mhv1 root netem delay 0ms 2>&1 | head -n 1
	tc qdisc del dev mhv1 root 2>/dev/null || true
}

# mh_loss BACKEND PERCENT: every host loses PERCENT of what it receives from the bridge.
mh_loss() {
	for mh_h in $MH_HOSTS; do
		case $1 in
		netem) tc qdisc replace dev "mhv$mh_h" root netem loss "$2%" || return 1 ;;
		iptables)
			mh_exec "$mh_h" iptables -w -A INPUT -i eth0 -m statistic --mode random \
				--probability "$(awk -v p="$2" 'BEGIN { printf "%.4f", p / 100 }')" \
				-j DROP || return 1
			;;
		*) return 1 ;;
		esac
	done
}

# mh_nfq_delay_bin: the delay helper, compiled once into $WORK.
mh_nfq_delay_bin() {
	mh_bin=$WORK/nfq-delay
	[ -x "$mh_bin" ] || ${CC:-cc} -std=c11 -O2 -o "$mh_bin" "$SRC/tests/e2e/multihost/nfq-delay.c" ||
		return 1
	echo "$mh_bin"
}

# mh_delay BACKEND MS JITTER_MS: every host gets what the bridge delivers MS +- JITTER_MS late
# (uniform), so datagrams get reordered too.
mh_delay() {
	if [ "$1" = iptables ]; then
		mh_bin=$(mh_nfq_delay_bin) || return 1
	fi
	for mh_h in $MH_HOSTS; do
		case $1 in
		netem) tc qdisc replace dev "mhv$mh_h" root netem delay "$2ms" "$3ms" || return 1 ;;
		iptables)
			# Not through mh_exec: a function in the background is a subshell, and its
			# PID would not be the helper's.
			ip netns exec "$(mh_ns "$mh_h")" "$mh_bin" 0 "$2" "$3" \
				>"$WORK/nfq-delay-h$mh_h.log" 2>&1 &
			mh_pid=$!
			MH_FAULT_PIDS="$MH_FAULT_PIDS $mh_pid"
			mh_i=0
			until grep -q '^ready$' "$WORK/nfq-delay-h$mh_h.log" 2>/dev/null; do
				mh_i=$((mh_i + 1))
				kill -0 "$mh_pid" 2>/dev/null && [ "$mh_i" -le 100 ] || return 1
				sleep 0.05
			done
			mh_exec "$mh_h" iptables -w -A INPUT -i eth0 -j NFQUEUE --queue-num 0 || return 1
			;;
		*) return 1 ;;
		esac
	done
}

# mh_faults_clear: no loss, no delay, every port up; MH_NFQ_DELAYED tells how many packets the
# nfq-delay helpers it stopped had delayed.
mh_faults_clear() {
	for mh_h in $MH_HOSTS; do
		tc qdisc del dev "mhv$mh_h" root 2>/dev/null || true
		if command -v iptables >/dev/null 2>&1; then
			mh_exec "$mh_h" iptables -w -F INPUT 2>/dev/null || true
		fi
		ip link set "mhv$mh_h" up 2>/dev/null || true
	done
	for mh_pid in $MH_FAULT_PIDS; do kill -TERM "$mh_pid" 2>/dev/null || true; done
	for mh_pid in $MH_FAULT_PIDS; do wait "$mh_pid" 2>/dev/null || true; done
	MH_FAULT_PIDS=""
	MH_NFQ_DELAYED=$(mh_nfq_delayed)
	rm -f "$WORK"/nfq-delay-h*.log
}

# mh_deafen HOST RULE... / mh_hear HOST RULE...: host HOST drops what it receives that the
# iptables match RULE selects ("-i eth0": everything from the bridge) while what it sends still
# goes out (a one-way partition), and receives it again. Needs iptables.
mh_deafen() {
	mh_host=$1
	shift
	mh_exec "$mh_host" iptables -w -A INPUT "$@" -j DROP
}
mh_hear() {
	mh_host=$1
	shift
	mh_exec "$mh_host" iptables -w -D INPUT "$@" -j DROP
}

# mh_partition HOST / mh_heal HOST: cut host HOST off the bridge, and back.
mh_partition() { ip link set "mhv$1" down; }
mh_heal() { ip link set "mhv$1" up; }

# mh_dropped: datagrams the loss faults dropped so far (read before mh_faults_clear).
mh_dropped() {
	mh_total=0
	for mh_h in $MH_HOSTS; do
		mh_n=$(tc -s qdisc show dev "mhv$mh_h" 2>/dev/null |
			sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1)
		mh_total=$((mh_total + ${mh_n:-0}))
		if command -v iptables >/dev/null 2>&1; then
			mh_n=$(mh_exec "$mh_h" iptables -w -L INPUT -v -n -x 2>/dev/null |
				awk '$3 == "DROP" { n += $1 } END { print n + 0 }')
			mh_total=$((mh_total + mh_n))
		fi
	done
	echo "$mh_total"
}

# mh_nfq_delayed: packets nfq-delay delayed (read after mh_faults_clear stopped it).
mh_nfq_delayed() {
	mh_total=0
	for mh_h in $MH_HOSTS; do
		mh_n=$(sed -n 's/.*: \([0-9]*\) packets delayed.*/\1/p' \
			"$WORK/nfq-delay-h$mh_h.log" 2>/dev/null | tail -n 1)
		mh_total=$((mh_total + ${mh_n:-0}))
	done
	echo "$mh_total"
}
