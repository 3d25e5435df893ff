#!/bin/sh
# chassis_control.sh — the chassis_control hook of the simulated BMC
# (lan.conf): a machine that is only a power state and a boot device,
# kept in a state file.
#
#   chassis_control.sh STATE get power|boot...
#       prints "power:0|1" and "boot:none|pxe|default|cdrom|bios", one
#       line per name asked, in the order asked
#   chassis_control.sh STATE set NAME VALUE [NAME VALUE...]
#       power 0|1, reset 1 (a pulse: the power state stays), shutdown 1
#       (a soft off: the simulated OS obeys it, so the power goes to 0),
#       boot none|pxe|default|cdrom|bios
#
# STATE holds the two lines "power:P" and "boot:B" (power:0 and boot:none
# when it does not exist yet); it is replaced whole by a rename, so a
# reader never sees half of it. Every call is also appended to STATE.log
# ("get power", "set reset 1", ...), for the tests to count what ran.
# An error is one line on standard output (ipmi_sim reads it) and exit
# status 1, with the state unchanged. While the file STATE.refuse exists,
# every "set" is such an error (a BMC that refuses a change).

state=$1
[ -n "$state" ] || { echo "no state file given"; exit 1; }
shift
op=$1
[ -n "$op" ] || { echo "no operation given"; exit 1; }
shift
echo "$op $*" >>"$state.log"

power=0
boot=none
if [ -f "$state" ]; then
	while IFS=: read -r k v; do
		case $k in
		power) power=$v ;;
		boot) boot=$v ;;
		esac
	done <"$state"
fi

case $op in
get)
	for p in "$@"; do
		case $p in
		power) echo "power:$power" ;;
		boot) echo "boot:$boot" ;;
		*) echo "invalid parameter: $p"; exit 1 ;;
		esac
	done
	exit 0
	;;
set) ;;
*)
	echo "unknown operation: $op"
	exit 1
	;;
esac

if [ -e "$state.refuse" ]; then
	echo "refused: $state.refuse exists"
	exit 1
fi

while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || { echo "no value for $1"; exit 1; }
	case $1:$2 in
	power:0 | power:1) power=$2 ;;
	reset:1) ;;
	reset:0) ;;
	shutdown:1) power=0 ;;
	shutdown:0) ;;
	boot:none | boot:pxe | boot:default | boot:cdrom | boot:bios) boot=$2 ;;
	*) echo "invalid value for $1: $2"; exit 1 ;;
	esac
	shift 2
done

printf 'power:%s\nboot:%s\n' "$power" "$boot" >"$state.tmp" &&
	mv -f "$state.tmp" "$state"
