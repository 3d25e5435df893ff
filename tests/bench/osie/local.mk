# OSIE benchmark (make bench, never make check; root): 200 clients
# downloading one 256 MiB file at once over a veth pair between network
# namespaces, from ironbelld's /osie/ and from nginx with sendfile:
# aggregate throughput, server and client CPU per GiB, ratios. See
# tests/bench/osie/run.sh for its variables (BENCH_OSIE_*).
EXTRA_DIST += tests/bench/osie/run.sh
bench: bench-osie
bench-osie: ironbelld
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/osie/run.sh
.PHONY: bench-osie
