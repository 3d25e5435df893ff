# ironbell, the admin client (kubectl-like). Its page is in man/local.mk.
bin_PROGRAMS += ironbell
ironbell_SOURCES = \
	cli/cli.h cli/ironbell.c cli/kinds.c cli/client.c cli/print.c cli/load.c \
	cli/cmd_apply.c cli/cmd_get.c cli/cmd_watch.c cli/cmd_bmc.c \
	cli/wf.c cli/cmd_workflow.c cli/cmd_retry.c
ironbell_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS)
# libworkflow.a: wf_workflow_retry(), the rule of `workflow retry`.
ironbell_LDADD = $(WORKFLOW_LIBS) $(COMMON_LIBS) $(CURL_LIBS)

# The pure Workflow functions of the client (cli/wf.c), without a daemon.
check_PROGRAMS += tests/unit/check_cli_wf
TESTS += tests/unit/check_cli_wf
tests_unit_check_cli_wf_SOURCES = tests/unit/check_cli_wf.c tests/unit/unit.h \
	cli/cli.h cli/wf.c cli/print.c
tests_unit_check_cli_wf_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_cli_wf_LDADD = $(COMMON_LIBS) $(CHECK_LIBS)
