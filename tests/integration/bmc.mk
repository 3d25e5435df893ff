# The simulated IPMI BMC of the BMC tests: ipmi_sim (package openipmi) on
# 127.0.0.1, configured by tests/integration/bmc/ (lan.conf, bmc.emu, the
# chassis_control.sh hook that keeps the simulated power state and boot
# device) and started by the helpers of ipmisim.sh; test_ipmi_sim proves
# it with the reference client, ipmitool -I lanplus. Needs openipmi and
# ipmitool (each test skips without them).
BMC_INTEGRATION_TESTS = \
	tests/integration/test_ipmi_sim.sh
# The IPMI engine through tests/bmc/bmc-call, against the same simulator.
BMC_INTEGRATION_TESTS += tests/integration/test_bmc_ipmi.sh
TESTS += $(BMC_INTEGRATION_TESTS)
EXTRA_DIST += $(BMC_INTEGRATION_TESTS) \
	tests/integration/bmc/README \
	tests/integration/bmc/lan.conf \
	tests/integration/bmc/bmc.emu \
	tests/integration/bmc/chassis_control.sh \
	tests/integration/bmc/ipmisim.sh \
	tests/integration/bmc/objects.sh

# The daemon end to end against ipmi_sim: Machines, Jobs, the client's
# power and bootdev, Contactable, and no password in any output.
TESTS += tests/integration/test_bmc_daemon.sh
EXTRA_DIST += tests/integration/test_bmc_daemon.sh
