#!/bin/sh
# test_osie_files — files at fleet scale, with curl against a real ironbelld
# on the loopback address: ETag and Last-Modified on every file answer,
# 304 for If-None-Match and If-Modified-Since, Range (206) under a
# matching If-Range and the whole file (200) under one that does not,
# HEAD, a new ETag when the file changes, a 20 MB file and a 15 MB
# Range of it whole and exact (sent in sendfile calls wider than
# libmicrohttpd's, counted), and the bound of
# ipxe.max_downloads_per_client: slow downloads fill it, one more gets
# 503 with Retry-After, a download that ends or is aborted gives its slot
# back.
set -u

. "$top_srcdir/tests/lib.sh"

command -v curl >/dev/null 2>&1 || skip_all "curl is not installed"

OSIE=$IB_TMP/osie
mkdir -p "$OSIE" || bail_out "cannot make the directory"
head -c 300000 /dev/urandom >"$OSIE/vmlinuz-x86_64" || bail_out "cannot write a file"
# A large file for the slow downloads: far more than the socket buffers
# of the loopback hold, so a rate-limited curl keeps it in flight.
truncate -s 512M "$OSIE/big" || bail_out "cannot make the large file"

ib_write_config "ipxe:
  osie_dir: $OSIE
  max_downloads_per_client: 2" || bail_out "cannot write the config"
ib_start_daemon || bail_out "ironbelld did not start"
BASE=http://127.0.0.1:$IB_HTTP_PORT
F=$BASE/osie/vmlinuz-x86_64

# hdr PATH [CURL ARGS...]: GET; sets $code and $hdrs (the headers), the
# body in $IB_TMP/body.
hdr() {
	_u=$1
	shift
	rm -f "$IB_TMP/body" && : >"$IB_TMP/body"
	run curl -s --max-time 10 -D "$IB_TMP/hdrs" -o "$IB_TMP/body" -w '%{http_code}' "$@" "$_u"
	code=$out
	hdrs=$(tr -d '\r' <"$IB_TMP/hdrs")
}
# header NAME: the value of header NAME in $hdrs.
header() { printf '%s\n' "$hdrs" | sed -n "s/^$1: //Ip" | head -n 1; }
metric() {
	curl -s --max-time 5 --unix-socket "$IB_SOCK" http://localhost/metrics |
		sed -n "s/^$1 //p"
}
active_is() { [ "$(metric ironbell_ipxe_downloads_active)" = "$1" ]; }

# ---- validators ----

hdr "$F"
is "$code" 200 "a file: 200"
etag=$(header ETag)
lm=$(header Last-Modified)
like "$etag" '^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$' "with a strong ETag"
like "$lm" '^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$' \
	"and a Last-Modified IMF-fixdate"
is "$(header Accept-Ranges)" bytes "and Accept-Ranges"
cmp -s "$IB_TMP/body" "$OSIE/vmlinuz-x86_64"
is "$?" 0 "with the file's bytes"

hdr "$F" -H "If-None-Match: $etag"
is "$code" 304 "If-None-Match with its ETag: 304"
is "$(wc -c <"$IB_TMP/body" | tr -d ' ')" 0 "with no body"
is "$(header ETag)" "$etag" "and the ETag"
hdr "$F" -H "If-None-Match: \"other\", W/$etag"
is "$code" 304 "a list with the weak form of it: 304 (weak comparison)"
hdr "$F" -H 'If-None-Match: *'
is "$code" 304 "If-None-Match: *: 304"
hdr "$F" -H 'If-None-Match: "other"'
is "$code" 200 "another ETag: 200"
hdr "$F" -H "If-Modified-Since: $lm"
is "$code" 304 "If-Modified-Since its Last-Modified: 304"
hdr "$F" -H 'If-Modified-Since: Thu, 01 Jan 1998 00:00:00 GMT'
is "$code" 200 "If-Modified-Since an earlier date: 200"
hdr "$F" -H 'If-Modified-Since: yesterday'
is "$code" 200 "a date that does not parse counts as absent: 200"
hdr "$F" -H "If-Modified-Since: $lm" -H 'If-None-Match: "other"'
is "$code" 200 "If-None-Match decides when both are sent"

# ---- Range and If-Range ----

hdr "$F" -r 100-199
is "$code" 206 "a Range: 206"
is "$(header Content-Range)" "bytes 100-199/300000" "with its Content-Range"
is "$(header ETag)" "$etag" "and the ETag"
hdr "$F" -r 100-199 -H "If-Range: $etag"
is "$code" 206 "If-Range with the ETag: 206"
is "$(wc -c <"$IB_TMP/body" | tr -d ' ')" 100 "with the bytes asked for"
hdr "$F" -r 100-199 -H "If-Range: $lm"
is "$code" 206 "If-Range with the exact Last-Modified: 206"
hdr "$F" -r 100-199 -H 'If-Range: "other"'
is "$code" 200 "If-Range with another ETag: the whole file, 200"
is "$(wc -c <"$IB_TMP/body" | tr -d ' ')" 300000 "all of it"
hdr "$F" -r 100-199 -H "If-Range: W/$etag"
is "$code" 200 "If-Range with a weak ETag: 200 (strong comparison)"
hdr "$F" -r 100-199 -H 'If-Range: Thu, 01 Jan 1998 00:00:00 GMT'
is "$code" 200 "If-Range with another date: 200"

# ---- a large file, in sendfile calls wider than libmicrohttpd's ----

head -c 20000000 /dev/urandom >"$OSIE/initrd" || bail_out "cannot write a file"
w0=$(metric ironbell_http_sendfile_widened_total)
hdr "$BASE/osie/initrd"
is "$code" 200 "a 20 MB file: 200"
cmp -s "$IB_TMP/body" "$OSIE/initrd"
is "$?" 0 "with every byte of it"
w1=$(metric ironbell_http_sendfile_widened_total)
[ "${w1:-0}" -gt "${w0:-0}" ]
is "$?" 0 "sent in calls wider than libmicrohttpd's 128 KiB (ironbell_http_sendfile_widened_total $w0 -> $w1)"
hdr "$BASE/osie/initrd" -r 1000-15000999
is "$code" 206 "a Range of 15 MB of it: 206"
dd if="$OSIE/initrd" of="$IB_TMP/span" bs=1000 skip=1 count=15000 2>/dev/null
cmp -s "$IB_TMP/body" "$IB_TMP/span"
is "$?" 0 "with the bytes of that span, none past its end"
hdr "$BASE/osie/initrd" -r 19999000-
is "$code" 206 "the last 1000 bytes: 206"
tail -c 1000 "$OSIE/initrd" >"$IB_TMP/span"
cmp -s "$IB_TMP/body" "$IB_TMP/span"
is "$?" 0 "with those bytes"

# ---- HEAD ----

run curl -s --max-time 10 -I -o "$IB_TMP/hdrs" -w '%{http_code}' "$F"
is "$out" 200 "HEAD: 200"
hdrs=$(tr -d '\r' <"$IB_TMP/hdrs")
is "$(header ETag)" "$etag" "with the ETag"
is "$(header Content-Length)" 300000 "and the length"

# ---- a changed file ----

head -c 300000 /dev/urandom >"$OSIE/vmlinuz-x86_64.new" &&
	mv "$OSIE/vmlinuz-x86_64.new" "$OSIE/vmlinuz-x86_64"
hdr "$F" -H "If-None-Match: $etag"
is "$code" 200 "the file replaced: the old ETag gets 200"
isnt_same=$(header ETag)
[ "$isnt_same" != "$etag" ]
is "$?" 0 "and a new ETag"
cmp -s "$IB_TMP/body" "$OSIE/vmlinuz-x86_64"
is "$?" 0 "and the new bytes"
hdr "$F" -r 0-9 -H "If-Range: $etag"
is "$code" 200 "a resumed download of the old file gets the whole new one"

# ---- the bound per client address ----

slow() {
	curl -s --max-time 120 --limit-rate 64k -o /dev/null "$BASE/osie/big" &
	ib_bg $!
	eval "$1=\$!"
}
slow s1
slow s2
wait_for 20 active_is 2
is "$?" 0 "two slow downloads are in flight"
hdr "$F"
is "$code" 503 "a third file from the same address: 503"
is "$(header Retry-After)" 1 "with Retry-After: 1"
file_has "$IB_LOG" 'osie vmlinuz-x86_64 refused to 127\.0\.0\.1: 2 downloads of that address in flight \(ipxe\.max_downloads_per_client\)'
is "$?" 0 "and a log line that names the setting"
hdr "$F" -H "If-None-Match: $isnt_same"
is "$code" 304 "a 304 holds no slot: it is answered"
hdr "$BASE/osie/missing"
is "$code" 404 "nor does a 404"
like "$(metric ironbell_ipxe_downloads_refused_total)" '^1$' "refusals are counted"

ib_kill "$s1" 5
wait_for 20 active_is 1
is "$?" 0 "an aborted download gives its slot back"
ok=0
for i in 1 2 3; do
	hdr "$F"
	[ "$code" = 200 ] && ok=$((ok + 1))
done
is "$ok" 3 "one slot free: three downloads in a row end and each gives it back"
ib_kill "$s2" 5
wait_for 20 active_is 0
is "$?" 0 "no download in flight at the end"

run curl -s --max-time 5 --unix-socket "$IB_SOCK" http://localhost/metrics
like "$out" 'ironbell_ipxe_files_total\{route="osie",outcome="not_modified"\} [1-9]' \
	"304s are counted"
like "$out" 'ironbell_ipxe_files_total\{route="osie",outcome="refused"\} 1' "refusals by route"

ib_stop_daemon
is "$IB_DAEMON_STATUS" 0 "the daemon stops cleanly"
ib_log_clean
is "$?" 0 "no sanitizer report in the log"
tap_done
