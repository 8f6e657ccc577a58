#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Commit subjects of at most 72 characters, the detail in the body: checks every commit
# after BASE (default: the one where the rule began) up to HEAD. Outside a git checkout, or
# in a shallow clone that lacks BASE, it checks what history there is after BASE, or nothing.
# Usage: scripts/commit-subjects.sh [BASE]
set -eu
cd "$(dirname "$0")/.."
BASE=${1:-369c362}
if ! git rev-parse --git-dir >/dev/null 2>&1; then
	echo "commit-subjects: not a git checkout, nothing to check"
	exit 0
fi
if git cat-file -e "$BASE^{commit}" 2>/dev/null; then
	range="$BASE..HEAD"
else
	echo "commit-subjects: $BASE is not in this clone; checking HEAD alone"
	range="-1 HEAD"
fi
# shellcheck disable=SC2086 # range is one or two words on purpose
bad=$(git log --format='%h %s' $range | awk '{ s = $0; sub(/^[^ ]+ /, "", s) } length(s) > 72')
if [ -n "$bad" ]; then
	echo "commit-subjects: subjects longer than 72 characters (put the detail in the body):" >&2
	echo "$bad" >&2
	exit 1
fi
echo "commit-subjects: $(git log --format=%h $range | wc -l) commits, every subject within 72 characters"
