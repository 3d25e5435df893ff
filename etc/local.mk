# Installed files: the configuration, the systemd unit, the sysusers and
# tmpfiles snippets, and the example objects. Every directory is a configure
# variable, so DESTDIR and distcheck's unprivileged prefix work unchanged.

ironbellconfdir = $(sysconfdir)/ironbell
dist_ironbellconf_DATA = etc/ironbell.yaml

systemdsystemunit_DATA = etc/ironbelld.service
dist_sysusers_DATA = etc/sysusers.d/ironbell.conf
dist_tmpfiles_DATA = etc/tmpfiles.d/ironbell.conf

ironbellexamplesdir = $(docdir)/examples
dist_ironbellexamples_DATA = \
	etc/examples/bmc-machine.yaml \
	etc/examples/hardware.yaml \
	etc/examples/template.yaml \
	etc/examples/workflow.yaml
# Not in examples/ itself, which `make demo` applies whole: it powers a
# machine off.
ironbellbmcjobsdir = $(docdir)/examples/bmc-jobs
dist_ironbellbmcjobs_DATA = etc/examples/bmc-jobs/netboot-job.yaml
# Nor the Kea configuration, which is no object: `ironbell apply -f` on
# examples/ would read it as one.
ironbellkeaexamplesdir = $(docdir)/examples/kea
dist_ironbellkeaexamples_DATA = etc/examples/kea/kea-dhcp4.json

# The unit names the daemon by its configured path.
etc/ironbelld.service: etc/ironbelld.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) etc && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' $(srcdir)/etc/ironbelld.service.in >$@.tmp && \
	mv $@.tmp $@
EXTRA_DIST += etc/ironbelld.service.in
CLEANFILES += etc/ironbelld.service etc/ironbelld.service.tmp
