#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Installs what libpaxos needs to build and test on Debian. Safe to run again.
# Usage: install-deps.sh [--bench] [--packaging]
#   --bench      also gnuplot, for the plots of bench/run-all (make bench)
#   --packaging  also what building and checking the Debian packages takes (make packages)
# clang, its sanitizer/libFuzzer runtime and valgrind serve make sanitize, make fuzz and
# tests/e2e/e2e_valgrind.sh. curl and the Prometheus client library's parser serve
# tests/e2e/e2e_metrics.sh; help2man and man-db the manual pages (built, then checked by
# tests/checks/man_check.sh); systemd brings systemd-analyze, which checks the units
# (tests/e2e/e2e_units.sh); faketime runs an acceptor whose clock is wrong (tests/e2e/e2e_replay.sh).
set -eu
pkgs="build-essential cmake pkg-config libevent-dev libmsgpack-dev liblmdb-dev libdb-dev libsodium-dev check
      iproute2 iptables util-linux xxd clang clang-format valgrind curl python3-prometheus-client
      help2man man-db systemd faketime doxygen"
for arg in "$@"; do
	case $arg in
	--bench) pkgs="$pkgs gnuplot-nox" ;;
	--packaging) pkgs="$pkgs debhelper dpkg-dev fakeroot lintian" ;;
	*)
		echo "usage: install-deps.sh [--bench] [--packaging]" >&2
		exit 2
		;;
	esac
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=""

# install PACKAGE...: the ones not installed yet
install() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "installing:$missing"
	[ -n "$updated" ] || $sudo apt-get update -qq
	updated=1
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
}

install $pkgs
# libFuzzer and the sanitizer runtimes are only a recommendation of clang: name them.
install "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
