#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs a test script inside a private network namespace with only loopback up, so no
# datagram of the test can leave this host. Usage: netns-run.sh SCRIPT ARGS...
set -eu
# PAXOS_TEST_TMPFS=1 (the test suite's end-to-end tests, not benchmarks): scratch directories
# (mktemp) go to tmpfs where it has 2 GB free. A test's fsyncs then wait for no device, whose
# flushes a shared host may hold back for many seconds; how the library bears a slow disk is
# tested on purpose (e2e_slow_disk), not left to the host's.
if [ "${PAXOS_TEST_TMPFS:-}" = 1 ] && [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] &&
	[ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -ge 2097152 ]; then
	export TMPDIR=/dev/shm
fi
if [ "${PAXOS_IN_NETNS:-}" = 1 ]; then
	ip link set lo up
	exec "$@"
fi
export PAXOS_IN_NETNS=1
if [ "$(id -u)" -eq 0 ]; then
	exec unshare --net -- "$0" "$@"
fi
# Unprivileged: a user namespace maps us to root inside it.
exec unshare --map-root-user --net -- "$0" "$@"
