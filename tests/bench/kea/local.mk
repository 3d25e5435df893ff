# Kea hook benchmark (make bench, never make check): perfdhcp against
# kea-dhcp4 alone with its own host reservations and kea-dhcp4 with
# libdhcp_ironbell.so and the same machines as Hardware in ironbelld's
# store, in network namespaces; needs root. See tests/bench/kea/run.sh for
# what it measures and its variables. Without the built hook it measures
# Kea alone and says so.
EXTRA_DIST += tests/bench/kea/run.sh tests/bench/kea/layout.py tests/bench/kea/noop-hook.cc
bench: bench-kea
bench-kea: ironbelld ironbell
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  CXX='$(CXX)' KEA_CPPFLAGS='$(KEA_CPPFLAGS)' KEA_LIBS='$(KEA_LIBS)' \
	  bash $(top_srcdir)/tests/bench/kea/run.sh
.PHONY: bench-kea
