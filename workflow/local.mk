# Templates and workflows: the Go text/template renderer (lexer, parser,
# evaluator, functions) and the data a Workflow's template is rendered
# with. Pure: the engine and the worker protocol build on it.
noinst_LIBRARIES += libworkflow.a
libworkflow_a_SOURCES = workflow/workflow.h workflow/template-internal.h \
	workflow/template-lex.c workflow/template-parse.c workflow/template-exec.c \
	workflow/template-print.c workflow/template-funcs.c workflow/template-data.c
libworkflow_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS)
WORKFLOW_LIBS = libworkflow.a

check_PROGRAMS += tests/unit/check_template
TESTS += tests/unit/check_template
tests_unit_check_template_SOURCES = tests/unit/check_template.c tests/unit/unit.h
tests_unit_check_template_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_template_LDADD = $(WORKFLOW_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)
EXTRA_DIST += tests/unit/fixtures/template-ubuntu.tmpl tests/unit/fixtures/template-ubuntu.hw.json \
	tests/unit/fixtures/template-ubuntu.out tests/unit/fixtures/template-ubuntu-arm.out

# The template parser and evaluator's fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_template_replay
tests_fuzz_fuzz_template_replay_SOURCES = tests/fuzz/fuzz_template.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_template_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_template_replay_LDADD = $(WORKFLOW_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS)
TESTS += tests/fuzz/fuzz_template.fuzz
EXTRA_DIST += tests/fuzz/fuzz_template.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_template
tests_fuzz_fuzz_template_SOURCES = tests/fuzz/fuzz_template.c tests/fuzz/fuzz.h \
	workflow/template-lex.c workflow/template-parse.c workflow/template-exec.c \
	workflow/template-print.c workflow/template-funcs.c workflow/template-data.c
tests_fuzz_fuzz_template_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_template_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_template_LDADD = $(COMMON_LIBS) $(JANSSON_LIBS)
endif

# The template's YAML schema and its validation: a rendered template to
# struct wf_template, every error with its path, line and column.
libworkflow_a_SOURCES += workflow/template-schema.c

check_PROGRAMS += tests/unit/check_template_schema
TESTS += tests/unit/check_template_schema
tests_unit_check_template_schema_SOURCES = tests/unit/check_template_schema.c tests/unit/unit.h
tests_unit_check_template_schema_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_template_schema_LDADD = $(WORKFLOW_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) \
	$(YAML_LIBS) $(CHECK_LIBS)

# The schema's fuzz target: the input is a rendered template.
check_PROGRAMS += tests/fuzz/fuzz_template_schema_replay
tests_fuzz_fuzz_template_schema_replay_SOURCES = tests/fuzz/fuzz_template_schema.c \
	tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_template_schema_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_fuzz_fuzz_template_schema_replay_LDADD = $(WORKFLOW_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) \
	$(YAML_LIBS)
TESTS += tests/fuzz/fuzz_template_schema.fuzz
EXTRA_DIST += tests/fuzz/fuzz_template_schema.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_template_schema
tests_fuzz_fuzz_template_schema_SOURCES = tests/fuzz/fuzz_template_schema.c tests/fuzz/fuzz.h \
	workflow/template-schema.c
tests_fuzz_fuzz_template_schema_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_template_schema_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_template_schema_LDADD = $(WORKFLOW_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) $(YAML_LIBS)
endif

# The workflow engine: the controller's step (rendering, boot options,
# timeouts, retries, cleanup) and the worker API's transitions (which
# workflow, which action, a report applied), and `ironbell workflow
# retry`. Pure: tested without sockets or a store (the store only checks
# that every status produced is valid).
libworkflow_a_SOURCES += workflow/engine.h workflow/engine-internal.h workflow/engine.c \
	workflow/engine-util.c workflow/engine-build.c workflow/engine-step.c workflow/engine-boot.c \
	workflow/retry.c

check_PROGRAMS += tests/unit/check_engine
TESTS += tests/unit/check_engine
tests_unit_check_engine_SOURCES = tests/unit/check_engine.c tests/unit/engine_fixture.h \
	tests/unit/unit.h
tests_unit_check_engine_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_engine_LDADD = $(WORKFLOW_LIBS) $(STORE_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) \
	$(YAML_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_engine_step
TESTS += tests/unit/check_engine_step
tests_unit_check_engine_step_SOURCES = tests/unit/check_engine_step.c tests/unit/engine_fixture.h \
	tests/unit/unit.h
tests_unit_check_engine_step_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_engine_step_LDADD = $(WORKFLOW_LIBS) $(STORE_LIBS) $(COMMON_LIBS) \
	$(JANSSON_LIBS) $(YAML_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_engine_boot
TESTS += tests/unit/check_engine_boot
tests_unit_check_engine_boot_SOURCES = tests/unit/check_engine_boot.c tests/unit/engine_fixture.h \
	tests/unit/unit.h
tests_unit_check_engine_boot_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_engine_boot_LDADD = $(WORKFLOW_LIBS) $(STORE_LIBS) $(COMMON_LIBS) \
	$(JANSSON_LIBS) $(YAML_LIBS) $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_engine_shared
TESTS += tests/unit/check_engine_shared
tests_unit_check_engine_shared_SOURCES = tests/unit/check_engine_shared.c \
	tests/unit/engine_fixture.h tests/unit/unit.h
tests_unit_check_engine_shared_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_engine_shared_LDADD = $(WORKFLOW_LIBS) $(STORE_LIBS) $(COMMON_LIBS) \
	$(JANSSON_LIBS) $(YAML_LIBS) $(CHECK_LIBS)

# The workflow controller: the thread that follows Workflows, Templates,
# Hardware and bmc Jobs in the store and carries out the engine's steps.
libworkflow_a_SOURCES += workflow/settings.c workflow/controller-internal.h \
	workflow/controller.c workflow/controller-step.c

check_PROGRAMS += tests/unit/check_workflow_ctl
TESTS += tests/unit/check_workflow_ctl
tests_unit_check_workflow_ctl_SOURCES = tests/unit/check_workflow_ctl.c tests/unit/unit.h \
	tests/unit/store_fixture.h
tests_unit_check_workflow_ctl_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_workflow_ctl_LDADD = $(WORKFLOW_LIBS) $(STORE_LIBS) $(COMMON_LIBS) \
	$(JANSSON_LIBS) $(YAML_LIBS) $(CHECK_LIBS)
# The worker API (gRPC proto.WorkflowService): the HTTP/2 and gRPC layer
# of a connection (nghttp2), the server thread (epoll, h2c and TLS) and
# the worker API over the Workflow cache. Links the engine (libworkflow),
# the messages (libtinkpb), nghttp2, protobuf-c and OpenSSL.
noinst_LIBRARIES += libwfgrpc.a
libwfgrpc_a_SOURCES = workflow/grpc-internal.h workflow/grpc-h2.c workflow/grpc-server.c \
	workflow/grpc-api.c
libwfgrpc_a_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/common
libwfgrpc_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(NGHTTP2_CFLAGS) $(PROTOBUF_C_CFLAGS) \
	$(SSL_CFLAGS)
WFGRPC_LIBS = libwfgrpc.a $(WORKFLOW_LIBS) $(TINKPB_LIBS) $(NGHTTP2_LIBS) $(SSL_LIBS) $(CRYPTO_LIBS)

check_PROGRAMS += tests/unit/check_grpc_server
TESTS += tests/unit/check_grpc_server
tests_unit_check_grpc_server_SOURCES = tests/unit/check_grpc_server.c tests/unit/unit.h
tests_unit_check_grpc_server_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(NGHTTP2_CFLAGS) \
	$(TINKPB_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_grpc_server_LDADD = $(WFGRPC_LIBS) $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)

# The HTTP/2 and gRPC layer's fuzz target (see tests/fuzz/local.mk): the
# input is what a client sends on the connection.
check_PROGRAMS += tests/fuzz/fuzz_h2_replay
tests_fuzz_fuzz_h2_replay_SOURCES = tests/fuzz/fuzz_h2.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_h2_replay_CFLAGS = $(AM_CFLAGS) $(NGHTTP2_CFLAGS)
tests_fuzz_fuzz_h2_replay_LDADD = libwfgrpc.a $(TINKPB_LIBS) $(COMMON_LIBS) $(NGHTTP2_LIBS)
TESTS += tests/fuzz/fuzz_h2.fuzz
EXTRA_DIST += tests/fuzz/fuzz_h2.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_h2
tests_fuzz_fuzz_h2_SOURCES = tests/fuzz/fuzz_h2.c tests/fuzz/fuzz.h workflow/grpc-h2.c \
	workflow/grpc-internal.h
tests_fuzz_fuzz_h2_CFLAGS = $(AM_CFLAGS) $(NGHTTP2_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_h2_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_h2_LDADD = $(TINKPB_LIBS) $(COMMON_LIBS) $(NGHTTP2_LIBS)
endif

# The worker API in ironbelld against real gRPC clients (tests/grpc/).
TESTS += tests/integration/test_grpc_daemon.sh
EXTRA_DIST += tests/integration/test_grpc_daemon.sh
