/* num — overflow-checked number parsing. Every multiply is preceded by a
 * check that it cannot overflow (curl's strparse idea). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/num.h"

int num_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
	if (!s || len == 0)
		return -EINVAL;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int num_parse_u64_str(const char *s, uint64_t max, uint64_t *ret)
{
	return num_parse_u64(s, s ? strlen(s) : 0, max, ret);
}

int num_parse_i64(const char *s, size_t len, int64_t min, int64_t max, int64_t *ret)
{
	if (!s || len == 0)
		return -EINVAL;
	bool neg = s[0] == '-';
	uint64_t u;
	int r = num_parse_u64(s + neg, len - neg, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &u);
	if (r < 0)
		return r;
	int64_t v = neg ? (u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u) : (int64_t)u;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int num_parse_duration_ms(const char *s, size_t len, uint64_t max_ms, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 } };
	uint64_t mult = 1000;
	size_t n = len;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t sl = strlen(units[i].suffix);
		if (len > sl && memcmp(s + len - sl, units[i].suffix, sl) == 0 &&
		    (s[len - sl - 1] >= '0' && s[len - sl - 1] <= '9')) {
			mult = units[i].mult;
			n = len - sl;
			break;
		}
	}
	uint64_t v;
	int r = num_parse_u64(s, n, UINT64_MAX / mult, &v);
	if (r < 0)
		return r;
	if (v * mult > max_ms)
		return -ERANGE;
	*ret = v * mult;
	return 0;
}

int num_parse_mode(const char *s, size_t len, unsigned *ret)
{
	if (!s || len == 0 || len > 5)
		return -EINVAL;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '7')
			return -EINVAL;
		v = v * 8 + (unsigned)(s[i] - '0');
	}
	if (v > 07777)
		return -ERANGE;
	*ret = v;
	return 0;
}
