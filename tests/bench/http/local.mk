# HTTP benchmark (make bench, never make check): wrk on the public
# listener's per-machine answers with 10,000 Hardware, against nginx
# serving the same bytes; see tests/bench/http/run.sh. bench-http runs the
# iPXE script case, bench-metadata (tests/bench/metadata/local.mk) the
# metadata ones.
EXTRA_DIST += tests/bench/http/run.sh
bench: bench-http
bench-http: ironbelld ironbell
	BENCH_HTTP_CASES='ipxe' \
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/http/run.sh
.PHONY: bench-http
