#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every file of the project (what git tracks, and new files it does not ignore) that can hold a
# comment states its license in its first line (its second after a "#!" line):
#   C sources and headers                      /* SPDX-License-Identifier: BSD-3-Clause */
#   scripts, CMake, Makefiles, configuration   # SPDX-License-Identifier: BSD-3-Clause
# Left out: the fuzz inputs (tests/fuzz/corpus/, tests/fuzz/regressions/), prose (*.md,
# LICENSE, debian/changelog, debian/copyright, which names the license itself) and data
# without comments (debian/source/format, images).
# A file that none of the rules below names is reported too: a new kind of file must be
# sorted into one of them.
# Usage: spdx.sh --check   lists the files without the line; exits 1 if there is one
#        spdx.sh --add     writes the line into them
set -eu
LINE='SPDX-License-Identifier: BSD-3-Clause'
case "${1:-}" in
--check | --add) MODE=$1 ;;
*)
	echo "usage: spdx.sh --check | --add" >&2
	exit 2
	;;
esac
cd "$(dirname "$0")/.."
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
	echo "spdx.sh: $(pwd) is not a git checkout: nothing says which files are the project's" >&2
	exit 77
}

# style FILE: "c" or "hash" (the comment the file takes), "none" (exempt) or "unknown"
style() {
	case "$1" in
	tests/fuzz/corpus/* | tests/fuzz/regressions/*) echo none ;;
	*.md | LICENSE | debian/changelog | debian/copyright | debian/source/format) echo none ;;
	CMakeLists.txt | */CMakeLists.txt | *.cmake | *.cmake.in | *.pc.in) echo hash ;;
	*.png | *.csv | *.log | *.txt | */.gitkeep) echo none ;;
	*.c | *.h | *.h.in) echo c ;;
	*.sh | bench/run-all | .ci/run | debian/rules | Makefile | */Makefile) echo hash ;;
	*.conf | *.service.in | *.sysusers | *.dict | .gitignore | .clang-format) echo hash ;;
	docs/Doxyfile.in) echo hash ;;
	debian/control | debian/*.install | debian/*.docs | debian/*.symbols) echo hash ;;
	*) echo unknown ;;
	esac
}

# has FILE: whether the line is where it belongs
has() {
	first=$(sed -n 1p "$1")
	case "$first" in
	'#!'*) first=$(sed -n 2p "$1") ;;
	esac
	case "$first" in
	"/* $LINE */" | "# $LINE") return 0 ;;
	*) return 1 ;;
	esac
}

# add FILE STYLE
add() {
	if [ "$2" = c ]; then
		text="/* $LINE */"
	else
		text="# $LINE"
	fi
	tmp=$(mktemp)
	if head -n 1 "$1" | grep -q '^#!'; then
		{ head -n 1 "$1" && echo "$text" && tail -n +2 "$1"; } >"$tmp"
	else
		{ echo "$text" && cat "$1"; } >"$tmp"
	fi
	# keep the file's mode (scripts stay executable)
	cat "$tmp" >"$1"
	rm -f "$tmp"
}

missing=0
unknown=0
files=$(mktemp)
trap 'rm -f "$files"' EXIT
git ls-files -z --cached --others --exclude-standard | tr '\0' '\n' | sort -u >"$files"
while IFS= read -r f; do
	[ -f "$f" ] || continue # deleted, not yet committed
	s=$(style "$f")
	case "$s" in
	none) continue ;;
	unknown)
		echo "spdx.sh: $f: no rule says whether it takes the line (scripts/spdx.sh: style)"
		unknown=$((unknown + 1))
		continue
		;;
	esac
	has "$f" && continue
	if [ "$MODE" = --add ]; then
		add "$f" "$s"
		echo "added: $f"
	else
		echo "$f"
		missing=$((missing + 1))
	fi
done <"$files"
if [ "$MODE" = --check ] && [ $((missing + unknown)) -gt 0 ]; then
	echo "spdx.sh: $missing files lack '$LINE' (scripts/spdx.sh --add writes it)," \
		"$unknown files are not sorted" >&2
	exit 1
fi
[ "$unknown" = 0 ]
