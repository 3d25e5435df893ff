# Integration tests of the client and the daemon together (each starts its
# own ironbelld; see tests/lib.sh). test_crash needs the sqlite3 tool.
CLI_INTEGRATION_TESTS = \
	tests/integration/test_cli.sh \
	tests/integration/test_cli_workflow.sh \
	tests/integration/test_crash.sh
TESTS += $(CLI_INTEGRATION_TESTS)
EXTRA_DIST += $(CLI_INTEGRATION_TESTS) tests/integration/fixtures
# What the daemon keeps resident after applies of 20,000 Hardware.
TESTS += tests/integration/test_apply_memory.sh
EXTRA_DIST += tests/integration/test_apply_memory.sh

# Workflows and the worker protocol end to end.
include tests/integration/workflow.mk

# The Kubernetes API-server emulator and its proof with kubectl.
include tests/integration/kube.mk

# kea-dhcp4 with the hook library, beside ironbelld.
include tests/integration/kea.mk
