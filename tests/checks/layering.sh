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
# backends or the network. Given the build directory too, the same holds for what the layers'
# object files link: no symbol a layer uses is defined by a layer above it (nm).
# Usage: layering.sh SOURCE_DIR [BUILD_DIR]
set -eu
SRC=$1
BUILD=${2:-}
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

LIBC='(std[a-z]*|string|limits|inttypes|errno|fcntl|unistd|time|dirent|assert|ctype|math|endian)\.h|sys/[a-z]+\.h|netinet/in\.h|arpa/inet\.h'
CORE_PUBLIC='paxos/(types|message|counters|acceptor|learner|proposer|election|serializer|storage|log|version|membership|session_table)\.h'
CORE_LOCAL='paxos_assert\.h|batch\.h|bytes\.h|merge\.h|error\.h|exposition\.h|log_line\.h|recovery\.h|ballot\.h|instance\.h|congestion\.h|pending\.h|repair\.h|settled\.h|leader_state\.h|window\.h|state\.h|slots\.h'
CORE="$LIBC|$CORE_PUBLIC|$CORE_LOCAL"

# lib/core/config_fields.h, the settings' layout, sits with the core so that every layer above
# may see it; no core includes it (the cores take their own options).
check core acceptor/*.c acceptor/*.h learner/*.c learner/*.h proposer/*.c proposer/*.h \
	lib/core/*.c $(ls lib/core/*.h | grep -v 'config_fields\.h$') -- "$CORE"
check core-headers include/paxos/types.h include/paxos/message.h include/paxos/counters.h \
	include/paxos/acceptor.h include/paxos/learner.h include/paxos/proposer.h \
	include/paxos/election.h include/paxos/serializer.h include/paxos/storage.h \
	include/paxos/membership.h include/paxos/session_table.h -- "$CORE"
check storage lib/storage/*.c lib/storage/*.h -- \
	"$CORE|config_fields\.h|paxos/(config|storage_backends|epoch)\.h|storage_backend\.h|storage_head\.h|bdb\.h|recovery_fence\.h|membership_file\.h|flusher\.h|overlay\.h|lmdb\.h|db\.h|pthread\.h|signal\.h"
check net lib/net/*.c lib/net/*.h -- \
	"$CORE|config_fields\.h|paxos/(config|transport)\.h|codec\.h|wire_schema\.h|auth\.h|auth_key\.h|admin_mac\.h|udp\.h|unicast_state\.h|msgpack\.h|sodium\.h|event2/event\.h"
check config lib/config/*.c lib/config/*.h -- \
	"$CORE|config_fields\.h|config_keys\.h|parsing\.h|paxos/(config|options|storage_backends)\.h|codec\.h|auth\.h|msgpack\.h|sodium\.h"

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
	echo "FAIL: a layer includes a header of a layer above it (see tests/checks/layering.sh)"
	exit 1
fi
echo "layering: core, storage, net, config and node include nothing from the layers above them; metrics uses the node's public interface"

[ -n "$BUILD" ] || exit 0
# Links, in the order of CMakeLists.txt's paxos_layer calls: the symbols each layer's objects
# define and those they leave undefined.
LAYERS="core storage net config node metrics"
SYMS=$(mktemp -d)
trap 'rm -f "$TMP"; rm -rf "$SYMS"' EXIT
for layer in $LAYERS; do
	objects=$(find "$BUILD/CMakeFiles/paxos_$layer.dir" -name '*.o' 2>/dev/null | sort)
	if [ -z "$objects" ]; then
		echo "FAIL: no object files of layer $layer under $BUILD (build it first)"
		exit 1
	fi
	# shellcheck disable=SC2086
	nm -g --defined-only $objects | awk 'NF == 3 { print $3 }' | sort -u >"$SYMS/$layer.defined"
	# shellcheck disable=SC2086
	nm -u $objects | awk 'NF >= 1 && $NF !~ /:$/ { print $NF }' | sort -u >"$SYMS/$layer.used"
done
for layer in $LAYERS; do
	above=no
	for other in $LAYERS; do
		if [ "$other" = "$layer" ]; then
			above=yes
		elif [ $above = yes ]; then
			comm -12 "$SYMS/$layer.used" "$SYMS/$other.defined" |
				sed "s/^/layering: the $layer layer links $other's /" >>"$TMP"
		fi
	done
done
if [ -s "$TMP" ]; then
	cat "$TMP"
	echo "FAIL: a layer links a symbol of a layer above it (see tests/checks/layering.sh)"
	exit 1
fi
echo "layering: no layer links a symbol defined by a layer above it ($(echo $LAYERS | tr ' ' '<'))"
