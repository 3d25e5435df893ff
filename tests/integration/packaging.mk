# Packaging checks: banned functions (STYLE.md rule 8), manual pages under
# mandoc -Tlint, and the systemd unit and snippets under systemd's own tools.
PACKAGING_TESTS = \
	tests/integration/test_lint.sh \
	tests/integration/test_layering.sh \
	tests/integration/test_manlint.sh \
	tests/integration/test_systemd.sh
TESTS += $(PACKAGING_TESTS)
EXTRA_DIST += $(PACKAGING_TESTS)
