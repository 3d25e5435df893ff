/* bootmark — the closed loop's annotations (bootmark.h).
 *
 * DESIGN: a Hardware marked BOOTMARK_AWAIT waits for one observation;
 * whoever sees the machine boot writes BOOTMARK_OBSERVED with a merge
 * patch, which touches only that annotation, so that it needs neither the
 * whole object nor its resourceVersion: the DHCP server has neither, only
 * its in-memory reservation. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/bootmark.h"

bool bootmark_awaiting(const json_t *hw)
{
	const json_t *ann = json_object_get(json_object_get(hw, "metadata"), "annotations");
	const char *mark = json_string_value(json_object_get(ann, BOOTMARK_AWAIT));
	return mark && *mark && !json_object_get(ann, BOOTMARK_OBSERVED);
}

json_t *bootmark_patch(const char *kind, const char *via, int64_t now_ms)
{
	char t[32], v[96];
	struct tm tm;
	time_t secs = (time_t)(now_ms / 1000);
	if (!gmtime_r(&secs, &tm) || strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return NULL;
	int n = snprintf(v, sizeof(v), "%s %s %s", kind, t, via);
	if (n < 0 || (size_t)n >= sizeof(v))
		return NULL;
	return json_pack("{s:{s:{s:s}}}", "metadata", "annotations", BOOTMARK_OBSERVED, v);
}
