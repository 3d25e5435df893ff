#!/bin/sh
# test_layering — who may include whose headers. The parts of ironbell
# depend on common/ and store/ only; the daemon (daemon/ and any folder
# under it) puts them together, and nothing else depends on the daemon.
# The rules, one TAP line each, every offender printed as file:line:
#
#  1. No file outside daemon/ includes a daemon header ("daemon/..."),
#     except the tests of daemon code listed in daemon_tests below.
#  2. A part (dhcp/ tftp/ ipxe/ metadata/ syslog/, and bmc/ workflow/
#     kube/ agent/ once they exist) includes only the headers of common/,
#     store/ and its own folder.
#  3. common/ includes only common/; store/ only common/ and store/.
#  4. Outside its folder, a part is known by its one public header, named
#     after it (dhcp/dhcp.h, tftp/tftp.h, ...): only the tests (tests/)
#     include its other headers (the codec, the policy, the internals).
#
# System headers (<...>) and autoheader's "config.h" are always allowed.
# An #include of a project header with <...> counts as one with "...".
set -u

: "${top_srcdir:?}"

# Tests of daemon code: they may include the daemon's headers.
daemon_tests="tests/unit/check_answers.c
tests/unit/check_api.c
tests/unit/check_config.c
tests/unit/check_daemon_settings.c
tests/unit/check_sendfile.c
tests/fuzz/fuzz_api_route.c
tests/fuzz/fuzz_config.c"

parts="dhcp tftp ipxe metadata syslog bmc workflow kube agent"

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# The C sources of the tree, without build trees (build/, build-asan/,
# distcheck's _build/ and _inst/).
cd "$top_srcdir" || exit 99
find . \( -name .git -o -name build -o -name 'build-*' -o -name _build -o -name _inst \
	-o -name autom4te.cache \) -prune -o \
	-type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | LC_ALL=C sort >"$tmp/files"

# Every include of a header that is not a system one, as
# "file:line:header": quoted ones, and <...> ones under a top folder of
# the tree. "config.h" is left out.
tops=$(find . -mindepth 1 -maxdepth 1 -type d ! -name '.*' | sed 's|^\./||' | tr '\n' '|')
tops=${tops%|}
while IFS= read -r f; do
	awk -v f="$f" -v tops="^($tops)/" '
		/^[ \t]*#[ \t]*include[ \t]*["<]/ {
			s = $0
			sub(/^[ \t]*#[ \t]*include[ \t]*/, "", s)
			q = substr(s, 1, 1)
			h = substr(s, 2)
			if (q == "<")
				sub(/>.*/, "", h)
			else
				sub(/".*/, "", h)
			if (h == "config.h")
				next
			if (q == "<" && h !~ tops)
				next
			print f ":" FNR ":" h
		}' "$f"
done <"$tmp/files" >"$tmp/includes"

nfiles=$(wc -l <"$tmp/files")
existing=""
for p in $parts; do
	[ -d "$p" ] && existing="$existing $p"
done
# rule 1, one line per existing part, common/, store/, rule 4
count=$((1 + $(echo $existing | wc -w) + 2 + 1))
echo "1..$count"
echo "# $nfiles C files, $(wc -l <"$tmp/includes") project includes checked"

n=0
fails=0

# report DESCRIPTION: "ok" when $tmp/hits is empty, else "not ok" and
# each offender as file:line with the line as it is in the file.
report() {
	n=$((n + 1))
	if [ -s "$tmp/hits" ]; then
		fails=$((fails + 1))
		echo "not ok $n - $1"
		cut -d: -f1,2 "$tmp/hits" | while IFS=: read -r file line; do
			printf '# %s:%s: %s\n' "$file" "$line" "$(sed -n "${line}p" "$file")"
		done
	else
		echo "ok $n - $1"
	fi
}

# 1. daemon headers outside daemon/
printf '%s\n' "$daemon_tests" >"$tmp/allowed"
grep -E '^[^:]+:[0-9]+:daemon/' "$tmp/includes" | grep -v '^daemon/' |
	while IFS=: read -r file line header; do
		grep -qxF "$file" "$tmp/allowed" || echo "$file:$line:$header"
	done >"$tmp/hits"
report "no daemon header is included outside daemon/ but by the tests of daemon code"

# folder_rule FOLDER ALLOWED...: the includes of FOLDER's files name only
# headers under the ALLOWED folders.
folder_rule() {
	folder=$1
	shift
	re=$(printf '%s|' "$@")
	re="^(${re%|})/"
	grep "^$folder/" "$tmp/includes" | while IFS=: read -r file line header; do
		printf '%s\n' "$header" | grep -qE "$re" || echo "$file:$line:$header"
	done >"$tmp/hits"
	report "$folder/ includes only $(printf '%s/ ' "$@")headers"
}

# 2. the parts
for p in $existing; do
	folder_rule "$p" common store "$p"
done
# 3. common/ and store/
folder_rule common common
folder_rule store common store

# 4. a part's headers other than its public one, outside its folder
for p in $existing; do
	grep -E "^[^:]+:[0-9]+:$p/" "$tmp/includes" | grep -v "^$p/" | grep -v '^tests/' |
		grep -vE "^[^:]+:[0-9]+:$p/$p[.]h\$"
done >"$tmp/hits"
report "outside its folder, a part is included only by its public header (tests aside)"

[ "$fails" -eq 0 ]
