# Validation tests.
