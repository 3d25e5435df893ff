# The workflows end to end against the real ironbelld (each test starts
# its own): the worker protocol with python3-grpcio and @grpc/grpc-js
# clients, h2c and TLS, refusals and malformed calls (test_worker_grpc);
# the engine through the daemon: retries, cleanup on failure, the global
# timeout, two Workflows for one agent, a SIGKILL in the middle
# (test_workflow_engine); ironbell-agent --runtime host
# (test_agent_daemon); the closed loop after SUCCESS, a netboot reported
# and a disk boot recorded, with DHCP in namespaces (test_workflow_booted).
# tests/integration/workflow/ holds what they share:
# objects.sh (objects and waits), wfagent.py (a scripted worker).
WORKFLOW_INTEGRATION_TESTS = \
	tests/integration/test_worker_grpc.sh \
	tests/integration/test_workflow_engine.sh \
	tests/integration/test_agent_daemon.sh \
	tests/integration/test_workflow_booted.sh
TESTS += $(WORKFLOW_INTEGRATION_TESTS)
EXTRA_DIST += $(WORKFLOW_INTEGRATION_TESTS) \
	tests/integration/workflow/objects.sh \
	tests/integration/workflow/wfagent.py
