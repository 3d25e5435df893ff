/* docker — placeholder until the Docker Engine runtime lands. */
#include "config.h"

#include <stdio.h>

#include "agent/agent-internal.h"

enum agent_outcome agent_docker_run(const struct agent_settings *s, const struct agent_action *a,
				    const struct agent_hooks *h, char *why, size_t whycap)
{
	snprintf(why, whycap, "the docker runtime is not built in");
	return AGENT_OUT_FAILED;
}
