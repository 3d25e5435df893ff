# The daemon's life cycle: flags, -n on good and bad configurations, the
# systemd notifications seen by a fake NOTIFY_SOCKET, SIGHUP, SIGTERM and
# SIGINT, a busy socket and a busy port, the command-line overrides (needs
# python3).
TESTS += tests/integration/test_daemon.sh
EXTRA_DIST += tests/integration/test_daemon.sh

# A reload while a request is in flight on the public listener: the request
# keeps its configuration snapshot, the listener thread moves on, nothing in
# use is freed (python3, curl).
TESTS += tests/integration/test_http_reload.sh
EXTRA_DIST += tests/integration/test_http_reload.sh

# Least privilege: no capability is left after start-up, as root by hand
# and as a user with ambient capabilities; DHCP, TFTP and a reload still
# work (root, network namespaces; busybox udhcpc, curl, setpriv).
TESTS += tests/integration/test_privilege.sh
EXTRA_DIST += tests/integration/test_privilege.sh

# The admin API over TLS with a self-signed certificate made by openssl:
# curl and ironbell over https, 401, plain HTTP refused; the refusals of
# api.listen and its token; http.public_metrics.
TESTS += tests/integration/test_api_tls.sh
EXTRA_DIST += tests/integration/test_api_tls.sh

# The workflow controller in the daemon: Template, Hardware and Workflow
# applied with the client reach PENDING; a bad template FAILED with its
# line and column; toggleAllowNetboot; a restart (needs python3, curl).
TESTS += tests/integration/test_workflow_daemon.sh
EXTRA_DIST += tests/integration/test_workflow_daemon.sh

# The public listener's answer cache: the same bytes as the store path,
# a change, a deletion, a moved MAC and a reload served at the next
# request, the boot mark still recorded (curl).
TESTS += tests/integration/test_http_answers.sh tests/integration/test_http_prebuild_netns.sh
EXTRA_DIST += tests/integration/test_http_answers.sh tests/integration/test_http_prebuild_netns.sh
