/* metrics — registry and Prometheus text rendering. See metrics.h.
 *
 * Series live in a singly linked list guarded by reg_lock for insertion and
 * rendering; a series is never freed before metrics_reset(), so the pointers
 * handed out stay valid. Values are updated with relaxed atomics. A double
 * gauge is stored as its bit pattern in a uint64_t. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"

enum metric_type { M_COUNTER, M_GAUGE, M_HISTOGRAM };

struct metric {
	struct metric *next;
	enum metric_type type;
	char *name, *help, *labels;
	uint64_t value;    /* counter value, or gauge bits */
	size_t nbounds;
	double *bounds;
	uint64_t *buckets; /* nbounds + 1 (the last is +Inf) */
	uint64_t count;
	uint64_t sum_bits; /* double, updated with a CAS loop */
};

struct collector {
	struct collector *next;
	metrics_collector_fn fn;
	void *userdata;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct metric *reg_head, *reg_tail; /* guarded by reg_lock */
static struct collector *collectors;      /* guarded by reg_lock */

const double metrics_latency_buckets[] = { 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
					   0.0025,   0.005,   0.01,   0.025,   0.05,   0.1,
					   0.25,     0.5,     1,      2.5 };
const size_t metrics_latency_nbuckets = sizeof(metrics_latency_buckets) / sizeof(double);

static bool streq0(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void metric_free(struct metric *m)
{
	if (!m)
		return;
	free(m->name);
	free(m->help);
	free(m->labels);
	free(m->bounds);
	free(m->buckets);
	free(m);
}

static struct metric *metric_get(enum metric_type type, const char *name, const char *help,
				 const char *labels, const double *bounds, size_t nbounds)
{
	if (labels && !*labels)
		labels = NULL;
	pthread_mutex_lock(&reg_lock);
	struct metric *m;
	for (m = reg_head; m; m = m->next)
		if (m->type == type && strcmp(m->name, name) == 0 && streq0(m->labels, labels))
			goto out;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto out;
	m->type = type;
	m->name = strdup(name);
	m->help = strdup(help ? help : "");
	m->labels = labels ? strdup(labels) : NULL;
	if (type == M_HISTOGRAM) {
		m->nbounds = nbounds;
		m->bounds = calloc(nbounds ? nbounds : 1, sizeof(double));
		m->buckets = calloc(nbounds + 1, sizeof(uint64_t));
		if (m->bounds)
			memcpy(m->bounds, bounds, nbounds * sizeof(double));
	}
	if (!m->name || !m->help || (labels && !m->labels) ||
	    (type == M_HISTOGRAM && (!m->bounds || !m->buckets))) {
		metric_free(m);
		m = NULL;
		goto out;
	}
	if (reg_tail)
		reg_tail->next = m;
	else
		reg_head = m;
	reg_tail = m;
out:
	pthread_mutex_unlock(&reg_lock);
	return m;
}

struct metric *metrics_counter(const char *name, const char *help, const char *labels)
{
	return metric_get(M_COUNTER, name, help, labels, NULL, 0);
}

/* The per-thread cache of metrics_counter_cached(): a direct-mapped table
 * keyed by the name's address and the labels' text. reg_gen changes on
 * metrics_reset(), which makes every cached pointer stale. */
#define MCACHE_SIZE 64
#define MCACHE_LABELS 120
struct mcache_entry {
	const char *name;
	uint64_t gen;
	struct metric *m;
	char labels[MCACHE_LABELS];
};
static __thread struct mcache_entry mcache[MCACHE_SIZE];
static uint64_t reg_gen = 1; /* atomic */

struct metric *metrics_counter_cached(const char *name, const char *help, const char *labels)
{
	const char *l = labels ? labels : "";
	size_t n = strlen(l);
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)name;
	if (n >= MCACHE_LABELS)
		return metrics_counter(name, help, labels);
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)l[i]) * 1099511628211ull;
	struct mcache_entry *e = &mcache[(h ^ (h >> 32)) % MCACHE_SIZE];
	uint64_t gen = __atomic_load_n(&reg_gen, __ATOMIC_ACQUIRE);
	if (e->m && e->gen == gen && e->name == name && strcmp(e->labels, l) == 0)
		return e->m;
	struct metric *m = metrics_counter(name, help, labels);
	if (m) {
		e->name = name;
		e->gen = gen;
		e->m = m;
		memcpy(e->labels, l, n + 1);
	}
	return m;
}

struct metric *metrics_gauge(const char *name, const char *help, const char *labels)
{
	return metric_get(M_GAUGE, name, help, labels, NULL, 0);
}

struct metric *metrics_histogram(const char *name, const char *help, const char *labels,
				 const double *bounds, size_t nbounds)
{
	return metric_get(M_HISTOGRAM, name, help, labels, bounds, nbounds);
}

void metric_inc(struct metric *m, uint64_t n)
{
	if (m)
		__atomic_fetch_add(&m->value, n, __ATOMIC_RELAXED);
}

static uint64_t d2u(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

static double u2d(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

void metric_set(struct metric *m, double v)
{
	if (m)
		__atomic_store_n(&m->value, d2u(v), __ATOMIC_RELAXED);
}

void metric_observe(struct metric *m, double v)
{
	if (!m || m->type != M_HISTOGRAM)
		return;
	size_t i = 0;
	while (i < m->nbounds && v > m->bounds[i])
		i++;
	__atomic_fetch_add(&m->buckets[i], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&m->count, 1, __ATOMIC_RELAXED);
	uint64_t old = __atomic_load_n(&m->sum_bits, __ATOMIC_RELAXED), nw;
	do
		nw = d2u(u2d(old) + v);
	while (!__atomic_compare_exchange_n(&m->sum_bits, &old, nw, true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED));
}

int metrics_add_collector(metrics_collector_fn fn, void *userdata)
{
	struct collector *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fn = fn;
	c->userdata = userdata;
	pthread_mutex_lock(&reg_lock);
	c->next = collectors;
	collectors = c;
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

void metrics_remove_collector(metrics_collector_fn fn, void *userdata)
{
	pthread_mutex_lock(&reg_lock);
	for (struct collector **pp = &collectors; *pp; pp = &(*pp)->next)
		if ((*pp)->fn == fn && (*pp)->userdata == userdata) {
			struct collector *c = *pp;
			*pp = c->next;
			free(c);
			break;
		}
	pthread_mutex_unlock(&reg_lock);
}

static void put_series(struct buf *out, const char *name, const char *suffix, const char *labels,
		       const char *extra)
{
	buf_printf(out, "%s%s", name, suffix);
	if (labels || extra) {
		buf_putc(out, '{');
		if (labels)
			buf_puts(out, labels);
		if (labels && extra)
			buf_putc(out, ',');
		if (extra)
			buf_puts(out, extra);
		buf_putc(out, '}');
	}
	buf_putc(out, ' ');
}

static const char *const type_names[] = { "counter", "gauge", "histogram" };

int metrics_render(struct buf *out)
{
	pthread_mutex_lock(&reg_lock);
	for (struct metric *m = reg_head; m; m = m->next) {
		/* HELP and TYPE once per name: only for the first series of it. */
		bool first = true;
		for (struct metric *p = reg_head; p != m; p = p->next)
			if (strcmp(p->name, m->name) == 0) {
				first = false;
				break;
			}
		if (!first)
			continue;
		buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
			   type_names[m->type]);
		for (struct metric *s = m; s; s = s->next) {
			if (strcmp(s->name, m->name) != 0 || s->type != m->type)
				continue;
			uint64_t v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
			if (s->type == M_COUNTER) {
				put_series(out, s->name, "", s->labels, NULL);
				buf_printf(out, "%llu\n", (unsigned long long)v);
			} else if (s->type == M_GAUGE) {
				put_series(out, s->name, "", s->labels, NULL);
				buf_printf(out, "%.17g\n", u2d(v));
			} else {
				uint64_t cum = 0;
				char le[64];
				for (size_t i = 0; i <= s->nbounds; i++) {
					cum += __atomic_load_n(&s->buckets[i], __ATOMIC_RELAXED);
					if (i < s->nbounds)
						snprintf(le, sizeof(le), "le=\"%g\"", s->bounds[i]);
					else
						snprintf(le, sizeof(le), "le=\"+Inf\"");
					put_series(out, s->name, "_bucket", s->labels, le);
					buf_printf(out, "%llu\n", (unsigned long long)cum);
				}
				put_series(out, s->name, "_sum", s->labels, NULL);
				buf_printf(out, "%.9g\n",
					   u2d(__atomic_load_n(&s->sum_bits, __ATOMIC_RELAXED)));
				put_series(out, s->name, "_count", s->labels, NULL);
				buf_printf(out, "%llu\n", (unsigned long long)__atomic_load_n(
								  &s->count, __ATOMIC_RELAXED));
			}
		}
	}
	for (struct collector *c = collectors; c; c = c->next)
		c->fn(out, c->userdata);
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

void metrics_reset(void)
{
	pthread_mutex_lock(&reg_lock);
	__atomic_add_fetch(&reg_gen, 1, __ATOMIC_RELEASE);
	while (reg_head) {
		struct metric *m = reg_head;
		reg_head = m->next;
		metric_free(m);
	}
	reg_tail = NULL;
	while (collectors) {
		struct collector *c = collectors;
		collectors = c->next;
		free(c);
	}
	pthread_mutex_unlock(&reg_lock);
}
