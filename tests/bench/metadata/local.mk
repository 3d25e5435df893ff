# Metadata benchmark (make bench, never make check): wrk on the EC2
# hostname (/2009-04-04/meta-data/hostname), Hegel's /metadata and
# NoCloud's /nocloud/user-data, by X-Forwarded-For through a trusted
# proxy, every request from another of 10,000 machines and from one
# machine, against nginx serving the same bytes, with the client's CPU
# beside each server's, and the daemon's RSS before and after. The script
# is the HTTP benchmark's (tests/bench/http/run.sh).
bench: bench-metadata
bench-metadata: ironbelld ironbell
	BENCH_HTTP_CASES="$${BENCH_HTTP_CASES:-hostname metadata userdata}" \
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/http/run.sh
.PHONY: bench-metadata
