# DHCP benchmark (make bench, never make check): perfdhcp against
# ironbelld, Kea and dnsmasq in network namespaces; needs root. See
# tests/bench/dhcp/run.sh for what it measures and its variables
# (BENCH_DHCP_HOSTS=100000 for the large run).
EXTRA_DIST += tests/bench/dhcp/run.sh tests/bench/dhcp/latency.py tests/bench/dhcp/net.sh
EXTRA_PROGRAMS += tests/bench/dhcp/flushfloor
tests_bench_dhcp_flushfloor_SOURCES = tests/bench/dhcp/flushfloor.c
tests_bench_dhcp_flushfloor_LDADD = $(PTHREAD_LIBS)
CLEANFILES += tests/bench/dhcp/flushfloor
bench: bench-dhcp
bench-dhcp: ironbelld ironbell tests/bench/dhcp/flushfloor
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/dhcp/run.sh
.PHONY: bench-dhcp
