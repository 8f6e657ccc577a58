#!/bin/sh
# Installs the build into a scratch prefix and builds a program against it twice: with
# pkg-config and with CMake's find_package(paxos). Usage: install_check.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
for f in bin/paxos-acceptor bin/paxos-proposer bin/paxos-learner bin/paxos-replica bin/paxos-keygen \
	bin/paxos-client include/paxos/paxos.h share/paxos/paxos.conf share/paxos/paxos-unicast.conf; do
	[ -e "$PREFIX/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
LIBDIR=$(dirname "$(find "$PREFIX" -name libpaxos.pc)")/..
for f in libpaxos.so libpaxos.a cmake/paxos/paxosConfig.cmake; do
	[ -e "$LIBDIR/$f" ] || { echo "FAIL: lib/$f not installed"; exit 1; }
done

cat >"$WORK/app.c" <<'C'
#include <paxos/paxos.h>
#include <stdio.h>
int main(void)
{
	struct paxos_config *cfg = paxos_config_new();
	if (!cfg)
		return 1;
	printf("max value %u: %s\n", paxos_config_max_value(cfg), paxos_strerror(PAXOS_E_TOO_BIG));
	paxos_config_free(cfg);
	return 0;
}
C
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
cc -o "$WORK/app-pc" "$WORK/app.c" $(pkg-config --cflags --libs libpaxos) -Wl,-rpath,"$LIBDIR"
"$WORK/app-pc"

mkdir "$WORK/cm"
cp "$WORK/app.c" "$WORK/cm/app.c"
cat >"$WORK/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(app C)
find_package(paxos REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE paxos::paxos)
CM
cmake -S "$WORK/cm" -B "$WORK/cm/build" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$WORK/cm/build" >/dev/null
"$WORK/cm/build/app"

# The sample application, copied out of the tree, built against the installed copy with its
# Makefile (pkg-config) and with its CMakeLists.txt (find_package(paxos)).
SRC=$2
cp -r "$SRC/sample/kvstore" "$WORK/kvstore"
make -C "$WORK/kvstore" clean all >/dev/null
cmake -S "$WORK/kvstore" -B "$WORK/kvstore-build" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$WORK/kvstore-build" >/dev/null
for bin in "$WORK/kvstore" "$WORK/kvstore-build"; do
	"$bin/kvstore-replica" --help >/dev/null
	"$bin/kvstore-cli" --help >/dev/null
done
# Installed binaries run from the prefix alone (their RPATH is $ORIGIN/../lib...).
env -u LD_LIBRARY_PATH "$PREFIX/bin/paxos-client" --help >/dev/null ||
	{ echo "FAIL: the installed paxos-client does not run"; exit 1; }
env -u LD_LIBRARY_PATH "$PREFIX/bin/paxos-acceptor" --help >/dev/null ||
	{ echo "FAIL: the installed paxos-acceptor does not run"; exit 1; }

# libpaxos.so exports its public API only: every symbol carries the paxos_ prefix.
others=$(nm -D --defined-only "$LIBDIR/libpaxos.so" | awk '{ print $3 }' | grep -v '^paxos_' || true)
[ -z "$others" ] || { echo "FAIL: libpaxos.so exports symbols outside the API: $others"; exit 1; }

# The README's C example ("Using the library") compiles as it is, warnings as errors.
awk '/^## Using the library/ { s = 1 } s && /^```c$/ { c = 1; next } c && /^```$/ { exit }
	c { print }' "$SRC/README.md" >"$WORK/readme.c"
[ -s "$WORK/readme.c" ] || { echo "FAIL: no C example in README.md"; exit 1; }
cc -std=c11 -Wall -Wextra -Werror -o "$WORK/readme" "$WORK/readme.c" \
	$(pkg-config --cflags --libs libpaxos) -Wl,-rpath,"$LIBDIR" ||
	{ echo "FAIL: the README's C example does not compile against the installed copy"; exit 1; }
echo "install_check: pkg-config and find_package(paxos) builds work, sample/kvstore and the" \
	"README example included; installed binaries run from the prefix"
