#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Writes the section 3 manual pages of the public API with Doxygen (the Doxyfile make docs
# uses, man output only): a page per public header, each function, type and macro in it, and a
# page per function, type and macro named paxos_* or PAXOS_* that points to its header's
# (man paxos_node_new). The pages' extension is 3paxos, so that no header's page (node.h,
# log.h) takes a name another package's pages use; man finds them in section 3 all the same.
# Doxygen's link pages for struct fields and enum members of other names are left out: a
# field called "data" is not a manual page of its own. Warnings are make docs' to report.
# Usage: api2man.sh DOXYGEN DOXYFILE OUTPUT_DIR
set -eu
DOXYGEN=$1
DOXYFILE=$2
OUT=$3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
{
	cat "$DOXYFILE"
	printf '%s\n' "OUTPUT_DIRECTORY = $WORK" "WARN_LOGFILE = $WORK/warnings.log" \
		"WARN_AS_ERROR = NO" "GENERATE_HTML = NO" "GENERATE_MAN = YES" "MAN_OUTPUT = man" \
		"MAN_SUBDIR = man3" "MAN_EXTENSION = .3paxos" "MAN_LINKS = YES"
} | "$DOXYGEN" -
rm -rf "$OUT"
mkdir -p "$OUT"
for page in "$WORK"/man/man3/*.3paxos; do
	case $(basename "$page") in
	paxos_* | PAXOS_* | *.h.3paxos)
		cp "$page" "$OUT/"
		;;
	esac
done
[ -e "$OUT/paxos.h.3paxos" ] && [ -e "$OUT/paxos_node_new.3paxos" ] || {
	echo "api2man.sh: Doxygen wrote no page for paxos.h or paxos_node_new" >&2
	exit 1
}
