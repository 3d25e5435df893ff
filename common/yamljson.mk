# YAML <-> JSON tests and fuzz target (see tests/fuzz/local.mk).
