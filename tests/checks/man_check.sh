#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The generated manual pages render without a groff warning and say what their sources say:
# paxos.conf(5) has an entry for every key of paxos.conf with its value, each binary's page
# every long option of its --help, and section 3 (when Doxygen made it) a page for every
# function libpaxos.so exports, which man finds by the function's name.
# Usage: man_check.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
export LC_ALL=C.UTF-8 MANWIDTH=200
# render PAGE: the page as man shows it (groff alone when man-db is not installed)
render() {
	if command -v man >/dev/null 2>&1; then
		man -l "$1"
	else
		groff -man -Tutf8 -P-cbou "$1"
	fi
}
fail=0
for page in "$BUILD"/man/*.[15]; do
	warnings=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
	[ -z "$warnings" ] || {
		echo "FAIL: $page: groff warns: $warnings"
		fail=1
	}
	render "$page" | grep -q '^NAME' || {
		echo "FAIL: $page does not render"
		fail=1
	}
done

conf=$(render "$BUILD/man/paxos.conf.5")
keys=0
# every "key value # meaning" line, commented out or not
for entry in $(sed -n \
	's/^#\{0,1\}\([a-z][a-z0-9-]*\)[[:space:]]\{1,\}\([^[:space:]#]\{1,\}\)[[:space:]]\{1,\}# .*/\1:\2/p' \
	"$SRC/paxos.conf"); do
	keys=$((keys + 1))
	printf '%s\n' "$conf" | grep -q "^ *${entry%%:*} ${entry#*:}\$" || {
		echo "FAIL: paxos.conf.5 has no entry '${entry%%:*} ${entry#*:}'"
		fail=1
	}
done
[ "$keys" -ge 40 ] || {
	echo "FAIL: only $keys keys found in paxos.conf"
	fail=1
}

pages=0
for page in "$BUILD"/man/*.1; do
	[ -e "$page" ] || break
	pages=$((pages + 1))
	binary=$BUILD/$(basename "$page" .1)
	text=$(render "$page")
	for option in $("$binary" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		printf '%s\n' "$text" | grep -q -- "$option" || {
			echo "FAIL: $page does not mention $option"
			fail=1
		}
	done
done

api=""
if [ -d "$BUILD/man/man3" ]; then
	functions=0
	for fn in $(nm -D --defined-only "$BUILD/libpaxos.so" | awk '$2 == "T" { print $3 }'); do
		functions=$((functions + 1))
		[ -e "$BUILD/man/man3/$fn.3paxos" ] || {
			echo "FAIL: no section 3 page for $fn"
			fail=1
		}
	done
	for page in "$BUILD"/man/man3/*.h.3paxos; do
		warnings=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
		[ -z "$warnings" ] || {
			echo "FAIL: $page: groff warns: $warnings"
			fail=1
		}
	done
	if command -v man >/dev/null 2>&1; then
		man -M "$BUILD/man" paxos_node_new 2>/dev/null | grep -q 'paxos_node_new (' || {
			echo "FAIL: man -M $BUILD/man paxos_node_new does not show the function"
			fail=1
		}
	fi
	api="; $functions functions have a section 3 page"
fi
[ "$fail" = 0 ] || exit 1
if [ "$pages" = 0 ]; then
	echo "man_check: paxos.conf.5 has all $keys keys; no binary pages (help2man not installed)$api"
else
	echo "man_check: paxos.conf.5 has all $keys keys; $pages binary pages have every option$api"
fi
