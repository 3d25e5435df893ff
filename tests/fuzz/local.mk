# Each target X adds, in its module's fragment:
#   check_PROGRAMS += tests/fuzz/X_replay
#   tests_fuzz_X_replay_SOURCES = tests/fuzz/X.c tests/fuzz/replay.c
#   tests_fuzz_X_replay_LDADD = ...
#   TESTS += tests/fuzz/X.fuzz          (a one-line marker file)
#   if ENABLE_FUZZ ... noinst_PROGRAMS += tests/fuzz/X (with -fsanitize=fuzzer)
# The marker runs the replay binary over tests/fuzz/corpus/X/.
EXTRA_DIST += tests/fuzz/replay.sh tests/fuzz/replay.c tests/fuzz/corpus
FUZZ_FLAGS = -fsanitize=fuzzer,address,undefined -g -O1
