# OSIE benchmark (make bench, never make check; root): 200 clients
# downloading one 256 MiB file at once over a veth pair between network
# namespaces, from ironbelld's /osie/ and from nginx with sendfile:
# aggregate throughput, server and client CPU per GiB, ratios. See
# tests/bench/osie/run.sh for its variables (BENCH_OSIE_*).
EXTRA_DIST += tests/bench/osie/run.sh
EXTRA_PROGRAMS += tests/bench/osie/drain
tests_bench_osie_drain_SOURCES = tests/bench/osie/drain.c
CLEANFILES += tests/bench/osie/drain
bench: bench-osie
bench-osie: ironbelld tests/bench/osie/drain
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/osie/run.sh
.PHONY: bench-osie
