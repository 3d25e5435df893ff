# HTTP benchmark (make bench, never make check): wrk on the iPXE script
# route with 10,000 Hardware, against nginx serving the same bytes. See
# tests/bench/http/run.sh.
EXTRA_DIST += tests/bench/http/run.sh
bench: bench-http
bench-http: ironbelld ironbell
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/http/run.sh
.PHONY: bench-http
