/* engine — not written yet: new() refuses. */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "bmc/provider.h"

static int engine_new(const struct bmc_settings *settings, void **ret, char *err, size_t errlen)
{
	(void)settings;
	*ret = NULL;
	snprintf(err, errlen, "the redfish engine is not built yet");
	return -ENOSYS;
}

const struct bmc_engine_ops bmc_redfish_ops = {
	.name = "redfish",
	.new = engine_new,
};
