# Kubernetes-mode benchmark (make bench, never make check): the initial
# sync of 10,000 Hardware and 10,000 Workflows from the API-server
# emulator (tests/kube/) over TLS with a client certificate, time to
# /readyz and RSS, then the change-to-store latency of 1,000 Hardware
# changes a second, followed through the admin API's watch. See
# tests/bench/kube/run.sh for what it measures and its variables
# (BENCH_KUBE_*).
EXTRA_DIST += tests/bench/kube/run.sh tests/bench/kube/kbench.py
bench: bench-kube
bench-kube: ironbelld ironbell
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/kube/run.sh
.PHONY: bench-kube
