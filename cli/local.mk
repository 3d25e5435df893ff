# ironbell, the admin client (kubectl-like). Its page is in man/local.mk.
bin_PROGRAMS += ironbell
ironbell_SOURCES = \
	cli/cli.h cli/ironbell.c cli/kinds.c cli/client.c cli/print.c cli/load.c \
	cli/cmd_apply.c cli/cmd_get.c cli/cmd_watch.c cli/cmd_bmc.c
ironbell_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS)
ironbell_LDADD = $(COMMON_LIBS) $(CURL_LIBS)

