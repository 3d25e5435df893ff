/* core — the Kea hook's state: the reservation table, its lock, the
 * follower thread, and the answers (dhcp/kea/ironbell-kea.h).
 *
 * DESIGN: Kea's packet threads read the table under a read lock and copy
 * what they need out (a struct dhcp_host), so that the lock is held for a
 * hash probe only; dhcp_policy() then runs on the copy, with no lock, on
 * the same inputs ironbelld's server gives it (reservation mode, port 67,
 * no link check: Kea chose the subnet). The follower (follow-store.c,
 * follow-api.c) is the only writer: a batch of changes under the write
 * lock, or a whole table built aside and swapped in. Stopping is bounded:
 * the follower sleeps on a condition variable that ibkea_free() signals,
 * and polls the stop flag between reads.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dhcp/dhcp-internal.h"
#include "dhcp/kea/kea-internal.h"

#define IBKEA_LOG_LINE 1024 /* bytes of one log line */

/* ---- logging, sleeping, stopping ---- */

void ibkea_log(const struct ibkea *k, enum ibkea_log_level level, const char *fmt, ...)
{
	char line[IBKEA_LOG_LINE];
	va_list ap;

	if (!k || !k->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	k->log(level, line);
}

bool ibkea_stopping(const struct ibkea *k)
{
	return atomic_load(&k->stop_flag);
}

bool ibkea_sleep(struct ibkea *k, unsigned ms)
{
	struct timespec until;
	bool stop;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&k->stop_mu);
	/* Bounded: every wait ends at until, and a spurious wake-up only
	 * goes round again. */
	while (!k->stopping && pthread_cond_timedwait(&k->stop_cv, &k->stop_mu, &until) == 0)
		;
	stop = k->stopping;
	pthread_mutex_unlock(&k->stop_mu);
	return stop;
}

/* ---- the table ---- */

struct dhcp_hosts *ibkea_table_wrlock(struct ibkea *k)
{
	pthread_rwlock_wrlock(&k->lock);
	return k->hosts;
}

void ibkea_table_unlock(struct ibkea *k)
{
	atomic_fetch_add(&k->generation, 1);
	pthread_rwlock_unlock(&k->lock);
}

uint64_t ibkea_generation(const struct ibkea *k)
{
	return k ? (uint64_t)atomic_load(&k->generation) : 0;
}

void ibkea_relog(struct ibkea *k)
{
	if (k)
		atomic_store(&k->relog, true);
}

bool ibkea_relog_take(struct ibkea *k)
{
	return atomic_exchange(&k->relog, false);
}

void ibkea_table_replace(struct ibkea *k, struct dhcp_hosts *fresh)
{
	struct dhcp_hosts *old = NULL;

	pthread_rwlock_wrlock(&k->lock);
	atomic_fetch_add(&k->generation, 1);
	if (fresh) {
		old = k->hosts;
		k->hosts = fresh;
		atomic_store(&k->ready, true);
	} else {
		/* The table stays allocated, empty, so that a reader never
		 * finds it NULL. */
		dhcp_hosts_clear(k->hosts);
		atomic_store(&k->ready, false);
	}
	pthread_rwlock_unlock(&k->lock);
	dhcp_hosts_free(old);
}

/* ---- life ---- */

int ibkea_new(const struct ibkea_params *params, ibkea_log_fn log, struct ibkea **ret, char *err,
	      size_t errlen)
{
	struct ibkea *k = NULL;
	pthread_condattr_t ca;
	sigset_t all, old;
	void *(*fn)(void *);
	int e;

	if (!params || !ret || (unsigned)params->source >= IBKEA_SOURCE_MAX) {
		snprintf(err, errlen, "invalid arguments");
		return -EINVAL;
	}
	k = calloc(1, sizeof(*k));
	if (!k || !(k->hosts = dhcp_hosts_new())) {
		free(k);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	k->p = *params;
	k->log = log;
	pthread_rwlock_init(&k->lock, NULL);
	pthread_mutex_init(&k->stop_mu, NULL);
	pthread_mutex_init(&k->cfg_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->stop_cv, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&k->ready, false);
	atomic_init(&k->stop_flag, false);

	fn = params->source == IBKEA_SOURCE_API ? ibkea_follow_api : ibkea_follow_store;
	/* The follower takes no signal: they are Kea's to handle. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&k->thread, NULL, fn, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		snprintf(err, errlen, "starting the follower thread: %s", strerror(e));
		ibkea_free(k);
		return -e;
	}
	k->thread_started = true;
	*ret = k;
	return 0;
}

void ibkea_free(struct ibkea *k)
{
	if (!k)
		return;
	atomic_store(&k->stop_flag, true);
	pthread_mutex_lock(&k->stop_mu);
	k->stopping = true;
	pthread_cond_broadcast(&k->stop_cv);
	pthread_mutex_unlock(&k->stop_mu);
	if (k->thread_started)
		pthread_join(k->thread, NULL);
	dhcp_hosts_free(k->hosts);
	pthread_cond_destroy(&k->stop_cv);
	pthread_mutex_destroy(&k->stop_mu);
	pthread_mutex_destroy(&k->cfg_mu);
	pthread_rwlock_destroy(&k->lock);
	free(k);
}

bool ibkea_ready(const struct ibkea *k)
{
	return k && atomic_load(&k->ready);
}

size_t ibkea_count(const struct ibkea *k)
{
	struct ibkea *m = (struct ibkea *)k; /* the lock only */
	size_t n;

	if (!k)
		return 0;
	pthread_rwlock_rdlock(&m->lock);
	n = dhcp_hosts_count(m->hosts);
	pthread_rwlock_unlock(&m->lock);
	return n;
}

/* ---- lookups ---- */

/* Copies mac's entry out of the table: 0 or -ENOENT. */
static int lookup(struct ibkea *k, const uint8_t mac[6], struct dhcp_host *ret)
{
	int e;

	pthread_rwlock_rdlock(&k->lock);
	e = dhcp_hosts_lookup(k->hosts, mac, ret);
	pthread_rwlock_unlock(&k->lock);
	return e;
}

static void reservation_of(const struct dhcp_host *h, struct ibkea_reservation *ret)
{
	memcpy(ret->mac, h->mac, 6);
	ret->ip = h->ip;
	ret->netmask = h->netmask;
	snprintf(ret->hostname, sizeof(ret->hostname), "%s", h->hostname);
}

int ibkea_by_mac(struct ibkea *k, const uint8_t mac[6], struct ibkea_reservation *ret)
{
	struct dhcp_host h;

	if (!k || !mac || !ret || lookup(k, mac, &h) < 0 || h.disable_dhcp)
		return -ENOENT;
	reservation_of(&h, ret);
	return 0;
}

int ibkea_by_ip(struct ibkea *k, uint32_t ip, struct ibkea_reservation *ret)
{
	struct dhcp_host h;
	int e;

	if (!k || !ip || !ret)
		return -ENOENT;
	pthread_rwlock_rdlock(&k->lock);
	e = dhcp_hosts_lookup_ip(k->hosts, ip, &h);
	pthread_rwlock_unlock(&k->lock);
	if (e < 0 || h.disable_dhcp)
		return -ENOENT;
	reservation_of(&h, ret);
	return 0;
}

struct each_ctx {
	int (*fn)(const struct ibkea_reservation *r, void *arg);
	void *arg;
	size_t n;
};

static int each_one(const struct dhcp_host *h, void *arg)
{
	struct each_ctx *c = arg;
	struct ibkea_reservation r;

	if (!h->ip || h->disable_dhcp)
		return 0;
	reservation_of(h, &r);
	c->n++;
	return c->fn(&r, c->arg);
}

size_t ibkea_each(struct ibkea *k, int (*fn)(const struct ibkea_reservation *r, void *arg),
		  void *arg)
{
	struct each_ctx c = { .fn = fn, .arg = arg };

	if (!k || !fn)
		return 0;
	pthread_rwlock_rdlock(&k->lock);
	dhcp_hosts_each(k->hosts, each_one, &c);
	pthread_rwlock_unlock(&k->lock);
	return c.n;
}

uint32_t ibkea_lease_time(struct ibkea *k, const uint8_t mac[6], uint32_t ip)
{
	struct dhcp_host h;

	if (!k || !mac || lookup(k, mac, &h) < 0 || h.disable_dhcp || (h.ip && h.ip != ip))
		return 0;
	return h.lease_time;
}

/* ---- the answer ---- */

const char *ibkea_outcome_name(enum ibkea_outcome o)
{
	static const char *const names[IBKEA_OUTCOME_MAX] = {
		[IBKEA_NOT_OURS] = "not-ours",   [IBKEA_APPLIED] = "applied",
		[IBKEA_SILENT] = "silent",       [IBKEA_MISMATCH] = "mismatch",
		[IBKEA_NOT_READY] = "not-ready", [IBKEA_MALFORMED] = "malformed",
		[IBKEA_ERROR] = "error",
	};
	return (unsigned)o < IBKEA_OUTCOME_MAX ? names[o] : "unknown";
}

/* Options of ironbelld's answer that Kea's keeps: its own message type
 * and server identifier, the client's identifier and relay information it
 * echoes itself. */
static bool kea_keeps(uint8_t code, bool lease_set)
{
	switch (code) {
	case DHCP_OPT_MESSAGE_TYPE:
	case DHCP_OPT_SERVER_ID:
	case DHCP_OPT_CLIENT_ID:
	case DHCP_OPT_RELAY_AGENT: return true;
	case DHCP_OPT_LEASE_TIME:
	case DHCP_OPT_RENEWAL_TIME:
	case DHCP_OPT_REBINDING_TIME: return !lease_set;
	default: return false;
	}
}

/* The edits of an APPLIED answer: the boot fields, the options of
 * ironbelld's reply (pointers into ret->reply_), and the boot options it
 * does not send. */
static void answer_edits(const struct dhcp_host *h, struct ibkea_answer *ret)
{
	static const uint8_t boot_opts[] = { DHCP_OPT_VENDOR_SPECIFIC, DHCP_OPT_VENDOR_CLASS,
					     DHCP_OPT_TFTP_SERVER, DHCP_OPT_BOOTFILE };
	const struct dhcp_options *o = &ret->reply_.opts;

	ret->siaddr = ret->reply_.siaddr;
	memcpy(ret->sname, ret->reply_.sname, sizeof(ret->sname));
	memcpy(ret->file, ret->reply_.file, sizeof(ret->file));
	uint8_t codes[254];
	unsigned n = dhcp_bits_list(o->present, codes);
	for (unsigned i = 0; i < n && ret->nset < IBKEA_MAX_OPTIONS; i++) {
		uint8_t code = codes[i];
		if (kea_keeps(code, h->lease_time != 0))
			continue;
		ret->set[ret->nset++] = (struct ibkea_option){ .code = code,
							       .len = o->len[code],
							       .data = o->data + o->off[code] };
	}
	for (size_t i = 0; i < sizeof(boot_opts); i++)
		if (!dhcp_reply_has(&ret->reply_, boot_opts[i]))
			ret->del[ret->ndel++] = boot_opts[i];
}

/* The slot of server_id among the ready ones, or NULL. */
static const struct ibkea_cfg_slot *cfg_find(const struct ibkea *k, uint32_t server_id)
{
	for (size_t i = 0; i < IBKEA_CFG_SLOTS; i++) {
		const struct ibkea_cfg_slot *sl = &k->cfgs[i];
		if (!atomic_load_explicit(&sl->ready, memory_order_acquire))
			return NULL; /* slots are filled in order */
		if (sl->server_id == server_id)
			return sl;
	}
	return NULL;
}

/* The policy configuration for Kea's server identifier server_id: made
 * once per identifier (a URL formatted, a few KiB copied), not per
 * packet. Past IBKEA_CFG_SLOTS identifiers, made into *tmp each time.
 * NULL when it cannot be made (logged once per identifier kept). */
static const struct dhcp_policy_config *policy_cfg(struct ibkea *k, uint32_t server_id,
						   struct dhcp_policy_config *tmp)
{
	const struct ibkea_cfg_slot *found = cfg_find(k, server_id);
	struct ibkea_cfg_slot *sl = NULL;
	char err[256];
	int e;

	if (found)
		return found->error ? NULL : &found->cfg;
	pthread_mutex_lock(&k->cfg_mu);
	if ((found = cfg_find(k, server_id))) {
		pthread_mutex_unlock(&k->cfg_mu);
		return found->error ? NULL : &found->cfg;
	}
	for (size_t i = 0; i < IBKEA_CFG_SLOTS && !sl; i++)
		if (!atomic_load_explicit(&k->cfgs[i].ready, memory_order_relaxed))
			sl = &k->cfgs[i];
	if (!sl) {
		pthread_mutex_unlock(&k->cfg_mu);
		e = dhcp_settings_policy(&k->p.dhcp, server_id, tmp, err, sizeof(err));
		return e < 0 ? NULL : tmp;
	}
	sl->server_id = server_id;
	sl->error = dhcp_settings_policy(&k->p.dhcp, server_id, &sl->cfg, err, sizeof(err));
	if (sl->error)
		ibkea_log(k, IBKEA_LOG_ERROR, "policy configuration: %s", err);
	atomic_store_explicit(&sl->ready, true, memory_order_release);
	pthread_mutex_unlock(&k->cfg_mu);
	return sl->error ? NULL : &sl->cfg;
}

/* Runs the policy on host for ret->req_ and sets the outcome. */
static void answer_decide(struct ibkea *k, struct dhcp_host *host,
			  const struct ibkea_kea_reply *kea, struct ibkea_answer *ret)
{
	const struct dhcp_policy_config *cfg;
	struct dhcp_policy_config tmp;
	struct dhcp_decision d;
	int e;

	if (!(cfg = policy_cfg(k, kea->server_id, &tmp))) {
		ret->why = "no-configuration";
		return;
	}
	/* A Hardware interface that reserves no address: Kea's pool gave
	 * one, and ironbelld's decisions are taken as if it were reserved. */
	if (!host->ip)
		host->ip = kea->yiaddr;
	e = dhcp_policy(&ret->req_, 67, host, NULL, cfg, &ret->reply_, &d);
	ret->why = d.why;
	ret->boot = d.boot;
	if (e < 0) {
		ibkea_log(k, IBKEA_LOG_ERROR, "policy: %s", strerror(-e));
		return;
	}
	if (e == 0) {
		ret->outcome = IBKEA_SILENT;
	} else if (d.type != kea->type ||
		   ((d.type == DHCP_OFFER || d.type == DHCP_ACK) && d.yiaddr != kea->yiaddr)) {
		ret->outcome = IBKEA_MISMATCH;
	} else if (d.type != DHCP_OFFER && d.type != DHCP_ACK) {
		/* Both send a NAK: Kea's is left alone. */
		ret->outcome = IBKEA_NOT_OURS;
	} else {
		answer_edits(host, ret);
		ret->outcome = IBKEA_APPLIED;
	}
}

void ibkea_answer_request(struct ibkea *k, const uint8_t *query, size_t len,
			  const struct ibkea_kea_reply *kea, struct ibkea_answer *ret)
{
	struct dhcp_host host;
	enum dhcp_bad bad;
	int e;

	ret->outcome = IBKEA_ERROR;
	ret->boot = DHCP_BOOT_NONE;
	ret->why = "internal-error";
	memset(ret->mac, 0, sizeof(ret->mac));
	ret->siaddr = 0;
	memset(ret->sname, 0, sizeof(ret->sname));
	memset(ret->file, 0, sizeof(ret->file));
	ret->nset = ret->ndel = 0;
	if (!k || !kea || (!query && len))
		return;
	if (!query || dhcp_parse(query, len, &ret->req_, &bad) < 0) {
		ret->outcome = IBKEA_MALFORMED;
		ret->why = query ? dhcp_bad_reason_name(bad) : "empty";
		return;
	}
	if (ret->req_.op != DHCP_BOOTREQUEST || ret->req_.htype != 1 || ret->req_.hlen != 6) {
		ret->outcome = IBKEA_NOT_OURS;
		ret->why = ret->req_.op != DHCP_BOOTREQUEST ? "not-a-request" : "not-ethernet";
		return;
	}
	memcpy(ret->mac, ret->req_.chaddr, 6);
	if (!ibkea_ready(k)) {
		ret->outcome = IBKEA_NOT_READY;
		ret->why = "not-ready";
		return;
	}
	e = lookup(k, ret->mac, &host);
	if (e < 0 || host.disable_dhcp) {
		ret->outcome = IBKEA_NOT_OURS;
		ret->why = e < 0 ? "unknown-mac" : "dhcp-disabled";
		return;
	}
	answer_decide(k, &host, kea, ret);
}
