#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Installs the build into a scratch prefix: every file a user needs is there (binaries, headers,
# libraries, pkg-config file, CMake package, paxos.conf as shipped and as installed for the
# systemd units, the units, the manual pages), programs build against it
# (tests/checks/build_consumers.sh), and the installed binaries run from the prefix alone.
# Usage: install_check.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
for f in bin/paxos-acceptor bin/paxos-proposer bin/paxos-learner bin/paxos-replica bin/paxos-keygen \
	bin/paxos-client include/paxos/paxos.h include/paxos/version.h share/paxos/paxos.conf share/paxos/paxos-unicast.conf \
	etc/paxos/paxos.conf lib/systemd/system/paxos-acceptor@.service lib/sysusers.d/paxos.conf \
	share/man/man5/paxos.conf.5; do
	[ -e "$PREFIX/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
LIBDIR=$(dirname "$(find "$PREFIX" -name libpaxos.pc)")/..
for f in libpaxos.so libpaxos.a cmake/paxos/paxosConfig.cmake; do
	[ -e "$LIBDIR/$f" ] || { echo "FAIL: lib/$f not installed"; exit 1; }
done
# A manual page for every installed binary, when help2man made them.
if ls "$BUILD"/man/*.1 >/dev/null 2>&1; then
	for bin in "$PREFIX"/bin/*; do
		[ -e "$PREFIX/share/man/man1/$(basename "$bin").1" ] ||
			{ echo "FAIL: no manual page for $(basename "$bin")"; exit 1; }
	done
fi
# The API's section 3 pages, when Doxygen made them (man paxos_node_new).
if [ -d "$BUILD/man/man3" ]; then
	for f in paxos_node_new.3paxos node.h.3paxos; do
		[ -e "$PREFIX/share/man/man3/$f" ] || { echo "FAIL: share/man/man3/$f not installed"; exit 1; }
	done
fi
# The installed paxos.conf is the shipped one but for storage-path (and the header line that
# says so).
settings=$(diff "$SRC/paxos.conf" "$PREFIX/etc/paxos/paxos.conf" | grep '^[<>] [^#]' | wc -l)
[ "$settings" = 2 ] && grep -q '^storage-path  */var/lib/paxos ' "$PREFIX/etc/paxos/paxos.conf" ||
	{ echo "FAIL: etc/paxos/paxos.conf differs from paxos.conf in more than storage-path"; exit 1; }

"$SRC/tests/checks/build_consumers.sh" "$SRC" "$PREFIX/etc/paxos/paxos.conf" "$PREFIX"

# Installed binaries run from the prefix alone (their RPATH is $ORIGIN/../lib...).
env -u LD_LIBRARY_PATH "$PREFIX/bin/paxos-client" --help >/dev/null ||
	{ echo "FAIL: the installed paxos-client does not run"; exit 1; }
env -u LD_LIBRARY_PATH "$PREFIX/bin/paxos-acceptor" --help >/dev/null ||
	{ echo "FAIL: the installed paxos-acceptor does not run"; exit 1; }

# libpaxos.so exports its public API only: every symbol carries the paxos_ prefix.
others=$(nm -D --defined-only "$LIBDIR/libpaxos.so" | awk '{ print $3 }' | grep -v '^paxos_' || true)
[ -z "$others" ] || { echo "FAIL: libpaxos.so exports symbols outside the API: $others"; exit 1; }
echo "install_check: every file installed, programs build against the prefix, installed" \
	"binaries run from it"
