#!/bin/sh
# test_lint — docs/contributing.md, "Untrusted input": the unsafe string and
# number functions are
# not called anywhere in the C sources outside tests/. One TAP line per
# banned function; each offender is printed as file:line.
#
# Comments, string and character literals are blanked before matching, so
# a comment that names a banned function is not an offence; a call is the
# name as a whole word followed by "(".
set -u

: "${top_srcdir:?}"

# name  the regular expression of the call it bans  why / what to use instead
banned="atoi	atoi	num_parse_*() (common/num.h): no overflow or junk check
atol	atoll?	num_parse_*() (common/num.h): no overflow or junk check
sscanf	sscanf	num_parse_*() or a cursor: silent overflow, partial matches
strtok	strtok	a cursor or strchr: hidden state, not thread-safe
sprintf	sprintf	snprintf or buf_printf (common/buf.h): unbounded
vsprintf	vsprintf	vsnprintf or buf_vprintf: unbounded
strcpy	strcpy	snprintf, memcpy with a checked length, or strdup: unbounded
strcat	strcat	buf_puts (common/buf.h): unbounded
gets	gets	fgets or getline: unbounded"

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# The C sources of the tree, without tests/ and without build trees (build/,
# build-asan/, distcheck's _build/ and _inst/).
cd "$top_srcdir" || exit 99
find . \( -name .git -o -name tests -o -name build -o -name 'build-*' -o -name _build \
	-o -name _inst -o -name autom4te.cache \) -prune -o \
	-type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | LC_ALL=C sort >"$tmp/files"

# Every file as "path:line:code", with comments and literals blanked (the
# newlines inside a block comment are kept, so line numbers stay right).
: >"$tmp/stripped"
while IFS= read -r f; do
	perl -0777 -ne '
		s{(/\*.*?\*/)|(//[^\n]*)|("(?:\\.|[^"\\\n])*")|('"'"'(?:\\.|[^'"'"'\\\n])*'"'"')}{
			defined $1 ? ($1 =~ tr/\n//cdr) : (defined $2 ? "" : "\"\"")
		}gse;
		my $n = 0;
		print "$ARGV:", ++$n, ":$_\n" for split /\n/, $_, -1;
	' "$f" >>"$tmp/stripped"
done <"$tmp/files"

nfiles=$(wc -l <"$tmp/files")
count=$(printf '%s\n' "$banned" | wc -l)
echo "1..$count"
echo "# $nfiles C files checked"
n=0
fails=0
tab=$(printf '\t')
while IFS="$tab" read -r name re why; do
	n=$((n + 1))
	# "path:line:" ends in ":", so the name follows a non-word character.
	grep -E "^[^:]+:[0-9]+:(.*[^A-Za-z0-9_])?${re}[[:space:]]*\(" "$tmp/stripped" \
		>"$tmp/hits" || true
	if [ -s "$tmp/hits" ]; then
		fails=$((fails + 1))
		echo "not ok $n - no $name() in the sources (use $why)"
		# Show each offending line as it is in the file.
		cut -d: -f1,2 "$tmp/hits" | while IFS=: read -r file line; do
			printf '# %s:%s: %s\n' "$file" "$line" "$(sed -n "${line}p" "$file")"
		done
	else
		echo "ok $n - no $name() in the sources"
	fi
done <<EOF
$banned
EOF

[ "$fails" -eq 0 ]
