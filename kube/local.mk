# The Kubernetes watcher: the API client (libcurl), the watch-stream
# decoder, the watcher, the status writer and the leader elector. Each
# piece adds its sources in its own fragment below.
noinst_LIBRARIES += libkube.a
libkube_a_SOURCES = kube/kube.h kube/kube-internal.h kube/settings.c
libkube_a_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS)
KUBE_LIBS = libkube.a $(CURL_LIBS) $(JANSSON_LIBS) $(YAML_LIBS)

include kube/client.mk
include kube/watchdec.mk
include kube/watcher.mk
include kube/wback.mk
include kube/leader.mk
include kube/ktests.mk
