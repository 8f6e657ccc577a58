#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds programs against an installed libpaxos, as its users do, and runs them: a small
# program with pkg-config and with CMake's find_package(paxos), sample/kvstore copied out of
# the tree with its Makefile and its CMakeLists.txt, and the README's C example. The small
# program makes its own libevent loop, as any program handing the node its event_base does,
# naming nothing but libpaxos (pkg-config's Requires, the package's interface links bring
# libevent); it also loads the installed paxos.conf, which must keep its state in
# /var/lib/paxos (the systemd units' state directory).
# Usage: build_consumers.sh SOURCE_DIR CONFIG [PREFIX]
# PREFIX: a cmake --install prefix; without it, the system's copy (the Debian packages).
set -eu
SRC=$1
CONFIG=$2
PREFIX=${3:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RPATH=""
if [ -n "$PREFIX" ]; then
	LIBDIR=$(dirname "$(find "$PREFIX" -name libpaxos.pc)")/..
	export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
	RPATH="-Wl,-rpath,$LIBDIR"
fi

cat >"$WORK/app.c" <<'C'
#include <event2/event.h>
#include <paxos/paxos.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	char err[256], path[300] = "";
	struct event_base *base = event_base_new();
	if (!base)
		return 1;
	event_base_free(base);
	struct paxos_config *cfg = paxos_config_new();
	if (!cfg)
		return 1;
	printf("max value %u: %s\n", paxos_config_max_value(cfg), paxos_strerror(PAXOS_E_TOO_BIG));
	int status = 0;
	if (argc > 1 && paxos_config_load(cfg, argv[1], err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "%s\n", err);
		status = 1;
	} else if (argc > 1 &&
		   (paxos_config_get(cfg, "storage-path", path, sizeof(path)) != PAXOS_OK ||
		    strcmp(path, "/var/lib/paxos") != 0)) {
		fprintf(stderr, "%s: storage-path is %s, not /var/lib/paxos\n", argv[1], path);
		status = 1;
	}
	paxos_config_free(cfg);
	return status;
}
C
# The API takes libevent's event_base: libpaxos.pc requires libevent.
pkg-config --print-requires libpaxos | grep -qx 'libevent' ||
	{ echo "FAIL: libpaxos.pc does not require libevent"; exit 1; }
# shellcheck disable=SC2046,SC2086
cc -o "$WORK/app-pc" "$WORK/app.c" $(pkg-config --cflags --libs libpaxos) $RPATH
"$WORK/app-pc" "$CONFIG" || { echo "FAIL: $CONFIG (pkg-config build)"; exit 1; }

mkdir "$WORK/cm"
cp "$WORK/app.c" "$WORK/cm/app.c"
cat >"$WORK/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(app C)
find_package(paxos REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE paxos::paxos)
# libevent comes with paxos::paxos (the program calls event_base_new); the static library's
# own dependencies come with the package too.
add_executable(app-static app.c)
target_link_libraries(app-static PRIVATE paxos::paxos_static)
CM
cmake -S "$WORK/cm" -B "$WORK/cm/build" ${PREFIX:+-DCMAKE_PREFIX_PATH="$PREFIX"} >/dev/null
cmake --build "$WORK/cm/build" >/dev/null ||
	{ echo "FAIL: a program linking paxos::paxos and calling libevent does not build"; exit 1; }
"$WORK/cm/build/app" "$CONFIG" || { echo "FAIL: $CONFIG (find_package build)"; exit 1; }
"$WORK/cm/build/app-static" "$CONFIG" || { echo "FAIL: $CONFIG (find_package static build)"; exit 1; }

cp -r "$SRC/sample/kvstore" "$WORK/kvstore"
make -C "$WORK/kvstore" clean all >/dev/null
cmake -S "$WORK/kvstore" -B "$WORK/kvstore-build" ${PREFIX:+-DCMAKE_PREFIX_PATH="$PREFIX"} \
	>/dev/null
cmake --build "$WORK/kvstore-build" >/dev/null
for bin in "$WORK/kvstore" "$WORK/kvstore-build"; do
	"$bin/kvstore-replica" --help >/dev/null
	"$bin/kvstore-cli" --help >/dev/null
done

# The README's C example ("Linking the library") compiles as it is, warnings as errors.
awk '/^## Linking the library/ { s = 1 } s && /^```c$/ { c = 1; next } c && /^```$/ { exit }
	c { print }' "$SRC/README.md" >"$WORK/readme.c"
[ -s "$WORK/readme.c" ] || { echo "FAIL: no C example in README.md"; exit 1; }
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Wextra -Werror -o "$WORK/readme" "$WORK/readme.c" \
	$(pkg-config --cflags --libs libpaxos) $RPATH ||
	{ echo "FAIL: the README's C example does not compile against the installed copy"; exit 1; }
echo "build_consumers: pkg-config and find_package(paxos) builds work, sample/kvstore and the" \
	"README example included; $CONFIG loads"
