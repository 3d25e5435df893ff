# Packaging checks: banned functions (docs/contributing.md,
# "Untrusted input"), manual pages under mandoc -Tlint, the systemd unit and
# snippets under systemd's own tools, and the set-up: make demo and make
# check install their own dependencies.
PACKAGING_TESTS = \
	tests/integration/test_lint.sh \
	tests/integration/test_layering.sh \
	tests/integration/test_manlint.sh \
	tests/integration/test_setup.sh \
	tests/integration/test_systemd.sh
TESTS += $(PACKAGING_TESTS)
EXTRA_DIST += $(PACKAGING_TESTS)

# The tree documents itself (README.md, docs/): no file refers to a document
# outside it, and every docs/ page a file names exists.
TESTS += tests/integration/test_docrefs.sh
EXTRA_DIST += tests/integration/test_docrefs.sh
