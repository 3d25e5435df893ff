# Developer tools: the dependency installer and the demo.
dist_noinst_SCRIPTS += tools/install-deps tools/demo.sh tools/demo-boot.sh tools/deb-fetch

# make demo: start the daemon just built on a scratch directory, apply
# etc/examples/ and show the objects (tools/demo.sh says each step).
demo: all
	IRONBELLD='$(abs_top_builddir)/ironbelld' IRONBELL='$(abs_top_builddir)/ironbell' \
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/tools/demo.sh
.PHONY: demo
