#!/bin/sh
# test_docrefs — the tree documents itself: no file in it refers to a
# document that is not in the tree, and every docs/*.md that a file names
# exists. The project's own documents are README.md and docs/, and a
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

echo "1..2"
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

[ "$fails" -eq 0 ]
