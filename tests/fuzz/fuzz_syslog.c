/* fuzz_syslog — a syslog datagram (untrusted: anyone can send to UDP 514)
 * through the parser and the cleaning an event gets. Properties: every
 * slice lies inside the datagram; severity and facility are in range; a
 * cleaned message has no control byte but tab. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "syslog/syslog-codec.h"
#include "tests/fuzz/fuzz.h"

static void inside(const struct syslog_slice *s, const uint8_t *d, size_t n)
{
	if (s->n && ((const uint8_t *)s->p < d || (const uint8_t *)s->p + s->n > d + n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct syslog_msg m;
	enum syslog_bad why;
	char out[257];
	if (size > SYSLOG_DATAGRAM_MAX || syslog_parse(data, size, &m, &why) < 0)
		return 0;
	if (m.severity > 7 || m.facility > 23)
		abort();
	const struct syslog_slice *all[] = { &m.timestamp, &m.host, &m.app,
					     &m.procid,    &m.msgid, &m.text };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		inside(all[i], data, size);
		size_t k = syslog_clean(all[i], out, 256);
		for (size_t j = 0; j < k; j++)
			if (((unsigned char)out[j] < 0x20 && out[j] != '\t') || out[j] == 0x7f)
				abort();
	}
	return 0;
}
