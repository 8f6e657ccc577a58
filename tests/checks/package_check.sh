#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The Debian packages as a user gets them: built by dpkg-buildpackage from a scratch copy of the
# tree (it writes the .debs beside the tree it builds, so never into the parent of the source
# tree), free of lintian errors, installed with apt; then the binaries run from /usr/bin without
# an RPATH, /etc/paxos/paxos.conf is a conffile, the paxos user exists, systemd-analyze verify
# accepts the installed units, man finds the pages (the API's in section 3), and programs build
# against libpaxos-dev (tests/checks/build_consumers.sh); finally the packages are purged and leave nothing behind.
# Usage: package_check.sh [--keep DIR]   (--keep: copy the .debs to DIR)
# Needs root or sudo: it installs packages (scripts/install-deps.sh --packaging) and removes the
# ones it built. It refuses to run when they are installed already.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
KEEP=""
if [ "${1:-}" = --keep ] && [ $# = 2 ]; then
	KEEP=$2
elif [ $# != 0 ]; then
	echo "usage: package_check.sh [--keep DIR]" >&2
	exit 2
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
PACKAGES="libpaxos1 libpaxos-dev paxos-tools"
for p in $PACKAGES; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		echo "package_check: $p is installed already: remove it first (this check removes it)" >&2
		exit 1
	fi
done
"$SRC/scripts/install-deps.sh" --packaging >/dev/null

WORK=$(mktemp -d)
installed=""
cleanup() {
	[ -z "$installed" ] || DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq $PACKAGES \
		>/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# apt reads the .debs as its own unprivileged user.
chmod 755 "$WORK"
t0=$(date +%s)
VERSION=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
TREE=$WORK/libpaxos-$VERSION
mkdir "$TREE"
# What a clean clone holds: the files git tracks, and new ones it does not ignore.
(cd "$SRC" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$TREE"
(cd "$TREE" && dpkg-buildpackage -us -uc -b -J"$(nproc)") >"$WORK/build.log" 2>&1 || {
	tail -n 40 "$WORK/build.log" >&2
	fail "dpkg-buildpackage failed"
}
t1=$(date +%s)
DEBS=""
for p in $PACKAGES; do
	deb=$WORK/${p}_${VERSION}_$(dpkg --print-architecture).deb
	[ -f "$deb" ] || fail "dpkg-buildpackage made no $(basename "$deb")"
	DEBS="$DEBS $deb"
done
[ -z "$KEEP" ] || { mkdir -p "$KEEP" && cp $DEBS "$KEEP"; }
# Errors fail the check; warnings are shown.
status=0
lintian --fail-on error "$WORK"/libpaxos_"$VERSION"_*.changes >"$WORK/lintian.log" 2>&1 || status=$?
grep -v '^running with root privileges' "$WORK/lintian.log" || true
[ "$status" = 0 ] || fail "lintian reports errors"
t2=$(date +%s)

installed=1
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $DEBS >"$WORK/install.log" 2>&1 || {
	cat "$WORK/install.log" >&2
	fail "apt-get install of the packages failed"
}
[ "$(command -v paxos-acceptor)" = /usr/bin/paxos-acceptor ] || fail "no /usr/bin/paxos-acceptor"
env -u LD_LIBRARY_PATH paxos-acceptor --help >/dev/null || fail "paxos-acceptor --help fails"
for bin in $(dpkg -L paxos-tools | grep '^/usr/bin/'); do
	! readelf -d "$bin" | grep -Eq 'RPATH|RUNPATH' || fail "$bin has an RPATH"
done
dpkg-query -W -f='${Conffiles}\n' paxos-tools | grep -q '^ /etc/paxos/paxos.conf ' ||
	fail "/etc/paxos/paxos.conf is not a conffile"
getent passwd paxos >/dev/null || fail "the package created no paxos user"
if [ -f /usr/share/man/man5/paxos.conf.5.gz ] && command -v man >/dev/null 2>&1; then
	# Images that drop /usr/share/man (path-exclude in dpkg.cfg.d) skip this.
	man -w paxos.conf >/dev/null && man -w paxos-acceptor >/dev/null &&
		man -w paxos_node_new >/dev/null ||
		fail "man does not find paxos.conf(5), paxos-acceptor(1) and paxos_node_new(3)"
	check_man=yes
else
	check_man=no
fi
if command -v systemd-analyze >/dev/null 2>&1; then
	for role in acceptor proposer learner; do
		systemd-analyze verify --man=$check_man "/lib/systemd/system/paxos-$role@.service" \
			"paxos-$role@0.service" || fail "systemd-analyze verify paxos-$role@.service"
	done
fi
"$SRC/tests/checks/build_consumers.sh" "$SRC" /etc/paxos/paxos.conf >/dev/null ||
	fail "programs do not build against libpaxos-dev"
t3=$(date +%s)

# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq $PACKAGES >"$WORK/purge.log" 2>&1 || {
	cat "$WORK/purge.log" >&2
	fail "apt-get purge of the packages failed"
}
installed=""
for f in /usr/bin/paxos-acceptor /etc/paxos/paxos.conf /lib/systemd/system/paxos-acceptor@.service \
	/usr/include/paxos/paxos.h; do
	[ ! -e "$f" ] || fail "$f is left after purging the packages"
done
echo "package_check: $(echo $PACKAGES | sed 's/ /, /g') $VERSION built in $((t1 - t0)) s," \
	"lintian $((t2 - t1)) s, installed and checked in $((t3 - t2)) s, purged"
