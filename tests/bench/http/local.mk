# HTTP benchmark (make bench, never make check): wrk on the public
# listener's per-machine answers with 10,000 Hardware of a fleet's size
# (tests/gen-hardware.sh --rich) and 10,000 small ones, every request from
# another machine and from one machine on one plain URL, keep-alive,
# "Connection: close" and one connection, against nginx serving the same
# bytes, with the client's CPU beside each server's; see
# tests/bench/http/run.sh. bench-http runs the iPXE script and /httpboot
# cases, bench-metadata (tests/bench/metadata/local.mk) the metadata ones.
EXTRA_DIST += tests/bench/http/run.sh tests/bench/http/common.sh
bench: bench-http
bench-http: ironbelld ironbell
	BENCH_HTTP_CASES="$${BENCH_HTTP_CASES:-ipxe httpboot}" \
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/http/run.sh
.PHONY: bench-http
