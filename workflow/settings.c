/* settings — the defaults of struct wf_settings (workflow/workflow.h). */
#include "config.h"

#include "workflow/workflow.h"

void wf_settings_default(struct wf_settings *s)
{
	if (!s->resync_s)
		s->resync_s = 60;
	if (!s->default_action_timeout_s)
		s->default_action_timeout_s = 3600;
	if (!s->action_grace_s)
		s->action_grace_s = 30;
	if (!s->retry_base_s)
		s->retry_base_s = 5;
	if (!s->retry_max_s)
		s->retry_max_s = 300;
}
