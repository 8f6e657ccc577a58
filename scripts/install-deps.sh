#!/bin/sh
# Installs what libpaxos needs to build and test on Debian. Safe to run again.
set -eu
pkgs="build-essential cmake pkg-config libevent-dev libmsgpack-dev liblmdb-dev libdb-dev check
      iproute2 util-linux xxd"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing:$missing"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
