# emu.sh — the Redfish emulator (redfish_emu.py) for the shell tests (POSIX
# sh, sourced after tests/lib.sh). Needs openssl and curl.
#
#   emu_cert NAME          a self-signed certificate for 127.0.0.1 in
#                          $IB_TMP/NAME.pem with its key in NAME.key; sets
#                          CERT and KEY to them
#   emu_start NAME ARGS... starts an emulator with CERT, KEY, BMC_USER and
#                          BMC_PASS on a free port (it binds port 0 and
#                          writes the port it got) and ARGS; sets EMU_PID,
#                          EMU_URL and EMU_PORT (the first BMC's) and
#                          EMU_PORTS (every BMC's, with --bmcs)
#   st URL KEY/KEY/...     one value of that emulator's /emu/state (a list
#                          index may be negative: -1 is the last)
#
# The emulator runs under /usr/bin/python3 and is registered with ib_bg,
# so the EXIT trap of tests/lib.sh stops it.

EMU_PY=/usr/bin/python3
EMU=$top_srcdir/tests/redfish/redfish_emu.py

emu_cert() {
	CERT=$IB_TMP/$1.pem
	KEY=$IB_TMP/$1.key
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$KEY" -out "$CERT" -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 >>"$IB_TMP/openssl.log" 2>&1
}

emu_start() {
	_name=$1
	shift
	rm -f "$IB_TMP/$_name.port"
	"$EMU_PY" "$EMU" --cert "$CERT" --key "$KEY" --user "$BMC_USER" \
		--password "$BMC_PASS" --port-file "$IB_TMP/$_name.port" "$@" \
		>>"$IB_TMP/$_name.log" 2>&1 </dev/null &
	EMU_PID=$!
	ib_bg "$EMU_PID"
	if ! wait_for 15 test -s "$IB_TMP/$_name.port"; then
		diag "$(tail -n 20 "$IB_TMP/$_name.log")"
		return 1
	fi
	EMU_PORTS=$(cat "$IB_TMP/$_name.port")
	EMU_PORT=$(head -n 1 "$IB_TMP/$_name.port")
	EMU_URL=https://127.0.0.1:$EMU_PORT
}

st() {
	curl -s --max-time 10 --cacert "$CERT" "$1/emu/state" | "$EMU_PY" -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1].split("/"):
    d = d[int(k)] if isinstance(d, list) else d[k]
print(json.dumps(d) if isinstance(d, (dict, list)) else d)' "$2" 2>/dev/null
}
