# ipmisim.sh — a simulated IPMI 2.0 BMC for the tests (POSIX sh, sourced
# after tests/lib.sh): ipmi_sim (package openipmi) on 127.0.0.1 and a
# free UDP port, with the configuration of this directory (lan.conf,
# bmc.emu) and chassis_control.sh keeping its power state and boot
# device in a file of the test's temporary directory.
#
#   ipmisim_require              skip_all unless ipmi_sim and ipmitool are here
#   ipmisim_start PORT USER PASS starts one (PORT empty: a free one), waits
#                                until it answers; sets IPMISIM_PORT,
#                                IPMISIM_DIR and IPMISIM_PID
#   ipmisim_state [DIR]          prints "power:P boot:B"
#   ipmisim_calls [DIR]          prints the hook's calls, one a line
#   ipmisim_refuse on|off [DIR]  makes the hook refuse every change, or not
#
# Each simulator gets its own directory, $IB_TMP/ipmisim.PORT (lan.conf,
# the state directory of -s, the hook's state file "chassis" and its log
# "chassis.log", and ipmi_sim's output in "sim.log"); the last one
# started is $IPMISIM_DIR, the default of ipmisim_state and
# ipmisim_calls. ipmi_sim runs with -n (no console on stdin) and -p
# (nothing persists), and is registered with ib_bg, so the EXIT trap of
# tests/lib.sh kills it.
#
# tests/integration/bmc/README says how to run the simulator by hand.

# Absolute: the hook's command line goes into lan.conf as it is, and a
# top_srcdir given by hand may be relative.
IPMISIM_SRC=$(cd "$top_srcdir/tests/integration/bmc" && pwd) || IPMISIM_SRC=
IPMISIM_PORT=
IPMISIM_DIR=
IPMISIM_PID=
# How long ipmisim_start waits for the first answer, in tries of
# ipmitool with one retry of one second.
IPMISIM_START_TRIES=${IPMISIM_START_TRIES:-20}

ipmisim_require() {
	[ -n "$IPMISIM_SRC" ] || skip_all "no tests/integration/bmc under $top_srcdir"
	command -v ipmi_sim >/dev/null 2>&1 || skip_all "ipmi_sim is not installed (package openipmi)"
	command -v ipmitool >/dev/null 2>&1 || skip_all "ipmitool is not installed"
	command -v timeout >/dev/null 2>&1 || skip_all "timeout (coreutils) is not installed"
}

# _ipmisim_sed_escape TEXT: TEXT with the characters special in the
# replacement of a sed s||| escaped.
_ipmisim_sed_escape() {
	printf '%s\n' "$1" | sed -e 's/[\\|&]/\\&/g'
}

# ipmisim_start PORT USER PASS: starts ipmi_sim on 127.0.0.1:PORT (a free
# UDP port when PORT is empty) with one ADMINISTRATOR user USER whose
# password is PASS (at most 20 bytes, no '"'), power off and no boot
# device, and waits until an ipmitool -I lanplus -C 3 session with
# USER/PASS answers (IPMISIM_START_TRIES tries). Returns 1, with
# ipmi_sim's output as diagnostics, when it dies or never answers.
ipmisim_start() {
	_port=$1
	[ -n "$_port" ] || _port=$(ib_free_port udp) || return 1
	_dir=$IB_TMP/ipmisim.$_port
	mkdir -p "$_dir/state" || return 1
	_hook="/bin/sh $IPMISIM_SRC/chassis_control.sh $_dir/chassis"
	sed -e "s|@PORT@|$_port|" \
		-e "s|@USER@|$(_ipmisim_sed_escape "$2")|" \
		-e "s|@PASS@|$(_ipmisim_sed_escape "$3")|" \
		-e "s|@HOOK@|$(_ipmisim_sed_escape "$_hook")|" \
		"$IPMISIM_SRC/lan.conf" >"$_dir/lan.conf" || return 1
	ipmi_sim -n -p -c "$_dir/lan.conf" -f "$IPMISIM_SRC/bmc.emu" -s "$_dir/state" \
		>"$_dir/sim.log" 2>&1 </dev/null &
	_pid=$!
	ib_bg "$_pid"
	IPMISIM_PORT=$_port
	IPMISIM_DIR=$_dir
	IPMISIM_PID=$_pid
	_i=0
	while [ "$_i" -lt "$IPMISIM_START_TRIES" ]; do
		if ! ib_alive "$_pid"; then
			diag "ipmi_sim exited at start; its output:"
			diag "$(cat "$_dir/sim.log")"
			return 1
		fi
		# mc info: a session and one command that does not run the hook.
		if timeout -k 2 10 ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "$_port" \
			-U "$2" -P "$3" -N 1 -R 1 mc info >/dev/null 2>&1; then
			return 0
		fi
		_i=$((_i + 1))
		sleep 0.2
	done
	diag "ipmi_sim on port $_port does not answer; its output:"
	diag "$(cat "$_dir/sim.log")"
	return 1
}

# ipmisim_state [DIR]: the hook's state as "power:P boot:B" (power:0
# boot:none before the first change).
ipmisim_state() {
	_f=${1:-$IPMISIM_DIR}/chassis
	_pw=0
	_bt=none
	if [ -f "$_f" ]; then
		while IFS=: read -r _k _v; do
			case $_k in
			power) _pw=$_v ;;
			boot) _bt=$_v ;;
			esac
		done <"$_f"
	fi
	echo "power:$_pw boot:$_bt"
}

# ipmisim_calls [DIR]: the hook's calls so far, one a line ("get power",
# "set boot pxe", ...); nothing before the first.
ipmisim_calls() {
	cat "${1:-$IPMISIM_DIR}/chassis.log" 2>/dev/null
	return 0
}

# ipmisim_refuse on|off [DIR]: from now on the hook refuses (on) or makes
# (off) every change; ipmi_sim then answers the command with an error.
ipmisim_refuse() {
	case $1 in
	on) : >"${2:-$IPMISIM_DIR}/chassis.refuse" ;;
	off) rm -f "${2:-$IPMISIM_DIR}/chassis.refuse" ;;
	*) return 1 ;;
	esac
}
