# Shared test infrastructure. Each module's local.mk registers its own unit
# tests and fuzz targets; integration tests are listed here.

EXTRA_DIST += tests/unit/unit.h tests/fuzz/fuzz.h tests/lib.sh tests/gen-hardware.sh tests/tsan.supp

# Fuzz targets: FUZZ_TARGETS names each target X (source tests/fuzz/X.c,
# corpus tests/fuzz/corpus/X/). make check replays the corpus through a
# plain driver; --enable-fuzz (clang) also builds the libFuzzer binaries.
include tests/fuzz/local.mk

include tests/integration/local.mk
include tests/integration/packaging.mk
include tests/integration/daemon.mk
include tests/integration/dhcp.mk
include tests/integration/bmc.mk
include tests/integration/redfish.mk
include tests/e2e/local.mk
include tests/bench/dhcp/local.mk
include tests/bench/http/local.mk
include tests/bench/tftp/local.mk
include tests/bench/metadata/local.mk
include tests/bench/osie/local.mk
include tests/bench/bmc/local.mk
include tests/bench/workflow/local.mk
include tests/bench/provision/local.mk
include tests/bench/kube/local.mk
include tests/bench/kea/local.mk
