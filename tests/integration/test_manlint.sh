#!/bin/sh
# test_manlint — every manual page in man/ is clean under `mandoc -Tlint`:
# one TAP line per page, failing on any message mandoc prints.
#
# mandoc looks up .Xr references only among installed manuals, so a
# reference to one of our own pages is accepted when that page is in man/
# (a stronger check than the installed copy), and a reference to another
# project's page is held against us only where manuals are installed at all
# (ls(1) is there), since minimal images leave them out. Prints TAP.
set -u

: "${top_srcdir:?}"

if ! command -v mandoc >/dev/null 2>&1; then
	echo "1..0 # SKIP mandoc is not installed"
	exit 0
fi

pages=$(ls "$top_srcdir"/man/*.[1-9] 2>/dev/null)
if [ -z "$pages" ]; then
	echo "1..0 # SKIP no manual pages in man/"
	exit 0
fi

have_system_manuals=no
for f in /usr/share/man/man1/ls.1 /usr/share/man/man1/ls.1.gz; do
	[ -e "$f" ] && have_system_manuals=yes
done

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

echo "1..$(echo "$pages" | wc -l)"
n=0
fails=0
for page in $pages; do
	n=$((n + 1))
	name=$(basename "$page")
	mandoc -Tlint "$page" >"$tmp/lint.out" 2>&1
	: >"$tmp/bad"
	while IFS= read -r line; do
		# mandoc 1.14 says this when it found the manual on disk but
		# there is no mandoc.db (Debian uses man-db): found, not an error.
		case "$line" in
		*"outdated mandoc.db lacks"*) continue ;;
		esac
		ref=$(printf '%s\n' "$line" |
			sed -n 's/.*STYLE: referenced manual not found: Xr \([^ ]*\) \([0-9a-z]*\).*/\1.\2/p')
		if [ -n "$ref" ]; then
			if [ -e "$top_srcdir/man/$ref" ]; then
				continue
			fi
			case "$ref" in
			ironbell*) ;; # ours, and not in man/: a dangling reference
			*) [ "$have_system_manuals" = yes ] || continue ;;
			esac
		fi
		printf '%s\n' "$line" >>"$tmp/bad"
	done <"$tmp/lint.out"
	if [ -s "$tmp/bad" ]; then
		fails=$((fails + 1))
		echo "not ok $n - mandoc -Tlint man/$name"
		sed 's/^/# /' "$tmp/bad"
	else
		echo "ok $n - mandoc -Tlint man/$name"
	fi
done

[ "$fails" -eq 0 ]
