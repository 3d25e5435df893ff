# Provisioning benchmark (make bench, never make check): BENCH_PROV_VMS
# (10) QEMU VMs, each under its own ipmi_sim BMC, provisioned at once by
# one ironbelld from power-off to their own disks, against one VM alone:
# the wall time, each phase's, and ironbelld's CPU time over the wall
# time. Root, QEMU and what tests/e2e/test_provision needs. See
# tests/bench/provision/run.sh for its variables (BENCH_PROV_*).
EXTRA_DIST += tests/bench/provision/run.sh
bench: bench-provision
bench-provision: ironbelld ironbell ironbell-agent
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  sh $(top_srcdir)/tests/bench/provision/run.sh
.PHONY: bench-provision
