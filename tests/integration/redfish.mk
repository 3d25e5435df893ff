# The Redfish emulator of tests/redfish/ (redfish_emu.py, standard library
# only, run by /usr/bin/python3), proven with the real clients redfishtool
# and python3-sushy over TLS with a self-signed certificate
# (test_redfish_emu). Needs redfishtool, python3-sushy, openssl and curl;
# the test skips without them.
REDFISH_INTEGRATION_TESTS = \
	tests/integration/test_redfish_emu.sh
TESTS += $(REDFISH_INTEGRATION_TESTS)
EXTRA_DIST += $(REDFISH_INTEGRATION_TESTS) \
	tests/redfish/redfish_emu.py \
	tests/redfish/emu.sh

# The Redfish engine (bmc/redfish/) driven by tests/bmc/bmc-call against
# the emulator over TLS (test_bmc_redfish). Needs openssl and curl.
REDFISH_ENGINE_TESTS = \
	tests/integration/test_bmc_redfish.sh
TESTS += $(REDFISH_ENGINE_TESTS)
EXTRA_DIST += $(REDFISH_ENGINE_TESTS)

# The daemon end to end over Redfish: ironbelld's controllers against the
# emulator, its certificate verified with bmc.redfish.ca_file
# (test_bmc_daemon_redfish). Needs openssl and curl.
REDFISH_DAEMON_TESTS = \
	tests/integration/test_bmc_daemon_redfish.sh
TESTS += $(REDFISH_DAEMON_TESTS)
EXTRA_DIST += $(REDFISH_DAEMON_TESTS)
