# Workflow benchmark (make bench, never make check): 1,000 simulated
# tink-agents (agents.c) each running a 10-action workflow with empty
# actions against ironbelld's worker protocol, and against the floor
# (floor.c: a gRPC server on the same libraries with no store behind
# it) in the same run. See tests/bench/workflow/run.sh for what it
# measures and its variables (BENCH_WF_*).
EXTRA_DIST += tests/bench/workflow/run.sh tests/bench/workflow/fixtures.sh \
	tests/bench/workflow/floor.py
EXTRA_PROGRAMS += tests/bench/workflow/agents tests/bench/workflow/floor
tests_bench_workflow_agents_SOURCES = tests/bench/workflow/agents.c tests/bench/workflow/h2bench.h
tests_bench_workflow_agents_CFLAGS = $(AM_CFLAGS) $(NGHTTP2_CFLAGS) $(TINKPB_CFLAGS)
tests_bench_workflow_agents_LDADD = $(TINKPB_LIBS) $(NGHTTP2_LIBS) $(COMMON_LIBS)
tests_bench_workflow_floor_SOURCES = tests/bench/workflow/floor.c tests/bench/workflow/h2bench.h
tests_bench_workflow_floor_CFLAGS = $(AM_CFLAGS) $(NGHTTP2_CFLAGS) $(TINKPB_CFLAGS)
tests_bench_workflow_floor_LDADD = $(TINKPB_LIBS) $(NGHTTP2_LIBS) $(COMMON_LIBS)
CLEANFILES += tests/bench/workflow/agents tests/bench/workflow/floor
bench: bench-workflow
bench-workflow: ironbelld ironbell tests/bench/workflow/agents tests/bench/workflow/floor
	top_builddir='$(abs_top_builddir)' top_srcdir='$(abs_top_srcdir)' \
	  bash $(top_srcdir)/tests/bench/workflow/run.sh
.PHONY: bench-workflow
