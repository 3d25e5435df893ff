# Metadata benchmark (make bench, never make check): wrk on
# /2009-04-04/meta-data/hostname and /metadata, every request from another
# of 10,000 machines (X-Forwarded-For through a trusted proxy), against
# nginx serving the same bytes, and the daemon's RSS before and after. The
# script is the HTTP benchmark's (tests/bench/http/run.sh).
bench: bench-metadata
bench-metadata: ironbelld ironbell
	BENCH_HTTP_CASES='hostname metadata' \
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/http/run.sh
.PHONY: bench-metadata
