# common.sh — what the HTTP benchmarks (tests/bench/http/run.sh,
# tests/bench/osie/run.sh) share, sourced by bash after they set $tmp:
#   - ticks PID...: utime+stime of the processes, in clock ticks;
#   - busy: clock ticks all the machine's cores spent not idle;
#   - nginx_write_conf FILE WORKERS CONNECTIONS: nginx's configuration for
#     one run, run by hand from $tmp/nginx (pid, logs and temporary paths
#     there, no access log, sendfile on, keep-alive without a request
#     limit), its server block read from standard input.

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
