# common.sh — what the HTTP benchmarks (tests/bench/http/run.sh,
# tests/bench/osie/run.sh) share, sourced by bash after they set $tmp:
#   - ticks PID...: utime+stime of the processes, in clock ticks;
#   - busy: clock ticks all the machine's cores spent not idle;
#   - nginx_write_conf FILE WORKERS CONNECTIONS: nginx's configuration for
#     one run, run by hand from $tmp/nginx (pid, logs and temporary paths
#     there, no access log, sendfile on, keep-alive without a request
#     limit), its server block read from standard input;
#   - cg_cap QUOTA NAME: a cgroup NAME-$$ whose CPU is capped at QUOTA (a
#     share of one core: cgroup v1's cpu.cfs_quota_us, or v2's cpu.max),
#     its directory in $cg; returns 2 when QUOTA is not a share of a core,
#     1 when the machine has no cpu controller, 3 when the cgroup cannot
#     be made; cg_join PID...: moves the
#     processes and their children there; cg_remove: removes it;
#   - cap_servers VAR NAME: cg_cap with the value of the variable VAR (when
#     set), or the script says why it cannot and exits (2: not a share;
#     1: no cgroup made; 0, skipped: no cpu controller).

HZ=$(getconf CLK_TCK)

ticks() {
	local t=0 p s
	for p in "$@"; do
		s=$(cat "/proc/$p/stat" 2>/dev/null) || continue
		s=${s##*) }
		set -- $s
		t=$((t + ${12} + ${13}))
	done
	echo "$t"
}

busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

nginx_write_conf() {
	mkdir -p "$tmp/nginx/logs"
	{
		cat <<CONF
worker_processes $2;
pid $tmp/nginx/nginx-$2.pid;
error_log $tmp/nginx/logs/error.log;
daemon off;
events { worker_connections $3; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
CONF
		cat
		echo "}"
	} >"$1"
}

cg=
cg_cap() {
	local qus
	qus=$(awk -v q="$1" 'BEGIN { printf "%d", q * 100000 }')
	[ "$qus" -ge 1000 ] || return 2
	if [ -w /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
		cg=/sys/fs/cgroup/cpu/$2-$$
		mkdir "$cg" && echo 100000 >"$cg/cpu.cfs_period_us" &&
			echo "$qus" >"$cg/cpu.cfs_quota_us" || return 3
	elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		cg=/sys/fs/cgroup/$2-$$
		mkdir "$cg" && echo "$qus 100000" >"$cg/cpu.max" || return 3
	else
		return 1
	fi
}

cg_join() {
	local p q
	[ -n "$cg" ] || return 0
	for p in "$@"; do
		for q in "$p" $(cat /proc/"$p"/task/*/children 2>/dev/null); do
			echo "$q" >"$cg/cgroup.procs" 2>/dev/null || true
		done
	done
}

cg_remove() {
	[ -z "$cg" ] || { sleep 0.2; rmdir "$cg" 2>/dev/null || true; }
}

cap_servers() {
	local q=${!1:-} r=0
	[ -n "$q" ] || return 0
	cg_cap "$q" "ib-$2" || r=$?
	case $r in
	0) ;;
	2) printf '%s: %s=%s is not a share of a core\n' "$2" "$1" "$q"; exit 2 ;;
	3) printf '%s: cannot make the cgroup %s\n' "$2" "$cg"; exit 1 ;;
	*) printf '%s: no cgroup cpu controller to cap the servers with: skipped\n' "$2"; exit 0 ;;
	esac
}
