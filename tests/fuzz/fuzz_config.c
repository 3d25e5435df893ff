/* fuzz_config — config_load_string() on arbitrary bytes. Every input either
 * loads, and the snapshot is freed, or fails with a message; neither may
 * crash, leak or leave the message unterminated. Inputs can name files
 * (api.token_file): the loader opens only regular files, so a fuzzer that
 * names a device or a FIFO cannot block or do harm. */
#include "config.h"

#include <assert.h>
#include <string.h>

#include "daemon/config/conf.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ib_config *c = NULL;
	char err[512];
	memset(err, 'x', sizeof(err));
	int r = config_load_string("fuzz.yaml", (const char *)data, size, &c, err, sizeof(err));
	if (r == 0) {
		assert(c && c->state_dir && c->api.socket && c->http.listen);
		config_free(c);
	} else {
		assert(r < 0 && c == NULL);
		assert(memchr(err, '\0', sizeof(err)) != NULL);
		assert(strncmp(err, "fuzz.yaml", 9) == 0);
	}
	return 0;
}
