/* metrics — a process-wide registry of counters, gauges and histograms,
 * rendered in the Prometheus text exposition format (version 0.0.4).
 *
 * Registration (metrics_counter(), ...) takes a lock and returns a stable
 * pointer; updating (metric_inc(), metric_observe()) is lock-free, with
 * relaxed atomics, so hot paths keep the pointer and never look it up again.
 * A (name, labels) pair is registered once; asking again returns the same
 * series. Labels are given pre-rendered: `path="/healthz",code="200"`. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

struct metric;

/* Returns the counter series name{labels}, creating it. labels may be NULL.
 * Returns NULL only on allocation failure (updates to NULL are ignored). */
struct metric *metrics_counter(const char *name, const char *help, const char *labels);
/* The same, remembered per thread (keyed by the address of name and the
 * text of labels), so that a hot path whose labels vary pays a hash and no
 * lock: name must be a string that outlives the process (a literal). */
struct metric *metrics_counter_cached(const char *name, const char *help, const char *labels);
/* A gauge that holds a value set with metric_set(). */
struct metric *metrics_gauge(const char *name, const char *help, const char *labels);
/* A histogram with the given upper bounds (ascending, +Inf is implicit). */
struct metric *metrics_histogram(const char *name, const char *help, const char *labels,
				 const double *bounds, size_t nbounds);

void metric_inc(struct metric *m, uint64_t n);
void metric_set(struct metric *m, double v);
void metric_observe(struct metric *m, double v);

/* A function called at render time to add lines of its own (for values that
 * are read, not counted: objects per kind, build info). It appends complete
 * exposition lines, HELP and TYPE included, to out. */
typedef void (*metrics_collector_fn)(struct buf *out, void *userdata);
int metrics_add_collector(metrics_collector_fn fn, void *userdata);
void metrics_remove_collector(metrics_collector_fn fn, void *userdata);

/* Renders every series, grouped by name, then the collectors. */
int metrics_render(struct buf *out);

/* Drops every series and collector (tests). */
void metrics_reset(void);

/* Buckets for latencies in seconds, 25 µs .. 2.5 s. */
extern const double metrics_latency_buckets[];
extern const size_t metrics_latency_nbuckets;
