/* machine — the Machine controller: each Machine's power state polled,
 * its Contactable condition, and its desired power state kept.
 *
 * DESIGN: every Machine in the store has an entry here (a hash table by
 * namespace and name) with its spec.connection, its desired-power
 * annotation, what its status says now, and a timer: its next power poll,
 * BMC_FIRST_POLL_MS after it appears or its connection changes, then every
 * poll_interval_s, give or take a tenth drawn anew each time
 * (bmc_poll_delay_ms()): Machines created together, as a thousand are by
 * one apply, would otherwise all be polled in the same instant of every
 * interval; the draws spread them over it within a few polls. Rufio opens a new client per reconcile; here the engines
 * keep their sessions, so a poll is one round trip.
 *
 * The providers are tried in Rufio's order (bmc_conn_resolve): the
 * preferredOrder first ("ipmitool" is the IPMI engine, "gofish" or
 * "redfish" the Redfish one; the others are not supported here and are
 * skipped), then the rest of the default order, ipmitool before Redfish,
 * except that a Machine with Redfish options and none for ipmitool tries
 * Redfish first. The engine that answered last goes first next time.
 *
 * Status is written (STORE_OP_STATUS_PATCH) only when powerState or the
 * Contactable condition's status or message changed, so a steady Machine
 * costs no write and no resourceVersion; lastUpdateTime moves when the
 * condition does. Its own writes come back through the subscription as
 * changes whose connection and annotations are those already known: they
 * only refresh the cached status and never cause a poll, so there is no
 * loop. Transitions are events of the Machine: ContactLost,
 * ContactRestored, PowerChanged.
 *
 * Desired power: the annotation bmc.ironbell.dev/desired-power (on|off).
 * When a poll finds the power otherwise and the Machine has no Job waiting
 * or running and no Task running, the controller sets it (PowerRestored,
 * or a Warning PowerRestoreFailed), at most once per poll interval, and
 * polls again verify_interval_ms later. Job ends ask for a poll at once,
 * so the state is restored right after each Job. Any other value is a
 * Warning DesiredPowerInvalid, once per value, and is ignored. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bmc/bmc-internal.h"
#include "common/common.h"
#include "store/store.h"

#define DESIRED_MAX 16

struct bmc_machine {
	struct bmc_machine *next;
	char ns[BMC_NS_MAX], name[BMC_OBJ_NAME_MAX];
	struct bmc_timer timer;
	json_t *conn;              /* spec.connection, owned */
	char desired[DESIRED_MAX]; /* the annotation; "" none; "?" too long */
	char warned[DESIRED_MAX];  /* the invalid value warned about */
	/* the status as stored */
	char power[8];
	int contact; /* -1: no condition; 0 False; 1 True */
	char message[BMC_COND_MAX];
	char since[21];         /* its lastUpdateTime */
	int engine;             /* the engine that answered last, -1 */
	uint64_t restore_after; /* no restore before */
	uint32_t rng;           /* bmc_poll_delay_ms()'s state */
	unsigned inflight;      /* calls whose callback is to come */
	bool polling, restoring, gone, marked;
};

uint64_t bmc_poll_delay_ms(unsigned interval_s, uint32_t *state)
{
	uint64_t base = (uint64_t)interval_s * 1000u;
	uint32_t x = *state ? *state : 0x9e3779b9u;

	/* xorshift32: cheap, and good enough to scatter timers */
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	/* base * (0.9 .. 1.1), in whole milliseconds */
	return base - base / 10u + (uint64_t)x % (base / 5u + 1u);
}

static uint64_t next_poll(struct bmc_server *s, struct bmc_machine *m)
{
	return bmc_now_ms() + bmc_poll_delay_ms(s->set.poll_interval_s, &m->rng);
}

/* ---- the table ---- */

static size_t bucket_of(const char *ns, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *p = ns; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h = (h ^ '/') * 1099511628211ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return (size_t)(h % BMC_MACHINE_BUCKETS);
}

struct bmc_machine *bmc_machine_find(struct bmc_server *s, const char *ns, const char *name)
{
	if (!ns || !name)
		return NULL;
	for (struct bmc_machine *m = s->mbucket[bucket_of(ns, name)]; m; m = m->next)
		if (strcmp(m->ns, ns) == 0 && strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

static void machine_free(struct bmc_machine *m)
{
	json_decref(m->conn);
	free(m);
}

/* Takes m out of the table; frees it now or when its last call ends. */
static void machine_remove(struct bmc_server *s, struct bmc_machine *m)
{
	struct bmc_machine **pp = &s->mbucket[bucket_of(m->ns, m->name)];
	while (*pp && *pp != m)
		pp = &(*pp)->next;
	if (*pp)
		*pp = m->next;
	s->nmachines--;
	bmc_timer_cancel(s, &m->timer);
	m->gone = true;
	if (!m->inflight)
		machine_free(m);
}

/* A call of m's ended: false when m is gone (and maybe freed). */
static bool call_ended(struct bmc_server *s, struct bmc_machine *m)
{
	m->inflight--;
	if (m->gone) {
		if (!m->inflight)
			machine_free(m);
		return false;
	}
	return !s->stopping;
}

bool bmc_machine_idle(struct bmc_server *s, const struct bmc_machine *m)
{
	return !bmc_jobs_for_machine(s, m->ns, m->name) &&
	       !bmc_tasks_for_machine(s, m->ns, m->name);
}

int bmc_machine_engine(const struct bmc_machine *m)
{
	return m->engine;
}

void bmc_machine_poll_soon(struct bmc_server *s, struct bmc_machine *m)
{
	uint64_t at = bmc_now_ms() + BMC_FIRST_POLL_MS;
	m->restore_after = 0; /* something changed: the desired state may act at once */
	if (!m->timer.node.idx || m->timer.node.at > at)
		bmc_timer_set(s, &m->timer, at);
}

/* ---- connections ---- */

static int engine_named(const struct bmc_server *s, const char *name)
{
	for (size_t i = 0; i < s->neng; i++)
		if (strcasecmp(s->eng[i].ops->name, name) == 0)
			return (int)i;
	return -1;
}

/* The engine of a preferredOrder entry, or -1: "gofish" is bmclib's
 * Redfish provider. */
static int engine_of_provider(const struct bmc_server *s, const char *p)
{
	if (strcasecmp(p, "gofish") == 0)
		p = "redfish";
	return engine_named(s, p);
}

static void add_engine(struct bmc_server *s, struct bmc_conn *c, int ei, bool asked)
{
	if (ei < 0)
		return;
	for (size_t i = 0; i < c->norder; i++)
		if (c->order[i] == ei)
			return;
	if (!s->eng[ei].e) {
		size_t n = strlen(c->unavailable);
		if (asked && !strstr(c->unavailable, s->eng[ei].ops->name))
			snprintf(c->unavailable + n, sizeof(c->unavailable) - n,
				 "%sprovider %s unavailable: %s", n ? "; " : "",
				 s->eng[ei].ops->name, s->eng[ei].why);
		return;
	}
	if (c->norder < BMC_MAX_ENGINES)
		c->order[c->norder++] = ei;
}

static uint16_t port_of(const json_t *o)
{
	json_int_t p = json_integer_value(json_object_get(o, "port"));
	return p > 0 && p <= 65535 ? (uint16_t)p : 0;
}

static int resolve_options(struct bmc_server *s, const json_t *conn, struct bmc_conn *c, char *err,
			   size_t errlen)
{
	const json_t *po = json_object_get(conn, "providerOptions");
	const json_t *ipmi = json_object_get(po, "ipmitool");
	const json_t *rf = json_object_get(po, "redfish");
	const json_t *pref = json_object_get(po, "preferredOrder"), *v;
	int ii = engine_named(s, "ipmitool"), ri = engine_named(s, "redfish");
	uint16_t port = port_of(conn);
	size_t i;

	json_array_foreach (pref, i, v)
		if (json_string_value(v))
			add_engine(s, c, engine_of_provider(s, json_string_value(v)), true);
	if (rf && !ipmi) {
		add_engine(s, c, ri, true);
		add_engine(s, c, ii, false);
	} else {
		add_engine(s, c, ii, ipmi != NULL);
		add_engine(s, c, ri, rf != NULL);
	}
	if (!c->norder) {
		for (size_t e = 0; e < s->neng; e++)
			add_engine(s, c, (int)e, true);
		snprintf(err, errlen, "%s",
			 c->unavailable[0] ? c->unavailable : "no BMC provider is available");
		return -ENODEV;
	}
	/* IPMI: ipmitool.port, else connection.port (623 by default).
	 * Redfish: redfish.port, else connection.port unless it is IPMI's
	 * 623, else the engine's default (443). */
	if (ii >= 0)
		c->ports[ii] = port_of(ipmi) ? port_of(ipmi) : port;
	if (ri >= 0)
		c->ports[ri] = port_of(rf) ? port_of(rf) : port != 623 ? port : 0;
	const char *cs = json_string_value(json_object_get(ipmi, "cipherSuite"));
	json_t *csj = json_object_get(ipmi, "cipherSuite");
	if (cs && *cs) {
		uint64_t n;
		if (num_parse_u64_str(cs, 255, &n) < 0) {
			snprintf(err, errlen,
				 "providerOptions.ipmitool.cipherSuite \"%.32s\" is not a number",
				 cs);
			return -EINVAL;
		}
		c->ep.cipher_suite = (unsigned)n;
	} else if (json_is_integer(csj) && json_integer_value(csj) > 0 &&
		   json_integer_value(csj) <= 255) {
		c->ep.cipher_suite = (unsigned)json_integer_value(csj);
	}
	c->ep.insecure_tls = json_is_true(json_object_get(conn, "insecureTLS"));
	c->ep.basic_auth = json_is_true(json_object_get(rf, "useBasicAuth"));
	const char *sys = json_string_value(json_object_get(rf, "systemName"));
	if (sys && !bmc_copy(c->ep.system_name, sizeof(c->ep.system_name), sys)) {
		snprintf(err, errlen, "providerOptions.redfish.systemName is too long");
		return -EINVAL;
	}
	return 0;
}

int bmc_conn_resolve(struct bmc_server *s, const json_t *conn, const char *ns, struct bmc_conn *ret,
		     char *err, size_t errlen)
{
	struct bmc_conn *c = ret;
	const char *host = json_string_value(json_object_get(conn, "host"));
	int e;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(conn) || !host || !*host) {
		snprintf(err, errlen, "spec.connection.host is missing");
		return -EINVAL;
	}
	if (!bmc_copy(c->ep.host, sizeof(c->ep.host), host)) {
		snprintf(err, errlen, "spec.connection.host is too long");
		return -EINVAL;
	}
	e = resolve_options(s, conn, c, err, errlen);
	if (e < 0)
		return e;
	const json_t *ref = json_object_get(conn, "authSecretRef");
	const char *sname = json_string_value(json_object_get(ref, "name"));
	const char *sns = json_string_value(json_object_get(ref, "namespace"));
	if (!sname || !*sname)
		return 0; /* no credentials: IPMI's anonymous user */
	if (!sns || !*sns)
		sns = ns;
	e = bmc_creds_read(s->reader, sns, sname, &c->ep, err, errlen);
	if (e < 0)
		explicit_bzero(c, sizeof(*c));
	return e;
}

/* ---- status and events ---- */

static const char *power_name(enum bmc_power p)
{
	return p == BMC_POWER_ON ? "on" : p == BMC_POWER_OFF ? "off" : "unknown";
}

static void event(struct bmc_server *s, const struct bmc_machine *m, const char *type,
		  const char *reason, const char *msg)
{
	store_event(s->store, STORE_KIND_MACHINE, m->ns, m->name, type, reason, "%s", msg);
}

static void set_status(struct bmc_server *s, struct bmc_machine *m, const char *power, bool contact,
		       const char *message)
{
	char now[21], ev[BMC_COND_MAX + 64];
	bool cond_changed = m->contact != (int)contact || strcmp(m->message, message) != 0;

	if (!cond_changed && strcmp(m->power, power) == 0)
		return;
	if (cond_changed || !m->since[0])
		bmc_time_now(now);
	else
		memcpy(now, m->since, sizeof(now));
	json_t *cond = json_pack("{s:s,s:s,s:s}", "type", "Contactable", "status",
				 contact ? "True" : "False", "lastUpdateTime", now);
	if (cond && message[0])
		json_object_set_new(cond, "message", json_string(message));
	json_t *st =
		cond ? json_pack("{s:s,s:[o]}", "powerState", power, "conditions", cond) : NULL;
	if (!st || bmc_status_patch_later(s, m->ns, m->name, st) < 0)
		return; /* the next poll tries again */
	if (!contact && m->contact != 0) {
		snprintf(ev, sizeof(ev), "cannot reach the BMC: %s", message);
		event(s, m, "Warning", "ContactLost", ev);
	} else if (contact && m->contact == 0) {
		event(s, m, "Normal", "ContactRestored", "the BMC answers again");
	}
	if ((!strcmp(m->power, "on") || !strcmp(m->power, "off")) &&
	    (!strcmp(power, "on") || !strcmp(power, "off")) && strcmp(m->power, power)) {
		snprintf(ev, sizeof(ev), "power is %s (was %s)", power, m->power);
		event(s, m, "Normal", "PowerChanged", ev);
	}
	bmc_copy(m->power, sizeof(m->power), power);
	m->contact = contact;
	bmc_copy(m->message, sizeof(m->message), message);
	memcpy(m->since, now, sizeof(now));
}

/* What the stored object's status says, so that nothing is written again. */
static void read_status(struct bmc_machine *m, const json_t *obj)
{
	const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions"), *c;
	const char *p = bmc_jstr(obj, "status.powerState");
	size_t i;

	bmc_copy(m->power, sizeof(m->power), p);
	m->contact = -1;
	m->message[0] = m->since[0] = 0;
	json_array_foreach (conds, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *st = json_string_value(json_object_get(c, "status"));
		if (!t || strcmp(t, "Contactable") || !st)
			continue;
		m->contact = strcmp(st, "True") == 0 ? 1 : strcmp(st, "False") == 0 ? 0 : -1;
		bmc_copy(m->message, sizeof(m->message),
			 json_string_value(json_object_get(c, "message")) ?: "");
		bmc_copy(m->since, sizeof(m->since),
			 json_string_value(json_object_get(c, "lastUpdateTime")) ?: "");
	}
}

/* ---- desired power ---- */

static void on_restore(struct bmc_server *s, const struct bmc_reply *r, int engine, const char *why,
		       void *obj)
{
	struct bmc_machine *m = obj;
	char ev[BMC_COND_MAX + 128];

	m->restoring = false;
	if (!call_ended(s, m))
		return;
	if (r->fail == BMC_FAIL_NONE) {
		m->engine = engine;
		snprintf(ev, sizeof(ev), "power set %s, as annotation %s asks", m->desired,
			 BMC_DESIRED_ANNOTATION);
		event(s, m, "Normal", "PowerRestored", ev);
	} else {
		snprintf(ev, sizeof(ev), "cannot set power %s, as annotation %s asks: %s",
			 m->desired, BMC_DESIRED_ANNOTATION, why);
		event(s, m, "Warning", "PowerRestoreFailed", ev);
	}
	bmc_timer_set(s, &m->timer, bmc_now_ms() + s->set.verify_interval_ms);
}

static void desired_check(struct bmc_server *s, struct bmc_machine *m, enum bmc_power now_p)
{
	char err[BMC_COND_MAX], ev[256];
	struct bmc_conn c;
	enum bmc_power want;

	if (!m->desired[0])
		return;
	if (strcmp(m->desired, "on") && strcmp(m->desired, "off")) {
		if (strcmp(m->warned, m->desired)) {
			snprintf(ev, sizeof(ev),
				 "annotation %s: \"%s\" is neither on nor off: ignored",
				 BMC_DESIRED_ANNOTATION, m->desired);
			event(s, m, "Warning", "DesiredPowerInvalid", ev);
			bmc_copy(m->warned, sizeof(m->warned), m->desired);
		}
		return;
	}
	want = strcmp(m->desired, "on") == 0 ? BMC_POWER_ON : BMC_POWER_OFF;
	if (now_p == BMC_POWER_UNKNOWN || now_p == want || m->restoring ||
	    bmc_now_ms() < m->restore_after || !bmc_machine_idle(s, m))
		return;
	if (bmc_conn_resolve(s, m->conn, m->ns, &c, err, sizeof(err)) < 0)
		return;
	struct bmc_call call = { .cmd = BMC_CMD_POWER_SET,
				 .action = want == BMC_POWER_ON ? BMC_ACT_ON : BMC_ACT_OFF };
	if (bmc_req_start(s, &c, m->engine, &call, on_restore, m, err, sizeof(err)) == 0) {
		m->inflight++;
		m->restoring = true;
		m->restore_after = bmc_now_ms() + (uint64_t)s->set.poll_interval_s * 1000u;
	}
	explicit_bzero(&c, sizeof(c));
}

/* ---- polls ---- */

static void on_poll(struct bmc_server *s, const struct bmc_reply *r, int engine, const char *why,
		    void *obj)
{
	struct bmc_machine *m = obj;

	m->polling = false;
	if (!call_ended(s, m))
		return;
	if (r->fail == BMC_FAIL_NONE) {
		m->engine = engine;
		set_status(s, m, power_name(r->power), true, "");
		desired_check(s, m, r->power);
	} else {
		set_status(s, m, "unknown", false, why);
	}
	if (!m->timer.node.idx)
		bmc_timer_set(s, &m->timer, next_poll(s, m));
}

static void poll_fire(struct bmc_server *s, struct bmc_timer *t)
{
	struct bmc_machine *m =
		(struct bmc_machine *)((char *)t - offsetof(struct bmc_machine, timer));
	char err[BMC_COND_MAX];
	struct bmc_conn c;
	uint64_t next = next_poll(s, m);

	if (m->polling)
		return; /* on_poll arms the next */
	int e = bmc_conn_resolve(s, m->conn, m->ns, &c, err, sizeof(err));
	if (e < 0) {
		set_status(s, m, "unknown", false, err);
		bmc_timer_set(s, &m->timer, next);
		return;
	}
	struct bmc_call call = { .cmd = BMC_CMD_POWER_GET };
	e = bmc_req_start(s, &c, m->engine, &call, on_poll, m, err, sizeof(err));
	explicit_bzero(&c, sizeof(c));
	if (e == -EAGAIN) {
		bmc_timer_set(s, &m->timer, bmc_now_ms() + BMC_RETRY_BUSY_MS);
	} else if (e < 0) {
		set_status(s, m, "unknown", false, err);
		bmc_timer_set(s, &m->timer, next);
	} else {
		m->inflight++;
		m->polling = true;
	}
}

/* ---- changes ---- */

static void read_desired(struct bmc_machine *m, const json_t *obj)
{
	const char *d = json_string_value(
		json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"),
				BMC_DESIRED_ANNOTATION));
	if (!d)
		d = "";
	if (!bmc_copy(m->desired, sizeof(m->desired), d))
		bmc_copy(m->desired, sizeof(m->desired), "(too long)");
}

void bmc_machine_changed(struct bmc_server *s, bool deleted, const json_t *obj)
{
	const char *ns = bmc_jstr(obj, "metadata.namespace");
	const char *name = bmc_jstr(obj, "metadata.name");
	const json_t *conn = json_object_get(json_object_get(obj, "spec"), "connection");
	struct bmc_machine *m = bmc_machine_find(s, ns, name);
	char old_desired[DESIRED_MAX];

	if (!ns || !name)
		return;
	if (deleted) {
		if (m)
			machine_remove(s, m);
		return;
	}
	if (!m) {
		if (s->nmachines >= BMC_MAX_MACHINES) {
			log_warn("bmc", "machine %s/%s: more than %d Machines: not followed", ns,
				 name, BMC_MAX_MACHINES);
			return;
		}
		m = calloc(1, sizeof(*m));
		if (!m || !bmc_copy(m->ns, sizeof(m->ns), ns) ||
		    !bmc_copy(m->name, sizeof(m->name), name)) {
			free(m);
			return;
		}
		m->engine = -1;
		m->timer.fire = poll_fire;
		size_t b = bucket_of(ns, name);
		m->rng = (uint32_t)b ^ (uint32_t)bmc_now_ms();
		m->next = s->mbucket[b];
		s->mbucket[b] = m;
		s->nmachines++;
		/* What its status says, so that nothing is written again; later
		 * this thread's cache is the truth (a change may be older than
		 * its last write). */
		read_status(m, obj);
		bmc_jobs_admit(s);
	}
	m->marked = false;
	memcpy(old_desired, m->desired, sizeof(old_desired));
	read_desired(m, obj);
	if (!m->conn || !json_equal(m->conn, conn) || strcmp(old_desired, m->desired)) {
		if (!m->conn || !json_equal(m->conn, conn))
			m->engine = -1; /* another BMC, maybe another provider */
		json_decref(m->conn);
		m->conn = json_deep_copy(conn);
		bmc_machine_poll_soon(s, m);
	}
}

void bmc_machine_status_lost(struct bmc_server *s, const char *ns, const char *name)
{
	struct bmc_machine *m = bmc_machine_find(s, ns, name);
	if (m) {
		m->power[0] = 0;
		m->contact = -1;
		m->message[0] = 0;
	}
}

void bmc_machine_secret_changed(struct bmc_server *s, const char *ns, const char *name)
{
	if (!ns || !name)
		return;
	for (size_t b = 0; b < BMC_MACHINE_BUCKETS; b++)
		for (struct bmc_machine *m = s->mbucket[b]; m; m = m->next) {
			const json_t *ref = json_object_get(m->conn, "authSecretRef");
			const char *sn = json_string_value(json_object_get(ref, "name"));
			const char *sns = json_string_value(json_object_get(ref, "namespace"));
			if (!sns || !*sns)
				sns = m->ns;
			if (sn && strcmp(sn, name) == 0 && strcmp(sns, ns) == 0)
				bmc_machine_poll_soon(s, m);
		}
}

void bmc_machines_mark(struct bmc_server *s)
{
	for (size_t b = 0; b < BMC_MACHINE_BUCKETS; b++)
		for (struct bmc_machine *m = s->mbucket[b]; m; m = m->next)
			m->marked = true;
}

void bmc_machines_sweep(struct bmc_server *s)
{
	for (size_t b = 0; b < BMC_MACHINE_BUCKETS; b++) {
		struct bmc_machine *m = s->mbucket[b], *next;
		for (; m; m = next) {
			next = m->next;
			if (m->marked)
				machine_remove(s, m);
		}
	}
}

void bmc_machines_free(struct bmc_server *s)
{
	for (size_t b = 0; b < BMC_MACHINE_BUCKETS; b++) {
		struct bmc_machine *m = s->mbucket[b], *next;
		for (; m; m = next) {
			next = m->next;
			bmc_timer_cancel(s, &m->timer);
			machine_free(m);
		}
		s->mbucket[b] = NULL;
	}
	s->nmachines = 0;
}
