# BMC benchmark (make bench, never make check): 30 netboot Jobs on
# simulated IPMI BMCs (ipmi_sim) and one power poll of 100 IPMI + 1,000
# Redfish BMCs (tests/redfish/redfish_emu.py over TLS), by ironbell's
# engines (tests/bmc/bmc-call) and by ironbelld, against the same work
# done Rufio's way (one ipmitool or curl process per command) at
# concurrency 1 and 10, in the same run. See tests/bench/bmc/run.sh for
# its variables (BENCH_BMC_*).
EXTRA_DIST += tests/bench/bmc/run.sh tests/bench/bmc/wait.py
bench: bench-bmc
bench-bmc: ironbelld ironbell tests/bmc/bmc-call
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/bmc/run.sh
.PHONY: bench-bmc
