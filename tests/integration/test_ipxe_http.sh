#!/bin/sh
# test_ipxe_http — the machine-facing routes of the public listener, with
# curl against a real ironbelld on the loopback address: the iPXE script by
# MAC and by address (every source: default, url, contents, and a template
# from the configuration), allowPXE gating and unknown machines (404 and a
# log line), the iPXE binaries from Debian's ipxe package (GET, HEAD,
# Range, Content-Type, the snp.efi alias, a missing one), the OSIE
# directory (nested paths; "..", symlinks and hidden names refused),
# /httpboot, methods, and the metrics that count all of it.
set -u

. "$top_srcdir/tests/lib.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"
command -v sha256sum >/dev/null 2>&1 || skip_all "sha256sum is not installed"

BIN=$IB_TMP/ipxe
OSIE=$IB_TMP/osie
mkdir -p "$BIN" "$OSIE/hook/v1" || bail_out "cannot make directories"
# The binaries: Debian's when the ipxe package is there, else stand-ins of
# the same names (the HTTP code does not care what the bytes are).
for f in undionly.kpxe ipxe.efi snponly.efi; do
	if [ -f "/usr/lib/ipxe/$f" ]; then
		cp "/usr/lib/ipxe/$f" "$BIN/$f"
	else
		head -c 70000 /dev/urandom >"$BIN/$f"
	fi
done
head -c 4096 /dev/urandom >"$BIN/snp-arm64.efi"
head -c 300000 /dev/urandom >"$OSIE/hook/v1/vmlinuz-x86_64"
head -c 1000000 /dev/urandom >"$OSIE/initramfs-x86_64"
echo secret >"$IB_TMP/secret"
ln -s "$IB_TMP/secret" "$OSIE/escape"
chown -h nobody "$OSIE/escape" || bail_out "cannot give the link to nobody"
ln -s initramfs-x86_64 "$OSIE/inside-link"
mkdir "$OSIE/linkdir-target" && echo x >"$OSIE/linkdir-target/f"
ln -s linkdir-target "$OSIE/linkdir"
echo hidden >"$OSIE/.hidden"
mkdir "$OSIE/dir"
printf '#!ipxe\necho custom {{hw_addr}} {{worker_id}}\nchain {{base_url}}/next\n' >"$IB_TMP/tmpl.ipxe"

ib_write_config "ipxe:
  binary_dir: $BIN
  osie_dir: $OSIE
  kernel_args: console=ttyS0" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"
BASE=http://127.0.0.1:$IB_HTTP_PORT

cat >"$IB_TMP/hw.yaml" <<EOF
apiVersion: tinkerbell.org/v1alpha1
kind: Hardware
metadata:
  name: m1
  namespace: default
spec:
  agentID: agent-1
  metadata:
    facility:
      facility_code: onprem
  interfaces:
  - dhcp:
      mac: 52:54:00:12:34:56
      arch: x86_64
      hostname: m1
      vlan_id: "12"
      ip:
        address: 127.0.0.1
        netmask: 255.0.0.0
    netboot:
      allowPXE: true
      osie:
        kernelParams: ["quiet", "ib.test=1"]
  - dhcp:
      mac: 52:54:00:12:34:57
    netboot:
      allowPXE: false
  - dhcp:
      mac: 52:54:00:12:34:58
      ip:
        address: 127.0.0.8
        netmask: 255.0.0.0
    netboot:
      allowPXE: true
      ipxe:
        url: http://example.invalid/chain.ipxe
  - dhcp:
      mac: 52:54:00:12:34:59
    netboot:
      allowPXE: true
      ipxe:
        contents: |
          #!ipxe
          echo inline \${mac}
  - dhcp:
      mac: 52:54:00:12:34:5a
    netboot:
      allowPXE: true
      osie:
        kernelParams: ["bad value"]
EOF
ib apply -f "$IB_TMP/hw.yaml"
is "$rc" 0 "the Hardware is applied"

# get PATH [CURL ARGS...]: GET on the public listener; sets $code, $ctype,
# $body (the file holding the body) and $out (the body).
get() {
	_p=$1
	shift
	body=$IB_TMP/body
	run curl -s --path-as-is --max-time 10 -o "$body" -w '%{http_code} %{content_type}' "$@" \
		"$BASE$_p"
	code=${out%% *}
	ctype=${out#* }
	out=$(cat "$body")
}

# ---- scripts ----

get /ipxe/script/52:54:00:12:34:56/auto.ipxe
is "$code" 200 "the script of a known MAC is served"
like "$ctype" '^text/plain' "as text/plain"
like "$out" '^#!ipxe' "it is an iPXE script"
kl=$(printf '%s\n' "$out" | grep '^kernel ')
like "$kl" "^kernel $BASE/osie/vmlinuz-x86_64 " "the kernel comes from the OSIE URL"
like "$kl" ' worker_id=agent-1 hw_addr=52:54:00:12:34:56 ' "worker_id and hw_addr are the Hardware's"
like "$kl" '^kernel [^ ]* vlan_id=12 facility=onprem syslog_host=127\.0\.0\.1 grpc_authority=127\.0\.0\.1:42113 ' \
	"vlan_id, facility, syslog_host and grpc_authority come first"
like "$kl" ' initrd=initramfs-x86_64 console=tty0 console=ttyS1,115200 console=ttyS0 quiet ib\.test=1 &&' \
	"the configured and the Hardware's arguments come last"
like "$kl" "&& initrd $BASE/osie/initramfs-x86_64 && boot ||\$" "then the initrd, then boot"
file_has "$IB_LOG" 'script served: mac=52:54:00:12:34:56 hardware=default/m1 kind=default client=127\.0\.0\.1'
is "$?" 0 "the script is logged with the MAC, the Hardware and the client"

get /ipxe/script/52-54-00-12-34-56/auto.ipxe
is "$code" 200 "a MAC with dashes and capitals is the same machine"
get /ipxe/script/auto.ipxe
is "$code" 200 "without a MAC, the script of the machine at the client's address"
like "$out" 'hw_addr=52:54:00:12:34:56 ' "by address: the interface that has the address"
get /auto.ipxe
is "$code" 200 "/auto.ipxe is the same"

get /ipxe/script/52:54:00:12:34:57/auto.ipxe
is "$code" 404 "allowPXE false: 404"
file_has "$IB_LOG" 'no script for 52:54:00:12:34:57 \(default/m1\) from 127\.0\.0\.1: netboot\.allowPXE is not true'
is "$?" 0 "and a log line that says why"
get /ipxe/script/aa:aa:aa:aa:aa:aa/auto.ipxe
is "$code" 404 "an unknown MAC: 404"
file_has "$IB_LOG" 'no script for aa:aa:aa:aa:aa:aa from 127\.0\.0\.1: no Hardware has this MAC'
is "$?" 0 "and a log line"
get /ipxe/script/52:54:00:12:34:58/auto.ipxe
is "$code" 200 "netboot.ipxe.url: served"
is "$out" "#!ipxe
chain --autofree http://example.invalid/chain.ipxe" "as a chain to that URL"
get /ipxe/script/52:54:00:12:34:59/auto.ipxe
is "$code" 200 "netboot.ipxe.contents: served"
is "$out" '#!ipxe
echo inline ${mac}' "verbatim"
get /ipxe/script/52:54:00:12:34:5a/auto.ipxe
is "$code" 500 "a kernel parameter iPXE would misread: 500, nothing served"
file_has "$IB_LOG" 'cannot make the script of 52:54:00:12:34:5a \(default/m1\): netboot\.osie\.kernelParams\[0\]: .*bad value'
is "$?" 0 "and the log names the field"
get /ipxe/script/52:54:00:12:34:56/boot.ipxe
is "$code" 404 "another script name: 404"
get /ipxe/script/52:54:00:12:34:56/auto.ipxe -X POST
is "$code" 405 "POST: 405"

# ---- binaries ----

for f in undionly.kpxe ipxe.efi snponly.efi; do
	get "/ipxe/binary/$f"
	is "$code" 200 "binary $f: 200"
	is "$(sha256sum <"$body" | cut -d' ' -f1)" "$(sha256sum <"$BIN/$f" | cut -d' ' -f1)" \
		"binary $f: the same bytes"
done
get /ipxe/binary/ipxe.efi
is "$ctype" application/efi "an EFI binary is application/efi"
get /ipxe/binary/undionly.kpxe
is "$ctype" application/octet-stream "undionly.kpxe is application/octet-stream"
get /ipxe/binary/52:54:00:12:34:56/ipxe.efi
is "$code" 200 "a leading MAC component is accepted"
get /ipxe/binary/snp.efi
is "$code" 200 "snp.efi is served from snp-arm64.efi"
cmp -s "$body" "$BIN/snp-arm64.efi"
is "$?" 0 "with its bytes"
run curl -s -I --max-time 10 "$BASE/ipxe/binary/ipxe.efi"
like "$out" "Content-Length: $(wc -c <"$BIN/ipxe.efi" | tr -d ' ')" "HEAD gives the length"
like "$out" 'Accept-Ranges: bytes' "and Accept-Ranges"
get /ipxe/binary/ipxe.efi -r 100-1123
is "$code" 206 "a Range gets 206"
is "$(wc -c <"$body" | tr -d ' ')" 1024 "with the bytes asked for"
is "$(sha256sum <"$body" | cut -d' ' -f1)" \
	"$(tail -c +101 "$BIN/ipxe.efi" | head -c 1024 | sha256sum | cut -d' ' -f1)" "the right bytes"
run curl -s -o /dev/null -D - -r -10 --max-time 10 "$BASE/ipxe/binary/ipxe.efi"
like "$out" "Content-Range: bytes [0-9]+-[0-9]+/$(wc -c <"$BIN/ipxe.efi" | tr -d ' ')" \
	"a suffix range has its Content-Range"
get /ipxe/binary/ipxe.efi -r 99999999-
is "$code" 416 "a range past the end: 416"
get /ipxe/binary/missing.efi
is "$code" 404 "a missing binary: 404"
file_has "$IB_LOG" "binary missing\\.efi asked for by 127\\.0\\.0\\.1 is not served: no such file \\($BIN/missing\\.efi\\)"
is "$?" 0 "and one clear log line"
get /ipxe/binary/../secret
is "$code" 404 "a path with .. is refused"

# ---- OSIE ----

get /osie/hook/v1/vmlinuz-x86_64
is "$code" 200 "a nested OSIE file is served"
cmp -s "$body" "$OSIE/hook/v1/vmlinuz-x86_64"
is "$?" 0 "with its bytes"
get /osie/initramfs-x86_64
cmp -s "$body" "$OSIE/initramfs-x86_64"
is "$?" 0 "a 1 MB initrd arrives whole"
get /osie/inside-link
is "$code" 200 "a link root made in the directory is followed"
cmp -s "$body" "$OSIE/initramfs-x86_64"
is "$?" 0 "to its file"
for p in /osie/escape /osie/linkdir/f /osie/.hidden /osie/dir /osie/../secret \
	/osie/hook/../../secret /osie/%2e%2e/secret /osie//etc/passwd; do
	get "$p"
	is "$code" 404 "$p is refused"
done
file_has "$IB_LOG" 'osie escape asked for by 127\.0\.0\.1 is not served: a symbolic link'
is "$?" 0 "a symlink is named as such in the log"

# ---- /httpboot ----

get /httpboot
is "$code" 200 "/httpboot answers"
like "$ctype" '^application/json' "with JSON"
is "$out" "{\"ClientIPs\":\"127.0.0.1\",\"UKIURL\":\"$BASE/ipxe/binary/52:54:00:12:34:56/ipxe.efi\",\"SystemUUID\":\"\"}" \
	"the binary URL of the machine at the client's address"

# ---- the template from the configuration, applied by a reload ----

ib_write_config "ipxe:
  binary_dir: $BIN
  osie_dir: $OSIE
  script_template: $IB_TMP/tmpl.ipxe"
kill -HUP "$IB_DAEMON_PID"
wait_for 10 sh -c "grep -q 'echo custom' <<EOF
\$(curl -s $BASE/ipxe/script/52:54:00:12:34:56/auto.ipxe)
EOF"
get /ipxe/script/52:54:00:12:34:56/auto.ipxe
is "$out" "#!ipxe
echo custom 52:54:00:12:34:56 agent-1
chain $BASE/next" "a reload puts the configured template in use"
printf '#!ipxe\n{{nope}}\n' >"$IB_TMP/tmpl.ipxe"
kill -HUP "$IB_DAEMON_PID"
wait_for 10 file_has "$IB_LOG" 'reload failed'
file_has "$IB_LOG" "reload failed, keeping the running configuration: .*ipxe.script_template: .*tmpl.ipxe.*: line 2, column 1: unknown placeholder"
is "$?" 0 "a bad template is refused with its line and column"
get /ipxe/script/52:54:00:12:34:56/auto.ipxe
like "$out" 'echo custom' "and the running one stays"

# ---- metrics ----

run curl -s --max-time 10 "$BASE/metrics"
like "$out" 'ironbell_ipxe_scripts_total\{outcome="default"\} [5-9]' "scripts are counted by outcome"
like "$out" 'ironbell_ipxe_scripts_total\{outcome="not_allowed"\} 1' "refusals too"
like "$out" 'ironbell_ipxe_scripts_total\{outcome="unknown"\} 1' "and unknown machines"
like "$out" 'ironbell_ipxe_files_total\{route="binary",outcome="partial"\} 2' "partial file answers"
like "$out" 'ironbell_ipxe_files_total\{route="osie",outcome="not_found"\} [1-9]' "refused OSIE paths"
like "$out" 'ironbell_http_requests_total\{listener="public",path="/ipxe/script/\{mac\}/auto.ipxe",code="200"\}' \
	"requests by route template"

# ---- request headers: a connection's pool is 16 KiB ----
# 8 KiB of headers (nginx's default bound for one line) are read; 24 KiB
# are refused with a 4xx status, and the listener serves on.
pad=$(printf '%1000s' '' | tr ' ' a)
hdrs= more=
for i in 1 2 3 4 5 6 7 8; do
	hdrs="$hdrs -H X-Pad-$i:$pad"
	more="$more -H X-Pad-$i-b:$pad -H X-Pad-$i-c:$pad"
done
# shellcheck disable=SC2086
get /ipxe/script/52:54:00:12:34:56/auto.ipxe $hdrs
is "$code" 200 "a request with 8 KiB of headers is answered"
like "$out" 'echo custom' "with the machine's script"
# shellcheck disable=SC2086
get /ipxe/script/52:54:00:12:34:56/auto.ipxe $hdrs $more
like "$code" '^4[0-9][0-9]$' "one with 24 KiB of headers is refused ($code)"
get /ipxe/script/52:54:00:12:34:56/auto.ipxe
is "$code" 200 "and the next request is answered"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"

# ---- auto-proxy: a discovery script for machines without Hardware ----

ib_write_config "dhcp:
  mode: auto-proxy
ipxe:
  binary_dir: $BIN
  osie_dir: $OSIE" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start in auto-proxy mode"
get /ipxe/script/52:54:00:99:99:99/auto.ipxe
is "$code" 200 "auto-proxy: a MAC no Hardware has gets a script"
like "$out" "worker_id=52:54:00:99:99:99 hw_addr=52:54:00:99:99:99 " \
	"the default script, with the MAC as worker_id and hw_addr"
like "$out" "kernel $BASE/osie/vmlinuz-x86_64 " "booting the default architecture's OSIE"
get /ipxe/script/52:54:00:12:34:57/auto.ipxe
is "$code" 404 "and a Hardware with allowPXE false still gets 404"
file_has "$IB_LOG" 'discovery script for 52:54:00:99:99:99 from 127\.0\.0\.1'
is "$?" 0 "the discovery script is logged"
run curl -s --max-time 10 "$BASE/metrics"
like "$out" 'ironbell_ipxe_scripts_total\{outcome="discovery"\} 1' "and counted"
ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly (auto-proxy)"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
