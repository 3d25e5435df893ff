# Integration tests of the client and the daemon together (each starts its
# own ironbelld; see tests/lib.sh). test_crash needs the sqlite3 tool.
CLI_INTEGRATION_TESTS = \
	tests/integration/test_cli.sh \
	tests/integration/test_crash.sh
TESTS += $(CLI_INTEGRATION_TESTS)
EXTRA_DIST += $(CLI_INTEGRATION_TESTS) tests/integration/fixtures
