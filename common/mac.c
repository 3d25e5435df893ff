/* mac — MAC addresses as text.
 *
 * DESIGN: three parts read a MAC from text: the DHCP server (a Hardware's
 * interfaces, the leases on disk: always "aa:bb:..", as the store's
 * validation and its normal form write them), the iPXE routes and the
 * TFTP server (a "<mac>/" component of a URL or file name, where iPXE
 * writes colons and some clients dashes), and the store, which indexes a
 * Hardware's MACs in a normal form and also takes 20-byte InfiniBand
 * hardware addresses. They share this parser, each saying which
 * separators it takes and mac_parse_hw() which lengths; the length is
 * exact and nothing is written until the whole text is good.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/mac.h"
#include "common/num.h"

#define MAC_LEN 6 /* bytes of an Ethernet MAC */

/* The text of n bytes: n pairs of hex digits and n - 1 separators. */
#define MAC_TEXT_LEN(n) ((n) * 3 - 1)

/* Parses exactly len bytes of s as n pairs of hex digits joined by one
 * separator of seps, the same throughout. 0 and the n bytes in ret, or
 * -EINVAL; ret is written only on success. */
static int mac_parse_n(const char *s, size_t len, unsigned seps, size_t n, uint8_t *ret)
{
	uint8_t m[MAC_MAX_LEN];
	char sep;

	if (!s || n > MAC_MAX_LEN || len != MAC_TEXT_LEN(n))
		return -EINVAL;
	sep = s[2];
	if (!((sep == ':' && (seps & MAC_COLON)) || (sep == '-' && (seps & MAC_DASH))))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int hi = num_hex_digit(s[i * 3]), lo = num_hex_digit(s[i * 3 + 1]);
		if (hi < 0 || lo < 0 || (i + 1 < n && s[i * 3 + 2] != sep))
			return -EINVAL;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(ret, m, n);
	return 0;
}

int mac_parse(const char *s, size_t len, unsigned seps, uint8_t ret[6])
{
	return mac_parse_n(s, len, seps, MAC_LEN, ret);
}

int mac_parse_hw(const char *s, size_t len, unsigned seps, uint8_t ret[MAC_MAX_LEN])
{
	size_t n = len == MAC_TEXT_LEN(MAC_MAX_LEN) ? MAC_MAX_LEN : MAC_LEN;
	int r = mac_parse_n(s, len, seps, n, ret);
	return r < 0 ? r : (int)n;
}

void mac_format(const uint8_t mac[6], char out[MAC_STR_SIZE])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 6; i++) {
		out[3 * i] = hex[mac[i] >> 4];
		out[3 * i + 1] = hex[mac[i] & 15];
		out[3 * i + 2] = i < 5 ? ':' : '\0';
	}
}
