/* lease — the decision core of leader election: a coordination.k8s.io/v1
 * Lease read from the API server in, what to do with it out. Pure: no
 * network, no clock of its own, no logging above debug; the elector
 * thread (leader.c) is the shell around it.
 *
 * DESIGN: the rules are client-go's tools/leaderelection with a LeaseLock.
 * - No Lease: create it, held by us (leaseTransitions 0).
 * - Held by us: renew it (renewTime now, acquireTime and leaseTransitions
 *   kept).
 * - Held by another: it is alive as long as its record (the spec) keeps
 *   changing. Expiry is measured from the time this instance first saw
 *   the record as it is, by its own monotonic clock, plus the record's
 *   leaseDurationSeconds — never from renewTime, which another host's
 *   clock wrote. Until then, wait; after, take it over (acquireTime now,
 *   leaseTransitions + 1). holderIdentity "" (a released Lease) is free
 *   at once.
 * - Every PUT carries the resourceVersion that was read: a 409 Conflict
 *   means another instance wrote in between, and the shell reads again.
 * - The holder stops leading when it has not renewed for renewDeadline,
 *   which is shorter than leaseDuration: it stops before the others may
 *   take over. On stop it releases the Lease as ReleaseOnCancel does
 *   (holderIdentity "", leaseDurationSeconds 1).
 * The Lease is untrusted input. An answer without a resourceVersion is
 * refused (nothing could be written safely after it). A malformed spec —
 * a field of the wrong type, a duration that is not positive or is longer
 * than an hour (which would let a garbage record hold the Lease for
 * years) — is treated as held by an unknown holder for this instance's
 * own lease duration: the same wait as for a live holder, so a writer we
 * do not understand is not trampled while it keeps writing, and a stale
 * record is taken over once it has stood still for a whole duration. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/common.h"
#include "kube/kube-internal.h"

#define NS_PER_S 1000000000ull

static void set_invalid(struct kube_lease *l, const char *why)
{
	if (!l->spec_valid)
		return; /* the first reason is kept */
	l->spec_valid = false;
	snprintf(l->invalid, sizeof(l->invalid), "%s", why);
}

/* A string field of the spec: absent or null leaves out empty. */
static void spec_string(struct kube_lease *l, json_t *spec, const char *key, char *out, size_t cap)
{
	json_t *v = json_object_get(spec, key);
	char why[128];
	if (!v || json_is_null(v))
		return;
	if (!json_is_string(v)) {
		snprintf(why, sizeof(why), "spec.%s is not a string", key);
		set_invalid(l, why);
		return;
	}
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n >= cap) {
		snprintf(why, sizeof(why), "spec.%s is longer than %zu bytes", key, cap - 1);
		set_invalid(l, why);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) {
			snprintf(why, sizeof(why), "spec.%s holds a control character", key);
			set_invalid(l, why);
			return;
		}
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

/* An integer field of the spec within [min, max]: absent or null leaves
 * *out 0. */
static void spec_int(struct kube_lease *l, json_t *spec, const char *key, int64_t min, int64_t max,
		     int64_t *out)
{
	json_t *v = json_object_get(spec, key);
	char why[128];
	if (!v || json_is_null(v))
		return;
	if (!json_is_integer(v)) {
		snprintf(why, sizeof(why), "spec.%s is not an integer", key);
		set_invalid(l, why);
		return;
	}
	json_int_t i = json_integer_value(v);
	if (i < min || i > max) {
		snprintf(why, sizeof(why), "spec.%s %lld is out of range %lld..%lld", key,
			 (long long)i, (long long)min, (long long)max);
		set_invalid(l, why);
		return;
	}
	*out = (int64_t)i;
}

static void parse_spec(struct kube_lease *l, json_t *spec)
{
	l->spec_valid = true;
	if (!spec || json_is_null(spec)) {
		set_invalid(l, "no spec");
		return;
	}
	if (!json_is_object(spec)) {
		set_invalid(l, "spec is not an object");
		return;
	}
	spec_string(l, spec, "holderIdentity", l->holder, sizeof(l->holder));
	spec_int(l, spec, "leaseDurationSeconds", 1, KUBE_LEASE_MAX_DURATION_S, &l->duration_s);
	spec_int(l, spec, "leaseTransitions", 0, INT32_MAX, &l->transitions);
	spec_string(l, spec, "acquireTime", l->acquire_time, sizeof(l->acquire_time));
	spec_string(l, spec, "renewTime", l->renew_time, sizeof(l->renew_time));
	/* A holder must say how long it holds the Lease. */
	if (l->spec_valid && *l->holder && !l->duration_s)
		set_invalid(l, "spec.leaseDurationSeconds is missing");
}

int kube_lease_parse(const char *data, size_t len, struct kube_lease *ret, char *err, size_t errlen)
{
	struct kube_lease l = { 0 };
	json_error_t jerr;
	int r = -EBADMSG;

	memset(ret, 0, sizeof(*ret));
	l.object = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!l.object) {
		snprintf(err, errlen, "Lease: not JSON: %s (line %d, column %d)", jerr.text,
			 jerr.line, jerr.column);
		goto out;
	}
	if (!json_is_object(l.object)) {
		snprintf(err, errlen, "Lease: not a JSON object");
		goto out;
	}
	json_t *kind = json_object_get(l.object, "kind");
	if (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "Lease"))) {
		snprintf(err, errlen, "Lease: the object is not a Lease");
		goto out;
	}
	json_t *meta = json_object_get(l.object, "metadata");
	json_t *rv = json_is_object(meta) ? json_object_get(meta, "resourceVersion") : NULL;
	if (!json_is_string(rv) || !json_string_length(rv) ||
	    json_string_length(rv) > KUBE_MAX_RV ||
	    strlen(json_string_value(rv)) != json_string_length(rv)) {
		snprintf(err, errlen,
			 "Lease: metadata.resourceVersion is missing or not a string of 1 to %d "
			 "characters",
			 KUBE_MAX_RV);
		goto out;
	}
	memcpy(l.rv, json_string_value(rv), json_string_length(rv) + 1);
	parse_spec(&l, json_object_get(l.object, "spec"));
	*ret = l;
	l.object = NULL;
	r = 0;
out:
	json_decref(l.object);
	return r;
}

void kube_lease_clear(struct kube_lease *l)
{
	if (!l)
		return;
	json_decref(l->object);
	memset(l, 0, sizeof(*l));
}

bool kube_lease_same_record(const struct kube_lease *a, const struct kube_lease *b)
{
	if (a->spec_valid != b->spec_valid)
		return false;
	if (!a->spec_valid)
		return !strcmp(a->invalid, b->invalid) && !strcmp(a->rv, b->rv);
	return !strcmp(a->holder, b->holder) && a->duration_s == b->duration_s &&
	       a->transitions == b->transitions && !strcmp(a->acquire_time, b->acquire_time) &&
	       !strcmp(a->renew_time, b->renew_time);
}

void kube_lease_decide(const struct kube_lease_cfg *cfg, const struct kube_lease *lease,
		       uint64_t observed_ns, uint64_t now_ns, struct kube_lease_decision *ret)
{
	*ret = (struct kube_lease_decision){ .action = KUBE_LEASE_CREATE };
	if (!lease)
		return;
	if (lease->spec_valid && !strcmp(lease->holder, cfg->identity)) {
		ret->action = KUBE_LEASE_RENEW;
		return;
	}
	if (lease->spec_valid && !*lease->holder) {
		ret->action = KUBE_LEASE_TAKE; /* released */
		return;
	}
	/* Held by another (or by a record we cannot read): alive until it has
	 * stood still for its duration, by our clock. */
	uint64_t dur_s = lease->spec_valid ? (uint64_t)lease->duration_s : cfg->lease_duration_s;
	uint64_t expiry = observed_ns + dur_s * NS_PER_S;
	if (now_ns >= expiry) {
		ret->action = KUBE_LEASE_TAKE;
		return;
	}
	uint64_t retry = (uint64_t)cfg->retry_period_s * NS_PER_S;
	ret->action = KUBE_LEASE_WAIT;
	ret->expires_ns = expiry - now_ns;
	ret->wait_ns = ret->expires_ns < retry ? ret->expires_ns : retry;
	ret->holder = lease->spec_valid ? lease->holder : "an unknown holder";
}

bool kube_lease_renew_overdue(const struct kube_lease_cfg *cfg, uint64_t last_renew_ns,
			      uint64_t now_ns)
{
	return now_ns >= last_renew_ns + (uint64_t)cfg->renew_deadline_s * NS_PER_S;
}

void kube_lease_time(uint64_t real_ns, char out[static KUBE_LEASE_TIME_LEN + 1])
{
	time_t t = (time_t)(real_ns / NS_PER_S);
	unsigned us = (unsigned)(real_ns % NS_PER_S / 1000);
	struct tm tm;
	char sec[20];
	if (!gmtime_r(&t, &tm) || tm.tm_year > 9999 - 1900) {
		tm = (struct tm){ .tm_year = 70, .tm_mday = 1 };
		us = 0;
	}
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, KUBE_LEASE_TIME_LEN + 1, "%s.%06uZ", sec, us);
}

/* The metadata written: the read object's (labels, annotations, uid and
 * resourceVersion kept, as client-go updates the object it got), or a new
 * one; name and namespace ours. NULL on allocation failure. */
static json_t *body_metadata(const char *ns, const char *name, const struct kube_lease *old)
{
	json_t *m = NULL;
	json_t *om = old ? json_object_get(old->object, "metadata") : NULL;
	if (json_is_object(om)) {
		m = json_deep_copy(om);
		/* Server-owned bookkeeping: not ours to send back. */
		if (m)
			json_object_del(m, "managedFields");
	} else {
		m = json_object();
	}
	if (!m)
		return NULL;
	if (json_object_set_new(m, "name", json_string(name)) ||
	    json_object_set_new(m, "namespace", json_string(ns)) ||
	    (old && json_object_set_new(m, "resourceVersion", json_string(old->rv)))) {
		json_decref(m);
		return NULL;
	}
	return m;
}

int kube_lease_body(const struct kube_lease_cfg *cfg, enum kube_lease_action action, const char *ns,
		    const char *name, const struct kube_lease *old, uint64_t now_real_ns,
		    struct buf *out)
{
	char now[KUBE_LEASE_TIME_LEN + 1];
	const char *holder = cfg->identity;
	const char *acquire = now;
	json_int_t duration = cfg->lease_duration_s;
	json_int_t transitions = 0;
	json_t *o = NULL, *meta = NULL;
	int r = -EINVAL;

	if (action == KUBE_LEASE_WAIT || action >= KUBE_LEASE_ACTION_MAX)
		goto out;
	if (action != KUBE_LEASE_CREATE && (!old || !old->object))
		goto out;
	kube_lease_time(now_real_ns, now);
	switch (action) {
	case KUBE_LEASE_CREATE: old = NULL; break;
	case KUBE_LEASE_TAKE: transitions = old->transitions + 1; break;
	case KUBE_LEASE_RENEW:
		transitions = old->transitions;
		if (*old->acquire_time)
			acquire = old->acquire_time;
		break;
	case KUBE_LEASE_RELEASE:
		transitions = old->transitions;
		holder = "";
		duration = 1;
		break;
	default: goto out;
	}
	r = -ENOMEM;
	meta = body_metadata(ns, name, old);
	if (!meta)
		goto out;
	o = json_pack("{s:s, s:s, s:o, s:{s:s, s:I, s:s, s:s, s:I}}", "apiVersion",
		      "coordination.k8s.io/v1", "kind", "Lease", "metadata", meta, "spec",
		      "holderIdentity", holder, "leaseDurationSeconds", duration, "acquireTime",
		      acquire, "renewTime", now, "leaseTransitions", transitions);
	meta = NULL; /* json_pack's "o" took it, even on failure */
	if (!o)
		goto out;
	if (json_dump_callback(o, buf_dump_cb, out, JSON_COMPACT | JSON_PRESERVE_ORDER)) {
		r = out->len >= out->max ? -E2BIG : -ENOMEM;
		goto out;
	}
	r = 0;
out:
	json_decref(meta);
	json_decref(o);
	return r;
}
