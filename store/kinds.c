/* kinds — the table of object kinds the store keeps, and the names people
 * and objects use for them.
 *
 * DESIGN: one static table, indexed by enum store_kind. A user may type a
 * kind the way kubectl accepts it: the kind ("Hardware"), its plural, its
 * singular or a short name, in any case, optionally qualified by the
 * group or by version.group ("machines.bmc.tinkerbell.org",
 * "machine.bmc", "hw.v1alpha1.tinkerbell.org"); a partial group matches
 * when it is a whole-label prefix of the real one. Objects name their
 * kind exactly (apiVersion + kind, case-sensitive), as the API server
 * requires.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "store/store.h"

static const struct store_kind_info kinds[STORE_KIND_MAX] = {
	[STORE_KIND_HARDWARE] = { "Hardware",
				  "tinkerbell.org",
				  "v1alpha1",
				  "tinkerbell.org/v1alpha1",
				  "hardware",
				  "hardware",
				  { "hw", NULL } },
	[STORE_KIND_TEMPLATE] = { "Template",
				  "tinkerbell.org",
				  "v1alpha1",
				  "tinkerbell.org/v1alpha1",
				  "templates",
				  "template",
				  { "tpl", NULL } },
	[STORE_KIND_WORKFLOW] = { "Workflow",
				  "tinkerbell.org",
				  "v1alpha1",
				  "tinkerbell.org/v1alpha1",
				  "workflows",
				  "workflow",
				  { "wf", NULL } },
	[STORE_KIND_MACHINE] = { "Machine",
				 "bmc.tinkerbell.org",
				 "v1alpha1",
				 "bmc.tinkerbell.org/v1alpha1",
				 "machines",
				 "machine",
				 { NULL } },
	[STORE_KIND_JOB] = { "Job",
			     "bmc.tinkerbell.org",
			     "v1alpha1",
			     "bmc.tinkerbell.org/v1alpha1",
			     "jobs",
			     "job",
			     { "j", NULL } },
	[STORE_KIND_TASK] = { "Task",
			      "bmc.tinkerbell.org",
			      "v1alpha1",
			      "bmc.tinkerbell.org/v1alpha1",
			      "tasks",
			      "task",
			      { "t", NULL } },
	[STORE_KIND_SECRET] = { "Secret", "", "v1", "v1", "secrets", "secret", { NULL } },
};

const struct store_kind_info *store_kind_info(enum store_kind k)
{
	if ((unsigned)k >= STORE_KIND_MAX)
		return NULL;
	return &kinds[k];
}

/* Whether s (length n) names kind info by kind, plural, singular or short
 * name, ignoring case. */
static bool name_matches(const struct store_kind_info *ki, const char *s, size_t n)
{
	const char *names[3 + 3] = { ki->kind, ki->plural, ki->singular };
	size_t nn = 3;
	for (size_t i = 0; i < 3 && ki->short_names[i]; i++)
		names[nn++] = ki->short_names[i];
	for (size_t i = 0; i < nn; i++)
		if (strlen(names[i]) == n && strncasecmp(names[i], s, n) == 0)
			return true;
	return false;
}

/* Whether q is the group, or a prefix of it made of whole labels
 * ("bmc" for "bmc.tinkerbell.org"). The core group has no name. */
static bool group_matches(const char *group, const char *q)
{
	size_t gl = strlen(group), ql = strlen(q);
	if (gl == 0 || ql == 0 || ql > gl)
		return false;
	if (strncasecmp(group, q, ql) != 0)
		return false;
	return ql == gl || group[ql] == '.';
}

static bool qualifier_matches(const struct store_kind_info *ki, const char *q)
{
	if (group_matches(ki->group, q))
		return true;
	/* version.group */
	size_t vl = strlen(ki->version);
	return strncasecmp(q, ki->version, vl) == 0 && q[vl] == '.' &&
	       group_matches(ki->group, q + vl + 1);
}

int store_kind_parse(const char *s, enum store_kind *ret)
{
	if (!s || !*s)
		return -ENOENT;
	const char *dot = strchr(s, '.');
	size_t n = dot ? (size_t)(dot - s) : strlen(s);
	for (int k = 0; k < STORE_KIND_MAX; k++) {
		if (!name_matches(&kinds[k], s, n))
			continue;
		if (dot && !qualifier_matches(&kinds[k], dot + 1))
			continue;
		*ret = (enum store_kind)k;
		return 0;
	}
	return -ENOENT;
}

int store_kind_from_object(const char *api_version, const char *kind, enum store_kind *ret)
{
	if (!api_version || !kind)
		return -ENOENT;
	for (int k = 0; k < STORE_KIND_MAX; k++) {
		if (strcmp(kinds[k].api_version, api_version) == 0 &&
		    strcmp(kinds[k].kind, kind) == 0) {
			*ret = (enum store_kind)k;
			return 0;
		}
	}
	return -ENOENT;
}
