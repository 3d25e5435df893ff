#!/bin/sh
# check_jsonmem_off — check_jsonmem again with IRONBELL_JSONMEM=off, the
# switch ironbelld(8) gives operators: nothing is cut from blocks, and the
# same trees decode and free through malloc().
: "${top_builddir:?}"
IRONBELL_JSONMEM=off exec "$top_builddir/tests/unit/check_jsonmem"
