#!/bin/sh
# test_http_answers — the public listener's answer cache
# (daemon/public/answers.c), with curl against a real ironbelld: the
# cached answers are the very bytes the store path makes (the same daemon
# reloaded with http.answer_cache false), the cache is used (its metric),
# and what changes is served at the very next request after the write
# returned, with no wait: a Hardware changed, deleted, a MAC moved from
# one Hardware to another, a reload that changes the configuration. An
# unknown MAC stays 404 and a machine whose boot is awaited still gets its
# boot recorded. A machine's answers made one after the other on first
# use are made from one decode of its Hardware, and only the trees of the
# last 64 machines are kept.
set -u

. "$top_srcdir/tests/lib.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v cmp >/dev/null 2>&1 || skip_all "cmp is not installed"

CONF_ON="ipxe:
  kernel_args: console=ttyS0
metadata:
  trusted_proxies: [127.0.0.1/32]"
ib_write_config "$CONF_ON" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"
BASE=http://127.0.0.1:$IB_HTTP_PORT

# hw NAME MAC IP CONTENTS [MORE_INTERFACES]: a Hardware whose first
# interface (MAC, IP) boots the default script, or the script CONTENTS
# when not empty.
hw() {
	_ipxe=
	[ -n "$4" ] && _ipxe="      ipxe:
        contents: |
          #!ipxe
          $4"
	cat <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: $1
  namespace: default
${ANN:-}
spec:
  metadata:
    instance:
      id: $1-id
      hostname: $1
    facility:
      facility_code: onprem
  userData: |
    #cloud-config
    hostname: $1
  interfaces:
  - dhcp:
      mac: $2
      arch: x86_64
      hostname: $1
      ip:
        address: $3
        netmask: 255.0.0.0
    netboot:
      allowPXE: true
$_ipxe
${5:-}
EOF
}

apply_hw() {
	hw "$@" >"$IB_TMP/hw-$1.yaml"
	ib apply -f "$IB_TMP/hw-$1.yaml"
}

# get PATH [CURL ARGS...]: GET on the public listener; sets $code and
# $out, and the body in $IB_TMP/body.
get() {
	_p=$1
	shift
	run curl -s --max-time 10 -o "$IB_TMP/body" -w '%{http_code}' "$@" "$BASE$_p"
	code=$out
	out=$(cat "$IB_TMP/body")
}

hits() {
	curl -s --max-time 10 "$BASE/metrics" |
		sed -n 's/^ironbell_http_answers_total{result="hit"} //p'
}

absent() {
	curl -s --max-time 10 "$BASE/metrics" |
		sed -n 's/^ironbell_http_answers_total{result="absent"} //p'
}

# metric NAME: a counter's value (0 when not yet exported).
metric() {
	_v=$(curl -s --max-time 10 "$BASE/metrics" | awk -v n="$1" '$1 == n { print $2 }')
	echo "${_v:-0}"
}

reloads=0
# reload CONFIG_LINES: rewrites the configuration, SIGHUP, waits for it.
reload() {
	ib_write_config "$1" || bail_out "cannot write the config"
	reloads=$((reloads + 1))
	kill -HUP "$IB_DAEMON_PID"
	reloaded() { [ "$(grep -c 'reloaded ' "$IB_LOG")" -ge "$reloads" ]; }
	wait_for 10 reloaded || bail_out "the daemon did not reload"
}

MORE2="  - dhcp:
      mac: 52:54:00:aa:00:03
    netboot:
      allowPXE: true"
apply_hw m1 52:54:00:aa:00:01 127.0.0.1 ""
is "$rc" 0 "m1 is applied"
apply_hw m2 52:54:00:aa:00:02 127.0.0.2 "echo m2 v0" "$MORE2"
is "$rc" 0 "m2 is applied"

# ---- the same bytes as the store path ----

# The paths, and what each one's answer is kept as.
PATHS="/ipxe/script/52:54:00:aa:00:01/auto.ipxe /ipxe/script/52:54:00:aa:00:02/auto.ipxe
/ipxe/script/auto.ipxe /httpboot /metadata /2009-04-04/meta-data/hostname
/2009-04-04/meta-data/instance-id /2009-04-04/user-data /latest/meta-data/
/tootles/instanceID/m1-id/2009-04-04/meta-data/hostname /nocloud/meta-data /nocloud/user-data"
i=0
for p in $PATHS; do
	i=$((i + 1))
	get "$p"
	is "$code" 200 "$p answers (first, made)"
	cp "$IB_TMP/body" "$IB_TMP/first-$i"
	get "$p"
	is "$code" 200 "$p answers (again)"
	cmp -s "$IB_TMP/body" "$IB_TMP/first-$i"
	is "$?" 0 "$p: the second answer is the first's bytes"
done
h=$(hits)
ok "the cache answered (hits: ${h:-none})" test "${h:-0}" -ge 12

reload "  answer_cache: false
$CONF_ON"
h0=$(hits)
i=0
for p in $PATHS; do
	i=$((i + 1))
	get "$p"
	cmp -s "$IB_TMP/body" "$IB_TMP/first-$i"
	is "$code:$?" "200:0" "$p: the cached bytes are those of the store path"
done
is "$(hits)" "$h0" "with http.answer_cache false nothing comes from the cache"
reload "$CONF_ON"

# ---- a change is served at the next request ----

n=1
while [ $n -le 5 ]; do
	get /ipxe/script/52:54:00:aa:00:02/auto.ipxe
	get /ipxe/script/52:54:00:aa:00:02/auto.ipxe # cached now
	apply_hw m2 52:54:00:aa:00:02 127.0.0.2 "echo m2 v$n" "$MORE2"
	get /ipxe/script/52:54:00:aa:00:02/auto.ipxe
	like "$out" "echo m2 v$n" "change $n: the next request after the apply has it"
	n=$((n + 1))
done
# How soon the cache answered again (not asserted: it depends on the
# follower's thread being scheduled).
h0=$(hits)
i=0
while [ $i -lt 100 ] && [ "$(hits)" = "$h0" ]; do
	curl -s -o /dev/null --max-time 5 "$BASE/ipxe/script/52:54:00:aa:00:02/auto.ipxe"
	i=$((i + 1))
done
diag "after the last change, requests until a cache hit: $i"

# ---- X-Forwarded-For from a trusted proxy ----

get /2009-04-04/meta-data/hostname
is "$out" m1 "the peer's own metadata"
get /2009-04-04/meta-data/hostname -H "X-Forwarded-For: 127.0.0.2"
is "$out" m2 "X-Forwarded-For from a trusted proxy names m2"
get /2009-04-04/meta-data/hostname -H "X-Forwarded-For: 127.0.0.2"
is "$out" m2 "again (cached)"
get /2009-04-04/meta-data/hostname
is "$out" m1 "and the peer's own is still m1's"

# ---- a machine's answers made one after the other: one decode ----

# m2 changed: every answer of its new version is a first use. A crawl of
# six of them (each on its own connection, on any listener thread) is
# made from the one tree decoded for the first. The crawl starts once the
# cache has the new version (its script, made ahead, served as a hit), so
# that no answer takes the store path.
# cached_now: a hit on m2's script after the last apply.
cached_now() {
	_h=$(hits)
	curl -s -o /dev/null --max-time 5 "$BASE/ipxe/script/52:54:00:aa:00:02/auto.ipxe"
	[ "$(hits)" != "$_h" ]
}
apply_hw m2 52:54:00:aa:00:02 127.0.0.2 "echo m2 v6" "$MORE2"
wait_for 10 cached_now || bail_out "the cache does not answer m2 after the change"
d0=$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')
r0=$(metric 'ironbell_http_answer_hardware_reads_total{result="reused"}')
for p in /2009-04-04/meta-data/instance-id /2009-04-04/meta-data/hostname \
	/2009-04-04/meta-data/local-hostname /2009-04-04/user-data /nocloud/meta-data /metadata; do
	get "$p" -H "X-Forwarded-For: 127.0.0.2"
	is "$code" 200 "crawl: $p of m2"
done
d1=$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')
r1=$(metric 'ironbell_http_answer_hardware_reads_total{result="reused"}')
is "$((d1 - d0))" 1 "six answers made from one decode of the Hardware"
is "$((r1 - r0))" 5 "the five after the first reused its tree"
# The kept trees' nodes are cut from jsonmem's blocks (not under the
# sanitizers, where every node is malloc()'s).
jb=$(metric 'ironbell_json_block_bytes{state="used"}')
if [ -n "${ASAN_OPTIONS:-}" ]; then
	is "$jb" 0 "no JSON blocks under the sanitizers"
else
	ok "the kept trees in JSON blocks ($jb bytes)" [ "$jb" -ge 65536 ]
fi
get /2009-04-04/meta-data/instance-id -H "X-Forwarded-For: 127.0.0.2"
is "$out" m2-id "m2's own instance id"
# The script asked by address is made on first use (not ahead): from the
# kept tree of v6, then, after v7 is applied, from v7's, never v6's.
get /ipxe/script/auto.ipxe --interface 127.0.0.2
like "$out" "echo m2 v6" "m2's script by address, made from the kept tree"
is "$(metric 'ironbell_http_answer_hardware_reads_total{result="reused"}')" "$((r1 + 1))" \
	"(reused: no decode)"
apply_hw m2 52:54:00:aa:00:02 127.0.0.2 "echo m2 v7" "$MORE2"
wait_for 10 cached_now || bail_out "the cache does not answer m2 after the change"
d2=$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')
get /ipxe/script/auto.ipxe --interface 127.0.0.2
like "$out" "echo m2 v7" "after a change, the new version's script, never the kept tree's"
is "$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')" "$((d2 + 1))" \
	"(decoded anew)"

# A Hardware of more than 256 KiB (its user data) is not kept: each of
# its answers made on first use is decoded.
{
	printf 'apiVersion: tinkerbell.org/v1alpha1\nkind: Hardware\nmetadata:\n  name: big\n  namespace: default\n'
	printf 'spec:\n  metadata:\n    instance:\n      id: big-id\n      hostname: big\n  userData: |\n'
	head -c 300000 /dev/zero | tr '\0' 'x' | fold -w 100 | sed 's/^/    /'
	printf '\n  interfaces:\n  - dhcp:\n      mac: 52:54:00:aa:00:66\n      ip:\n        address: 127.0.0.66\n        netmask: 255.0.0.0\n'
} >"$IB_TMP/big.yaml"
ib apply -f "$IB_TMP/big.yaml"
is "$rc" 0 "a Hardware with 300 KB of user data is applied"
# id_served IP ID: the machine at IP is answered its instance id ID.
id_served() {
	get /2009-04-04/meta-data/instance-id -H "X-Forwarded-For: $1"
	[ "$out" = "$2" ]
}
wait_for 10 id_served 127.0.0.66 big-id || bail_out "the big Hardware is not served"
d0=$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')
r0=$(metric 'ironbell_http_answer_hardware_reads_total{result="reused"}')
get /2009-04-04/meta-data/hostname -H "X-Forwarded-For: 127.0.0.66"
is "$out" big "its hostname"
get /2009-04-04/meta-data/local-hostname -H "X-Forwarded-For: 127.0.0.66"
is "$out" big "its local hostname"
is "$(metric 'ironbell_http_answer_hardware_reads_total{result="reused"}')" "$r0" \
	"its tree is not kept: nothing reused"
d1=$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')
is "$((d1 - d0))" 2 "each of its two answers decoded it"

# More machines than trees are kept (64), each asked on new connections,
# which land on either listener thread (with two or more): a tree evicted
# by the thread that did not decode it waits for its owner to free it; one
# freed twice, or while an answer is made from it, is what the sanitizer
# build reports. The newest are reused, the oldest decoded again, each
# answer its own machine's.
for i in $(seq 10 89); do
	hw "t$i" "52:54:00:cc:00:$i" "127.3.0.$i" ""
	echo ---
done >"$IB_TMP/fleet.yaml"
ib apply -f "$IB_TMP/fleet.yaml"
is "$rc" 0 "80 more machines are applied"
wait_for 10 id_served 127.3.0.89 t89-id || bail_out "the 80 machines are not served"
d0=$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')
wrong=0
for i in $(seq 10 88); do
	get /2009-04-04/meta-data/instance-id -H "X-Forwarded-For: 127.3.0.$i"
	[ "$out" = "t$i-id" ] || wrong=$((wrong + 1))
done
is "$wrong" 0 "each of 79 machines gets its own instance id"
is "$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')" "$((d0 + 79))" \
	"(each decoded once)"
r0=$(metric 'ironbell_http_answer_hardware_reads_total{result="reused"}')
get /2009-04-04/meta-data/hostname -H "X-Forwarded-For: 127.3.0.88"
is "$out" t88 "the newest machine's hostname"
is "$(metric 'ironbell_http_answer_hardware_reads_total{result="reused"}')" "$((r0 + 1))" \
	"(from its kept tree)"
d1=$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')
get /2009-04-04/meta-data/hostname -H "X-Forwarded-For: 127.3.0.10"
is "$out" t10 "the oldest machine's hostname"
is "$(metric 'ironbell_http_answer_hardware_reads_total{result="decoded"}')" "$((d1 + 1))" \
	"(its tree was evicted: decoded again)"

# ---- Ignition: by system UUID, and the address must be the machine's ----

UUID=0f4e6c1a-1b2c-4d3e-8f90-123456789abc
cat >"$IB_TMP/m3.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: m3
  namespace: default
  annotations:
    ironbell.dev/system-uuid: $UUID
spec:
  userData: '{"ignition":{"version":"3.3.0"}}'
  interfaces:
  - dhcp:
      mac: 52:54:00:aa:00:04
      ip:
        address: 127.0.0.3
        netmask: 255.0.0.0
EOF
ib apply -f "$IB_TMP/m3.yaml"
is "$rc" 0 "m3 is applied"
get /ignition/$UUID -H "X-Forwarded-For: 127.0.0.3"
is "$code:$out" '200:{"ignition":{"version":"3.3.0"}}' "m3's Ignition config"
h0=$(hits)
get /ignition/$UUID -H "X-Forwarded-For: 127.0.0.3"
is "$code:$out" '200:{"ignition":{"version":"3.3.0"}}' "again"
ok "from the cache" test "$(hits)" -gt "$h0"
get /ignition/$UUID
is "$code" 404 "not for an address that is not m3's"
get /ignition/$UUID -H "X-Forwarded-For: 127.0.0.3"
is "$code" 200 "and m3's own still"

# ---- a MAC moves from m2 to m1 ----

get /ipxe/script/52:54:00:aa:00:03/auto.ipxe
like "$out" "default/m2 \\(52:54:00:aa:00:03\\)" "52:54:00:aa:00:03 is m2's"
apply_hw m2 52:54:00:aa:00:02 127.0.0.2 "echo m2 v6"
is "$rc" 0 "m2 gives up 52:54:00:aa:00:03"
get /ipxe/script/52:54:00:aa:00:03/auto.ipxe
is "$code" 404 "at once no script for it"
apply_hw m1 52:54:00:aa:00:01 127.0.0.1 "" "  - dhcp:
      mac: 52:54:00:aa:00:03
    netboot:
      allowPXE: true"
is "$rc" 0 "m1 takes 52:54:00:aa:00:03"
get /ipxe/script/52:54:00:aa:00:03/auto.ipxe
is "$code" 200 "at once it has a script again"
like "$out" "default/m1 \\(52:54:00:aa:00:03\\)" "m1's script for it"

# ---- a reload that changes the script ----

get /ipxe/script/52:54:00:aa:00:01/auto.ipxe
get /ipxe/script/52:54:00:aa:00:01/auto.ipxe
like "$out" "console=ttyS0" "the configured kernel arguments"
reload "ipxe:
  kernel_args: console=ttyS1"
get /ipxe/script/52:54:00:aa:00:01/auto.ipxe
like "$out" "console=ttyS1" "after a reload, the new kernel arguments at the next request"
unlike "$out" "console=ttyS0" "and not the old ones"

# ---- delete, unknown ----

get /ipxe/script/52:54:00:aa:00:02/auto.ipxe
is "$code" 200 "m2's script before it is deleted"
ib delete hw m2
is "$rc" 0 "m2 is deleted"
get /ipxe/script/52:54:00:aa:00:02/auto.ipxe
is "$code" 404 "at once no script for m2's MAC"
get /ipxe/script/52:54:00:aa:00:99/auto.ipxe
is "$code" 404 "an unknown MAC is 404"
# Once the index has the delete (a request before that goes to the store).
a0=$(absent)
unknown_absent() {
	curl -s -o /dev/null --max-time 5 "$BASE/ipxe/script/52:54:00:aa:00:99/auto.ipxe"
	[ "$(absent)" -gt "$a0" ]
}
ok "an unknown MAC is known to be unknown from the index (result=\"absent\")" \
	wait_for 10 unknown_absent
a0=$(absent)

# 127.0.0.9 is no Hardware's: /httpboot still answers it (the default
# binary), metadata does not, and neither reads the store.
get /httpboot --interface 127.0.0.9
is "$code" 200 "/httpboot from an address no Hardware has answers"
like "$out" '"ClientIPs":"127.0.0.9".*/ipxe/binary/ipxe.efi"' "with the default binary for 127.0.0.9"
get /metadata --interface 127.0.0.9
is "$code" 404 "/metadata from an address no Hardware has is 404"
is "$(absent)" "$((a0 + 2))" "both were answered from the index alone"
apply_hw m3 52:54:00:aa:00:39 127.0.0.9 ""
is "$rc" 0 "a Hardware for 127.0.0.9 is applied"
get /metadata --interface 127.0.0.9
is "$code" 200 "the next request from 127.0.0.9 gets its metadata: an absence is not kept"
get /httpboot --interface 127.0.0.9
like "$out" '/ipxe/binary/52:54:00:aa:00:39/' "and /httpboot its own binary"
ib delete hw m3

# A Hardware with 24 interfaces: every MAC and address is in the index,
# so its last interface is not taken for an unknown machine.
ifs=
i=1
while [ $i -le 24 ]; do
	ifs="$ifs  - dhcp:
      mac: 52:54:00:bb:00:$(printf %02x $i)
      ip:
        address: 127.0.2.$i
        netmask: 255.255.255.0
    netboot:
      allowPXE: true
"
	i=$((i + 1))
done
apply_hw m4 52:54:00:bb:00:00 127.0.2.100 "" "${ifs%
}"
is "$rc" 0 "a Hardware with 25 interfaces is applied"
get /metadata --interface 127.0.2.24
is "$code" 200 "its 25th interface's address gets its metadata"
get /ipxe/script/52:54:00:bb:00:18/auto.ipxe
is "$code" 200 "its 25th interface's MAC gets its script"
ib delete hw m4

# ---- boot answers made ahead (http.answer_prebuild) ----

# The listener is on 127.0.0.1, the address its answers name, so the
# answers of a Hardware applied now are made before anyone asks: the
# script of its MAC and /httpboot of its address, counted as made ahead,
# then served as hits with nothing built on the request's path.
p0=$(metric ironbell_http_answers_prebuilt_total)
apply_hw m5 52:54:00:aa:00:55 127.0.0.5 "echo m5 ahead"
is "$rc" 0 "m5 is applied"
made_ahead() { [ "$(metric ironbell_http_answers_prebuilt_total)" -ge $((p0 + 2)) ]; }
ok "m5's script and /httpboot are made ahead of any request" wait_for 10 made_ahead
b0=$(metric 'ironbell_http_answers_total{result="built"}')
h0=$(hits)
get /ipxe/script/52:54:00:aa:00:55/auto.ipxe
is "$code" 200 "m5's script answers"
like "$out" "echo m5 ahead" "with m5's script"
cp "$IB_TMP/body" "$IB_TMP/ahead-script"
get /httpboot --interface 127.0.0.5
is "$code" 200 "m5's /httpboot answers"
like "$out" '/ipxe/binary/52:54:00:aa:00:55/' "with m5's own binary"
cp "$IB_TMP/body" "$IB_TMP/ahead-httpboot"
is "$(metric 'ironbell_http_answers_total{result="built"}')" "$b0" \
	"neither was made on the request's path"
is "$(hits)" "$((h0 + 2))" "both were cache hits"

# The answers made ahead are the store path's bytes.
reload "  answer_cache: false
$CONF_ON"
get /ipxe/script/52:54:00:aa:00:55/auto.ipxe
cmp -s "$IB_TMP/body" "$IB_TMP/ahead-script"
is "$code:$?" "200:0" "the script made ahead is the store path's"
get /httpboot --interface 127.0.0.5
cmp -s "$IB_TMP/body" "$IB_TMP/ahead-httpboot"
is "$code:$?" "200:0" "so is /httpboot"

# A reload makes them again for the new configuration: m1's and m5's.
p0=$(metric ironbell_http_answers_prebuilt_total)
reload "$CONF_ON"
made_again() { [ "$(metric ironbell_http_answers_prebuilt_total)" -ge $((p0 + 4)) ]; }
ok "a reload makes every machine's answers again" wait_for 10 made_again
b0=$(metric 'ironbell_http_answers_total{result="built"}')
get /ipxe/script/52:54:00:aa:00:55/auto.ipxe
is "$code:$(metric 'ironbell_http_answers_total{result="built"}')" "200:$b0" \
	"m5's script after the reload was made ahead"

# With http.answer_prebuild false, answers are made on first use only.
reload "  answer_prebuild: false
$CONF_ON"
p0=$(metric ironbell_http_answers_prebuilt_total)
b0=$(metric 'ironbell_http_answers_total{result="built"}')
apply_hw m5 52:54:00:aa:00:55 127.0.0.5 "echo m5 first use"
built_on_request() {
	curl -s -o /dev/null --max-time 5 "$BASE/ipxe/script/52:54:00:aa:00:55/auto.ipxe"
	[ "$(metric 'ironbell_http_answers_total{result="built"}')" -gt "$b0" ]
}
ok "with answer_prebuild false the script is made by its first request" \
	wait_for 10 built_on_request
is "$(metric ironbell_http_answers_prebuilt_total)" "$p0" "and nothing is made ahead"
get /ipxe/script/52:54:00:aa:00:55/auto.ipxe
like "$out" "echo m5 first use" "the changed script is served"
reload "$CONF_ON"
ib delete hw m5

# ---- the closed loop: a boot awaited is still recorded ----

get /metadata
is "$code" 200 "m1's metadata"
ANN="  annotations:
    ironbell.dev/awaiting-boot: wf1 2026-01-01T00:00:00Z" \
	apply_hw m1 52:54:00:aa:00:01 127.0.0.1 ""
is "$rc" 0 "m1 awaits its boot"
get /ipxe/script/52:54:00:aa:00:01/auto.ipxe
is "$code" 200 "a machine whose boot is awaited gets its script"
get /metadata
is "$code" 200 "and its metadata"
ib get hw m1 -o json
like "$out" 'boot-observed.*disk' "the metadata request recorded the boot"
get /metadata
is "$code" 200 "its metadata once the boot is recorded"

run curl -s --max-time 10 "$BASE/metrics"
like "$out" 'ironbell_http_answer_records [0-9]' "the records gauge is exported"
like "$out" 'ironbell_http_answers_total\{result="built"\} [1-9]' "answers made are counted"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
