# Instance metadata: EC2-style, Hegel JSON, cloud-init NoCloud, Ignition;
# the pure parts (routes, client address, documents); daemon/public/public.c is
# the shell.
noinst_LIBRARIES += libmetadata.a
libmetadata_a_SOURCES = metadata/metadata.h metadata/metadata-internal.h \
	metadata/route.c metadata/ec2.c metadata/cloud.c
libmetadata_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
METADATA_LIBS = libmetadata.a

check_PROGRAMS += tests/unit/check_metadata
TESTS += tests/unit/check_metadata
tests_unit_check_metadata_SOURCES = tests/unit/check_metadata.c tests/unit/unit.h
tests_unit_check_metadata_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_check_metadata_LDADD = $(METADATA_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)

# The path router and X-Forwarded-For fuzz target (see tests/fuzz/local.mk).
check_PROGRAMS += tests/fuzz/fuzz_metadata_replay
tests_fuzz_fuzz_metadata_replay_SOURCES = tests/fuzz/fuzz_metadata.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_metadata_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS)
tests_fuzz_fuzz_metadata_replay_LDADD = $(METADATA_LIBS) $(COMMON_LIBS) $(JANSSON_LIBS) $(YAML_LIBS)
TESTS += tests/fuzz/fuzz_metadata.fuzz
EXTRA_DIST += tests/fuzz/fuzz_metadata.fuzz
if ENABLE_FUZZ
noinst_PROGRAMS += tests/fuzz/fuzz_metadata
tests_fuzz_fuzz_metadata_SOURCES = tests/fuzz/fuzz_metadata.c tests/fuzz/fuzz.h \
	metadata/route.c metadata/ec2.c metadata/cloud.c
tests_fuzz_fuzz_metadata_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS) $(FUZZ_FLAGS)
tests_fuzz_fuzz_metadata_LDFLAGS = $(FUZZ_FLAGS)
tests_fuzz_fuzz_metadata_LDADD = $(COMMON_LIBS) $(JANSSON_LIBS) $(YAML_LIBS)
endif

# With curl and cloud-init's own code against the real daemon (loopback).
TESTS += tests/integration/test_metadata.sh tests/integration/test_metadata_netns.sh
EXTRA_DIST += tests/integration/test_metadata.sh tests/integration/test_metadata_netns.sh
