#!/bin/sh
# test_setup — the README's two commands are all a newcomer types on a fresh
# Debian machine: `make demo` and `make check` (and the other goals that
# run programs) first run `tools/install-deps --ensure`, before anything is
# configured or built; --ensure is silent when every package is there, and
# for a user who is not root it names the missing packages and the one
# command to run, and fails without touching the system. Prints TAP.
#
# The GNUmakefile shim is the checkout's, not the tarball's: under
# make distcheck the make-order checks are skipped (and counted as skips).
set -u

: "${top_srcdir:?}"
. "$top_srcdir/tests/lib.sh"

deps=$top_srcdir/tools/install-deps

# ---- the goals run --ensure first ----

if [ -f "$top_srcdir/GNUmakefile" ]; then
	for goal in demo check check-asan bench; do
		# A build directory that does not exist yet: make -n then prints
		# the configure steps too, which must come after --ensure.
		run make -n -C "$top_srcdir" BUILD="$IB_TMP/b-$goal" ASAN_BUILD="$IB_TMP/a-$goal" "$goal"
		first=$(printf '%s\n' "$out" | grep -v '^make\[' | sed -n '1p')
		is "$first" "./tools/install-deps --ensure" "make $goal runs install-deps --ensure first"
		n_ens=$(printf '%s\n' "$out" | grep -n 'install-deps --ensure' | cut -d: -f1 | sed -n 1p)
		n_cfg=$(printf '%s\n' "$out" | grep -n 'configure' | cut -d: -f1 | sed -n 1p)
		if [ -n "$n_ens" ] && [ -n "$n_cfg" ] && [ "$n_ens" -lt "$n_cfg" ]; then
			pass "make $goal configures only after it"
		else
			fail "make $goal configures only after it" "$out"
		fi
	done
	run make -n -C "$top_srcdir" BUILD="$IB_TMP/b-all" all
	unlike "$out" 'install-deps' "a plain build does not ask dpkg"
else
	skip "make goals run install-deps --ensure first" "no GNUmakefile (a release tarball)"
fi

# ---- --ensure itself ----

if command -v dpkg-query >/dev/null 2>&1 && "$deps" --check >/dev/null 2>&1; then
	run "$deps" --ensure
	is "$rc:$out:$err" "0::" "--ensure is silent and succeeds when every package is there"
else
	skip "--ensure is silent when every package is there" "not every package is installed here"
fi

# A copy of the script that also needs a package no archive has: as a user
# who is not root, --ensure must name it and the command, and fail before
# apt-get (no sudo prompt from make).
fake=$IB_TMP/install-deps
sed 's/^\(extra_pkgs=(\)$/\1\n\tironbell-no-such-package/' "$deps" >"$fake"
chmod 755 "$fake"
grep -q '^	ironbell-no-such-package$' "$fake" || bail_out "could not add a package to the copy"
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null 2>&1 || bail_out "setpriv (util-linux) is needed as root"
	chmod 755 "$IB_TMP"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$fake" --ensure
else
	run "$fake" --ensure
fi
is "$rc" 1 "--ensure as a user fails when a package is missing"
like "$err" '^ironbell needs these Debian packages: .*ironbell-no-such-package' "and names it"
like "$err" 'sudo tools/install-deps' "and the one command to run"
unlike "$out$err" 'apt-get|Reading package' "and runs no apt-get"

tap_done
