#!/bin/sh
# test_docrefs — the tree documents itself: no file in it refers to a
# document that is not in the tree, every docs/*.md that a file names
# exists, and the README's layout table and the tree agree (every folder at
# the top and in daemon/ is in the table, and everything the table names is
# there). The project's own documents are README.md and docs/, and a
# comment that sends the reader elsewhere names one of them. Prints TAP;
# each offender is printed as file:line.
#
# The names of the outside documents are written in pieces below, so that
# this file does not match itself.
set -u

: "${top_srcdir:?}"

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

cd "$top_srcdir" || exit 99

# Every text file of the tree, without version control and build trees
# (build/, build-asan/, build-tsan/, distcheck's _build/ and _inst/).
find . \( -name .git -o -name build -o -name 'build-*' -o -name _build -o -name _inst \
	-o -name autom4te.cache \) -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort \
	>"$tmp/files"

outside='(DESIGN|STYLE|tinkerbell|peers)[.]md|LAB''NOTES'

echo "1..3"
echo "# $(wc -l <"$tmp/files") files checked"

tr '\n' '\0' <"$tmp/files" | xargs -0 grep -HInEi -- "$outside" >"$tmp/hits" 2>/dev/null
if [ -s "$tmp/hits" ]; then
	echo "not ok 1 - no file refers to a document outside the tree (point to docs/ instead)"
	sed 's/^/# /' "$tmp/hits"
	fails=1
else
	echo "ok 1 - no file refers to a document outside the tree"
	fails=0
fi

# docs/<name>.md as named in files outside docs/ (docs/ links its pages
# relatively, and those links are read by whoever reads the pages).
grep -v '^docs/' "$tmp/files" | tr '\n' '\0' |
	xargs -0 grep -HIoE -- 'docs/[A-Za-z0-9_.-]+[.]md' 2>/dev/null | sort -u >"$tmp/named"
: >"$tmp/missing"
while IFS=: read -r file doc; do
	[ -f "$doc" ] || printf '%s: %s\n' "$file" "$doc" >>"$tmp/missing"
done <"$tmp/named"
if [ -s "$tmp/missing" ]; then
	echo "not ok 2 - every docs/*.md named in the tree exists"
	sed 's/^/# missing: /' "$tmp/missing"
	fails=$((fails + 1))
else
	echo "ok 2 - every docs/*.md named in the tree exists ($(cut -d: -f2 "$tmp/named" | sort -u | wc -l) named)"
fi

# The README's layout table: the fenced block after "## Layout of the
# tree". A line "name/ ..." names a top-level folder; an indented one
# "  name/ ..." or "  name.c ..." names a folder or file of daemon/, the
# only folder the table opens.
sed -n '/^## Layout of the tree/,/^## /p' README.md | sed -n '/^```/,/^```/p' >"$tmp/layout"
sed -n 's|^\([a-z][A-Za-z0-9_-]*\)/ .*|\1|p' "$tmp/layout" | sort -u >"$tmp/table-top"
sed -n 's|^  \([a-z][A-Za-z0-9_.-]*\)[ /].*|daemon/\1|p' "$tmp/layout" | sort -u >"$tmp/table-daemon"
find . -mindepth 1 -maxdepth 1 -type d ! -name '.*' ! -name build ! -name 'build-*' \
	! -name _build ! -name _inst ! -name autom4te.cache ! -name build-aux ! -name m4 |
	sed 's|^\./||' | sort -u >"$tmp/tree-top"
find daemon -mindepth 1 -maxdepth 1 -type d | sort -u >"$tmp/tree-daemon"
: >"$tmp/disagree"
comm -13 "$tmp/table-top" "$tmp/tree-top" | sed 's|$|/: in the tree, not in the table|' >>"$tmp/disagree"
comm -23 "$tmp/table-top" "$tmp/tree-top" | sed 's|$|/: in the table, not in the tree|' >>"$tmp/disagree"
comm -13 "$tmp/table-daemon" "$tmp/tree-daemon" | sed 's|$|/: in the tree, not in the table|' >>"$tmp/disagree"
while IFS= read -r f; do
	[ -e "$f" ] || echo "$f: in the table, not in the tree" >>"$tmp/disagree"
done <"$tmp/table-daemon"
if [ ! -s "$tmp/table-top" ]; then
	echo "not ok 3 - the README's layout table and the tree agree (no table found)"
	fails=$((fails + 1))
elif [ -s "$tmp/disagree" ]; then
	echo "not ok 3 - the README's layout table and the tree agree"
	sed 's/^/# /' "$tmp/disagree"
	fails=$((fails + 1))
else
	echo "ok 3 - the README's layout table and the tree agree ($(wc -l <"$tmp/table-top") folders, $(wc -l <"$tmp/table-daemon") in daemon/)"
fi

[ "$fails" -eq 0 ]
