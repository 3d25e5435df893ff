noinst_LIBRARIES += libconfig.a
libconfig_a_SOURCES = daemon/config.c daemon/config.h
libconfig_a_CFLAGS = $(AM_CFLAGS) $(YAML_CFLAGS) $(JANSSON_CFLAGS)

noinst_LIBRARIES += libdaemon.a
libdaemon_a_SOURCES = daemon/api.c daemon/api.h
libdaemon_a_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(JANSSON_CFLAGS) $(SYSTEMD_CFLAGS)

sbin_PROGRAMS += ironbelld
ironbelld_SOURCES = daemon/main.c
ironbelld_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(JANSSON_CFLAGS) $(SYSTEMD_CFLAGS)
ironbelld_LDADD = libdaemon.a libconfig.a $(STORE_LIBS) $(COMMON_LIBS) $(MHD_LIBS) $(SYSTEMD_LIBS)

include daemon/config.mk
