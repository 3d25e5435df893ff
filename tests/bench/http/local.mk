# HTTP benchmark (make bench, never make check): wrk on the public
# listener's per-machine answers (the iPXE script, EC2 metadata, /metadata)
# with 10,000 Hardware, against nginx serving the same bytes. See
# tests/bench/http/run.sh. bench-metadata runs only the metadata cases.
EXTRA_DIST += tests/bench/http/run.sh
bench: bench-http
bench-http: ironbelld ironbell
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/http/run.sh
bench-metadata: ironbelld ironbell
	BENCH_HTTP_CASES='hostname metadata' \
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/http/run.sh
.PHONY: bench-http bench-metadata
