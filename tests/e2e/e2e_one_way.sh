#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A one-way partition costs what a crash costs: on the hosts of e2e_multihost.sh, the leader's
# host receives nothing (deaf), or nothing on the leader's own port (deafport), while what it
# sends goes out (its heartbeats still reach the other proposer). The leader must step down for
# want of an acceptor quorum (check-quorum) and the other proposer take over, so that values
# submitted meanwhile are delivered; healed, the cluster goes on. A follower that hears nothing
# (deaffollower) must stand out of the election likewise, the leader going on. These are
# e2e_multihost.sh's scenarios of those names (PAXOS_TRANSPORT as there).
# Usage: e2e_one_way.sh BUILD_DIR SOURCE_DIR
set -eu
MH_SCENARIOS=${MH_SCENARIOS:-deaf deafport deaffollower}
export MH_SCENARIOS
exec "$2/tests/e2e/e2e_multihost.sh" "$@"
