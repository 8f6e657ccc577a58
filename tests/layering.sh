#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The library's layers (CMakeLists.txt) only use the ones below them. Each file's includes are
# checked against what its layer may see:
#   core     acceptor/ proposer/ learner/ lib/core/  the public core headers, libc
#   storage  lib/storage/                            + core, LMDB, Berkeley DB, pthreads
#   net      lib/net/                                + core, msgpack, libsodium
#   config   lib/config/                             + core, storage interface, net
#   node     lib/node/                               + everything above, libevent; no socket
#   metrics  lib/metrics/                            public headers, exposition.h, the config's
#                                                    fields, libevent (evhttp): the node's
#                                                    public interface only
# and the public headers of the cores do not include the configuration, the node, storage
# backends or the network. Usage: layering.sh SOURCE_DIR
set -eu
SRC=$1
cd "$SRC"
bad=0

# check LAYER FILES... -- ALLOWED-INCLUDE-REGEX: every #include of FILES must match
check() {
	layer=$1
	shift
	files=""
	while [ "$1" != "--" ]; do
		files="$files $1"
		shift
	done
	allowed=$2
	for f in $files; do
		grep -h '^#include' "$f" | sed 's/^#include *//; s/[<>"]//g; s/ .*//' |
			while read -r inc; do
				echo "$inc" | grep -Eqx "$allowed" ||
					echo "layering: $f ($layer) includes $inc"
			done
	done >>"$TMP"
}
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT

LIBC='(std[a-z]*|string|limits|inttypes|errno|fcntl|unistd|time|dirent|assert|ctype|math)\.h|sys/[a-z]+\.h|netinet/in\.h|arpa/inet\.h'
CORE_PUBLIC='paxos/(types|message|counters|acceptor|learner|proposer|election|serializer|storage|log|version|membership)\.h'
CORE_LOCAL='batch\.h|merge\.h|error\.h|exposition\.h|log_line\.h|recovery\.h|ballot\.h|instance\.h|pending\.h|repair\.h|settled\.h'
CORE="$LIBC|$CORE_PUBLIC|$CORE_LOCAL"

# lib/core/config_fields.h, the settings' layout, sits with the core so that every layer above
# may see it; no core includes it (the cores take their own options).
check core acceptor/*.c acceptor/*.h learner/*.c proposer/*.c proposer/*.h lib/core/*.c \
	$(ls lib/core/*.h | grep -v 'config_fields\.h$') -- "$CORE"
check core-headers include/paxos/types.h include/paxos/message.h include/paxos/counters.h \
	include/paxos/acceptor.h include/paxos/learner.h include/paxos/proposer.h \
	include/paxos/election.h include/paxos/serializer.h include/paxos/storage.h \
	include/paxos/membership.h -- "$CORE"
check storage lib/storage/*.c lib/storage/*.h -- \
	"$CORE|config_fields\.h|paxos/(config|storage_backends|epoch)\.h|storage_backend\.h|recovery_fence\.h|flusher\.h|overlay\.h|lmdb\.h|db\.h|pthread\.h|signal\.h"
check net lib/net/*.c lib/net/*.h -- \
	"$CORE|config_fields\.h|paxos/(config|transport)\.h|codec\.h|auth\.h|udp\.h|msgpack\.h|sodium\.h|event2/event\.h"
check config lib/config/*.c lib/config/*.h -- \
	"$CORE|config_fields\.h|config_keys\.h|paxos/(config|options|storage_backends)\.h|codec\.h|auth\.h|msgpack\.h|sodium\.h"

# The metrics server reads the node through its public interface (paxos/node.h), not its
# internals; evhttp does its sockets (over bufferevents the server makes, to count them).
check metrics lib/metrics/*.c lib/metrics/*.h -- \
	"$LIBC|pthread\.h|paxos/[a-z_]+\.h|config_fields\.h|exposition\.h|collect\.h|log_line\.h|event2/(event|http|buffer|bufferevent|util|keyvalq_struct|listener)\.h"
grep -Hn '^#include.*\(paxos/metrics\|collect\)\.h' lib/node/*.c lib/node/*.h |
	sed 's/^/layering: the node uses the metrics layer above it: /' >>"$TMP" || true

# The node knows no socket: the network is the transport's (paxos/transport.h).
grep -Hn '^#include <\(sys/socket\|netinet/[a-z]*\|arpa/inet\)\.h>\|^#include "udp\.h"' \
	lib/node/*.c lib/node/*.h | sed 's/^/layering: the node uses sockets: /' >>"$TMP" || true

if [ -s "$TMP" ]; then
	cat "$TMP"
	echo "FAIL: a layer includes a header of a layer above it (see tests/layering.sh)"
	exit 1
fi
echo "layering: core, storage, net, config and node include nothing from the layers above them; metrics uses the node's public interface"
