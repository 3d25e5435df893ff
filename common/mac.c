/* mac — MAC addresses as text.
 *
 * DESIGN: three parts read a MAC from text: the DHCP server (a Hardware's
 * interfaces, the leases on disk: always "aa:bb:..", as the store's
 * validation and its normal form write them), the iPXE routes and the
 * TFTP server (a "<mac>/" component of a URL or file name, where iPXE
 * writes colons and some clients dashes). They share this parser, each
 * saying which separators it takes; the length is exact and nothing is
 * written until the whole text is good.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/mac.h"
#include "common/num.h"

#define MAC_TEXT_LEN 17 /* "xx:xx:xx:xx:xx:xx" */

int mac_parse(const char *s, size_t len, unsigned seps, uint8_t ret[6])
{
	uint8_t m[6];
	char sep;

	if (!s || len != MAC_TEXT_LEN)
		return -EINVAL;
	sep = s[2];
	if (!((sep == ':' && (seps & MAC_COLON)) || (sep == '-' && (seps & MAC_DASH))))
		return -EINVAL;
	for (size_t i = 0; i < 6; i++) {
		int hi = num_hex_digit(s[i * 3]), lo = num_hex_digit(s[i * 3 + 1]);
		if (hi < 0 || lo < 0 || (i < 5 && s[i * 3 + 2] != sep))
			return -EINVAL;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(ret, m, 6);
	return 0;
}
