# objects.sh — reading the BMC objects of a running ironbelld through the
# client, for the daemon's BMC tests (POSIX sh, sourced after tests/lib.sh;
# needs /usr/bin/python3).
#
#   ibc ARGS...                 ib ARGS, with its output also appended to
#                               $CLI_OUT (for the check that a password is
#                               in no output)
#   pyjson EXPR                 EXPR evaluated with d = the JSON on stdin
#   machine_is NAME POWER C     the Machine's powerState is POWER and its
#                               Contactable condition's status C
#   contactable_msg NAME        prints the message of Contactable=False
#   contactable_false NAME      true when the Machine is Contactable=False
#   job_state NAME              prints Completed or Failed (or nothing)
#   job_done NAME               true when the Job has ended

CLI_OUT=$IB_TMP/cli-outputs
: >"$CLI_OUT"
OBJ_PY=/usr/bin/python3

ibc() {
	ib "$@"
	printf '%s\n%s\n' "$out" "$err" >>"$CLI_OUT"
}

pyjson() {
	"$OBJ_PY" -c 'import json, sys
try:
    d = json.load(sys.stdin)
    print(eval(sys.argv[1]))
except Exception as e:
    print("<%s>" % e)' "$1"
}

machine_is() {
	ibc get machine "$1" -o json
	[ "$(printf '%s' "$out" | pyjson 'd.get("status", {}).get("powerState")')" = "$2" ] &&
		[ "$(printf '%s' "$out" | pyjson '[c["status"] for c in d.get("status", {}).get("conditions", []) if c["type"] == "Contactable"]')" = "['$3']" ]
}

contactable_msg() {
	ibc get machine "$1" -o json
	printf '%s' "$out" | pyjson '[c.get("message", "") for c in d.get("status", {}).get("conditions", []) if c["type"] == "Contactable" and c["status"] == "False"][0]'
}

contactable_false() {
	case $(contactable_msg "$1") in
	"<"*">") return 1 ;;
	esac
}

job_state() {
	ibc get job "$1" -o json
	printf '%s' "$out" | pyjson '" ".join(c["type"] for c in d.get("status", {}).get("conditions", []) if c["type"] in ("Completed", "Failed") and c["status"] == "True")'
}

job_done() { [ -n "$(job_state "$1")" ]; }
