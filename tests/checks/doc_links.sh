#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every pointer into the documentation leads somewhere:
# - each relative Markdown link of a tracked *.md file names a file that exists, and a
#   "#anchor" after it a heading of that file (GitHub's anchors: lower case, punctuation
#   dropped, blanks as hyphens);
# - each section named in quotes after a document, anywhere in the tracked text files
#   (docs/operating.md, "Changing the cluster"; README, "Quick start"; a comment or a help
#   text alike), is the start of a heading of that document (or of a paragraph's bold title).
# Results of benchmarks (bench/results/) and fuzz inputs are left out. Outside a git checkout
# nothing says which files are the project's: skipped (77).
# Usage: doc_links.sh SOURCE_DIR
set -eu
cd "$1"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
	echo "doc_links: not a git checkout: skipped"
	exit 77
}
git ls-files -z --cached --others --exclude-standard | python3 -c '
import os, re, sys

files = sorted(set(f for f in sys.stdin.read().split("\0") if f))
files = [f for f in files if os.path.isfile(f)
         and not f.startswith(("bench/results/", "tests/fuzz/corpus/", "tests/fuzz/regressions/"))]
fence = re.compile(r"^\s*(```|~~~)")
heading_cache = {}

def headings(path):
    """The headings of a Markdown file, outside code blocks, as written and as anchors."""
    if path in heading_cache:
        return heading_cache[path]
    titles, anchors, code = [], set(), False
    for line in open(path, encoding="utf-8", errors="replace"):
        if fence.match(line):
            code = not code
            continue
        m = None if code else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            # a paragraph or item that starts with its title in bold is a section too
            bold = None if code else re.match(r"^(?:\s*- )?\*\*([^*]+?)\.?\*\*", line)
            if bold:
                titles.append(bold.group(1).replace("`", ""))
            continue
        title = re.sub(r"\s*\{#[^}]*\}$", "", m.group(1)).replace("`", "")
        titles.append(title)
        anchor = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        n, base = 1, anchor
        while anchor in anchors:
            anchor, n = "%s-%d" % (base, n), n + 1
        anchors.add(anchor)
    heading_cache[path] = (titles, anchors)
    return heading_cache[path]

def resolve(name, source):
    for path in (name, os.path.normpath(os.path.join(os.path.dirname(source), name))):
        if os.path.exists(path):
            return path
    return None

failures, links, sections = [], 0, 0
link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# a document, then "," or ":" (or "s"), then a quoted section; lines joined first, so that a
# reference may run on into the next line of a comment
section = re.compile(r"((?:[\w.-]+/)*[\w-]+\.md|\bREADME\b(?!\.))`?(?:,|:|\x27s)\s+\\?\"([^\"\\]+)\\?\"")

for f in files:
    try:
        text = open(f, encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    if f.endswith(".md"):
        code = False
        for number, line in enumerate(text.split("\n"), 1):
            if fence.match(line):
                code = not code
                continue
            if code:
                continue
            for target in link.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z]+:", target):
                    continue
                links += 1
                name, _, anchor = target.partition("#")
                path = f if not name else resolve(name, f)
                if path is None:
                    failures.append("%s:%d: link to %s: no such file" % (f, number, name))
                elif anchor and path.endswith(".md") and anchor not in headings(path)[1]:
                    failures.append("%s:%d: link to %s: %s has no heading #%s"
                                    % (f, number, target, path, anchor))
    joined = re.sub(r"\s*\n\s*(?:#+|\*|//|\"|)\s*", " ", text)
    for name, title in section.findall(joined):
        path = resolve("README.md" if name == "README" else name, f)
        if path is None:
            continue  # not a document of this tree
        sections += 1
        if not any(t.startswith(title) for t in headings(path)[0]):
            failures.append("%s: names section \"%s\" of %s, which has no such heading"
                            % (f, title, path))

for failure in failures:
    print("FAIL: " + failure)
if failures:
    sys.exit(1)
print("doc_links: %d links and %d named sections lead somewhere" % (links, sections))
'
