# TFTP benchmark (make bench, never make check; root): ipxe.efi fetched by
# atftp from ironbelld, tftpd-hpa and atftpd, windowsize 1, 8 and 16, one
# client and 50 at once, with no added delay and with a 2 ms round trip
# through tests/delayline. See tests/bench/tftp/run.sh.
EXTRA_DIST += tests/bench/tftp/run.sh
bench: bench-tftp
bench-tftp: ironbelld tests/delayline
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/tftp/run.sh
.PHONY: bench-tftp
