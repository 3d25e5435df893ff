# kube/wback: see kube/local.mk. The pure core of the status write-back:
# merge patches and the Workflow status schemas (kube/patch.c).
libkube_a_SOURCES += kube/patch.c

check_PROGRAMS += tests/unit/check_kube_patch
TESTS += tests/unit/check_kube_patch
tests_unit_check_kube_patch_SOURCES = tests/unit/check_kube_patch.c tests/unit/unit.h
tests_unit_check_kube_patch_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_kube_patch_LDADD = $(KUBE_LIBS) $(STORE_LIBS) $(COMMON_LIBS) $(CHECK_LIBS)
