# Developer tools: the dependency installer and the demo.
dist_noinst_SCRIPTS += tools/install-deps tools/demo.sh tools/demo-boot.sh tools/demo-provision.sh tools/deb-fetch

# make demo: as root, provision a virtual machine under a virtual BMC
# with the daemon just built (tools/demo-provision.sh); otherwise start it
# on a scratch directory, apply etc/examples/ and show the objects
# (tools/demo.sh says each step).
demo: all
	IRONBELLD='$(abs_top_builddir)/ironbelld' IRONBELL='$(abs_top_builddir)/ironbell' \
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	$(SHELL) $(top_srcdir)/tools/demo.sh
.PHONY: demo
