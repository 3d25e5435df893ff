# The Redfish emulator of tests/redfish/ (redfish_emu.py, standard library
# only, run by /usr/bin/python3), proven with the real clients redfishtool
# and python3-sushy over TLS with a self-signed certificate
# (test_redfish_emu). Needs redfishtool, python3-sushy, openssl and curl;
# the test skips without them.
REDFISH_INTEGRATION_TESTS = \
	tests/integration/test_redfish_emu.sh
TESTS += $(REDFISH_INTEGRATION_TESTS)
EXTRA_DIST += $(REDFISH_INTEGRATION_TESTS) \
	tests/redfish/redfish_emu.py
