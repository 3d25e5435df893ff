/* fuzz — every target defines LLVMFuzzerTestOneInput; replay.c runs the
 * seed corpus through it for make check when libFuzzer is not built. */
#pragma once

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
