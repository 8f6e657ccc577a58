#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs a test script inside a private network namespace with only loopback up, so no
# datagram of the test can leave this host. Usage: netns-run.sh SCRIPT ARGS...
set -eu
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
