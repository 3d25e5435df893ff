# The daemon's life cycle: flags, -n on good and bad configurations, the
# systemd notifications seen by a fake NOTIFY_SOCKET, SIGHUP, SIGTERM and
# SIGINT, a busy socket and a busy port, the command-line overrides (needs
# python3).
TESTS += tests/integration/test_daemon.sh
EXTRA_DIST += tests/integration/test_daemon.sh
