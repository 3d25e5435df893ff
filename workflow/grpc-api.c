/* grpc-api — the worker API: GetAction and ReportActionStatus over a
 * cache of the Workflows, on the gRPC thread.
 *
 * DESIGN: the thread keeps every Workflow in memory (filled with
 * store_each(), kept current by following store_changes_each() on a
 * subscription to the Workflow kind, which decodes only the changes newer
 * than the copy held: our own writes are held from when they commit),
 * indexed by name ("<ns>/<name>", the
 * workflow_id on the wire) and by agent (status.agentID and each task's
 * agentID). A call never reads the database: GetAction picks the agent's
 * active Workflow (wf_engine_pick), runs wf_engine_get_action on a copy
 * and, when the status changed, writes it with store_write_async() with
 * the cached resourceVersion as precondition; the answer leaves once the
 * write has committed, so a kill -9 loses nothing an agent was told. A
 * conflict (the controller wrote meanwhile) reads the Workflow again and
 * runs the call again, WF_API_MAX_ATTEMPTS times at most. ReportActionStatus
 * does the same with wf_engine_report. The decisions are the engine's:
 * this file only finds the Workflow, copies, writes and answers.
 *
 * Long poll: a GetAction that finds nothing to do (NOT_FOUND, or
 * FAILED_PRECONDITION: not yet) is parked on its agent until a change to
 * one of that agent's Workflows (from the store or from our own write),
 * long_poll_s, or the client's deadline less WF_API_DEADLINE_MARGIN_MS,
 * whichever comes first; then it runs again, and at its end answers what
 * it found. tink-agent retries after such an answer; a parked call saves
 * it the round trips without making it wait for work that is there. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/common.h"
#include "common/grpc.h"
#include "common/jsondec.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/tink.pb-c.h"
#include "store/store.h"
#include "workflow/engine.h"
#include "workflow/grpc-internal.h"

#define WF_API_MAX_ATTEMPTS 4          /* runs of one call when its write conflicts */
#define WF_API_DEADLINE_MARGIN_MS 500  /* a long poll answers this long before the deadline */
#define WF_API_CHANGES_BATCH 512       /* changes read at once */
#define WF_API_CHANGES_ROUNDS 64       /* batches per wakeup */
#define WF_API_MAX_WRITES 4096         /* writes in flight */
#define WF_API_MAX_AGENTS_PER_WF 64    /* agent IDs one Workflow is indexed under */

/* ---- a string-keyed hash table ---- */

struct hent {
	struct hent *next;
	char *key;
	void *val;
};

struct htab {
	struct hent **b;
	size_t nb, n;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static struct hent **hfind(struct htab *t, const char *key)
{
	if (!t->nb)
		return NULL;
	struct hent **p = &t->b[hash(key) & (t->nb - 1)];
	for (; *p; p = &(*p)->next)
		if (strcmp((*p)->key, key) == 0)
			return p;
	return p;
}

static void *hget(struct htab *t, const char *key)
{
	struct hent **p = hfind(t, key);
	return p && *p ? (*p)->val : NULL;
}

static int hgrow(struct htab *t)
{
	size_t nb = t->nb ? t->nb * 2 : 64;
	struct hent **b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < t->nb; i++) {
		while (t->b[i]) {
			struct hent *e = t->b[i];
			t->b[i] = e->next;
			e->next = b[hash(e->key) & (nb - 1)];
			b[hash(e->key) & (nb - 1)] = e;
		}
	}
	free(t->b);
	t->b = b;
	t->nb = nb;
	return 0;
}

/* Adds key (copied) -> val; the key must not be there. */
static int hput(struct htab *t, const char *key, void *val)
{
	if (t->n >= t->nb && hgrow(t) < 0)
		return -ENOMEM;
	struct hent *e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(key))) {
		free(e);
		return -ENOMEM;
	}
	struct hent **p = &t->b[hash(key) & (t->nb - 1)];
	e->val = val;
	e->next = *p;
	*p = e;
	t->n++;
	return 0;
}

static void hdel(struct htab *t, const char *key)
{
	struct hent **p = hfind(t, key);
	if (!p || !*p)
		return;
	struct hent *e = *p;
	*p = e->next;
	free(e->key);
	free(e);
	t->n--;
}

static void hfree(struct htab *t)
{
	for (size_t i = 0; i < t->nb; i++) {
		while (t->b[i]) {
			struct hent *e = t->b[i];
			t->b[i] = e->next;
			free(e->key);
			free(e);
		}
	}
	free(t->b);
	*t = (struct htab){ 0 };
}

/* ---- the cache ---- */

struct pcall;

struct wf_entry {
	char key[WF_ID_MAX]; /* "<ns>/<name>" */
	char ns[WF_ID_MAX], name[WF_ID_MAX];
	json_t *obj;
	uint64_t rv;
	char *agents[WF_API_MAX_AGENTS_PER_WF];
	size_t n_agents;
	bool seen; /* relist: still in the store */
};

struct agent {
	struct wf_entry **wfs;
	size_t n, alloc;
	struct pcall *parked; /* long polls, linked by park_next */
};

/* A call being worked on: parked, or waiting for its write. */
struct pcall {
	struct wf_grpc_api *a;
	struct wf_h2_call *call; /* NULL once the client has gone */
	enum wf_grpc_method method;
	ProtobufCMessage *req;
	char agent_id[WF_ID_MAX];
	int attempts;
	bool parked_ever, writing;
	/* parked */
	struct pcall *park_next, **park_pprev;
	uint64_t park_until;
	int last_code;
	char last_msg[256];
	/* the write in flight */
	struct store_op op;
	json_t *copy;
	char rv[24];
	struct wf_handout h;
	bool have_h;
	struct pcall *retry_next;
	bool on_retry; /* on a->retry: run() frees it if its client went */
};

struct wf_grpc_api {
	struct store *store;
	const struct wf_grpc_settings *set;
	struct wf_settings engine_set; /* the engine's part of *set */
	struct store_reader *rd;
	struct store_subscription *sub;
	struct store_completion *cq;
	struct htab wfs;    /* key -> struct wf_entry */
	struct htab agents; /* agent ID -> struct agent */
	uint64_t rv;        /* changes followed up to here */
	bool loaded;
	size_t parked;
	uint64_t next_at;
	struct pcall *retry; /* woken long polls, to run again */
	struct metric *m_latency;
};

static void wake_agent(struct wf_grpc_api *a, const char *agent_id);

static struct agent *agent_get(struct wf_grpc_api *a, const char *id, bool create)
{
	struct agent *ag = hget(&a->agents, id);
	if (ag || !create)
		return ag;
	if (!(ag = calloc(1, sizeof(*ag))))
		return NULL;
	if (hput(&a->agents, id, ag) < 0) {
		free(ag);
		return NULL;
	}
	return ag;
}

static void agent_unindex(struct wf_grpc_api *a, struct wf_entry *w)
{
	for (size_t i = 0; i < w->n_agents; i++) {
		struct agent *ag = agent_get(a, w->agents[i], false);
		for (size_t j = 0; ag && j < ag->n; j++) {
			if (ag->wfs[j] == w) {
				ag->wfs[j] = ag->wfs[--ag->n];
				break;
			}
		}
		if (ag && !ag->n && !ag->parked) {
			free(ag->wfs);
			free(ag);
			hdel(&a->agents, w->agents[i]);
		}
		wake_agent(a, w->agents[i]);
		free(w->agents[i]);
	}
	w->n_agents = 0;
}

/* Adds id to ids[*n] unless it is empty, there already, or ids is full. */
static void push_id(const char *ids[WF_API_MAX_AGENTS_PER_WF], size_t *n, const char *id)
{
	if (!id || !*id || *n >= WF_API_MAX_AGENTS_PER_WF)
		return;
	for (size_t j = 0; j < *n; j++)
		if (strcmp(ids[j], id) == 0)
			return;
	ids[(*n)++] = id;
}

/* The agent IDs Workflow obj is indexed under, into ids (borrowed from
 * obj): status.agentID, then each task's agentID. Returns how many. */
static size_t agents_of(const json_t *obj, const char *ids[WF_API_MAX_AGENTS_PER_WF])
{
	const json_t *status = json_object_get(obj, "status"), *t;
	size_t n = 0, i;
	push_id(ids, &n, json_string_value(json_object_get(status, "agentID")));
	json_array_foreach (json_object_get(status, "tasks"), i, t)
		push_id(ids, &n, json_string_value(json_object_get(t, "agentID")));
	return n;
}

static void agent_index(struct wf_grpc_api *a, struct wf_entry *w)
{
	const char *ids[WF_API_MAX_AGENTS_PER_WF];
	size_t n = agents_of(w->obj, ids);
	for (size_t i = 0; i < n; i++) {
		char *d = strdup(ids[i]);
		if (d)
			w->agents[w->n_agents++] = d;
	}
	for (size_t i = 0; i < w->n_agents; i++) {
		struct agent *ag = agent_get(a, w->agents[i], true);
		if (!ag)
			continue;
		if (ag->n == ag->alloc) {
			size_t na = ag->alloc ? ag->alloc * 2 : 4;
			struct wf_entry **v = realloc(ag->wfs, na * sizeof(*v));
			if (!v)
				continue;
			ag->wfs = v;
			ag->alloc = na;
		}
		ag->wfs[ag->n++] = w;
		wake_agent(a, w->agents[i]);
	}
}

/* Whether obj names the agents w is indexed under, in the same order
 * (agent_index() would index it the same way). */
static bool same_agents(const struct wf_entry *w, const json_t *obj)
{
	const char *ids[WF_API_MAX_AGENTS_PER_WF];
	size_t n = agents_of(obj, ids);
	if (n != w->n_agents)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], w->agents[i]) != 0)
			return false;
	return true;
}

static void entry_remove(struct wf_grpc_api *a, struct wf_entry *w)
{
	agent_unindex(a, w);
	hdel(&a->wfs, w->key);
	json_decref(w->obj);
	free(w);
}

/* The Workflow obj (a new reference, taken) at resourceVersion rv: added,
 * or replacing an older copy; the agents it concerns woken. */
static void upsert(struct wf_grpc_api *a, json_t *obj, uint64_t rv)
{
	const json_t *md = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));
	char key[WF_ID_MAX];
	if (!name || (size_t)snprintf(key, sizeof(key), "%s/%s", ns ? ns : "default", name) >=
			     sizeof(key)) {
		json_decref(obj);
		return;
	}
	struct wf_entry *w = hget(&a->wfs, key);
	if (w && w->rv >= rv) {
		w->seen = true;
		json_decref(obj);
		return;
	}
	if (!w) {
		if (!(w = calloc(1, sizeof(*w))) || hput(&a->wfs, key, w) < 0) {
			free(w);
			json_decref(obj);
			return;
		}
		snprintf(w->key, sizeof(w->key), "%s", key);
		snprintf(w->ns, sizeof(w->ns), "%s", ns ? ns : "default");
		snprintf(w->name, sizeof(w->name), "%s", name);
	} else if (same_agents(w, obj)) {
		/* the usual write (a report): same agents, only woken */
		json_decref(w->obj);
		w->obj = obj;
		w->rv = rv;
		w->seen = true;
		for (size_t i = 0; i < w->n_agents; i++)
			wake_agent(a, w->agents[i]);
		return;
	} else {
		agent_unindex(a, w);
		json_decref(w->obj);
	}
	w->obj = obj;
	w->rv = rv;
	w->seen = true;
	agent_index(a, w);
}

static uint64_t obj_rv(const json_t *obj)
{
	const char *s = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	uint64_t v = 0;
	for (; s && *s >= '0' && *s <= '9' && v < UINT64_MAX / 10; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

static int each_fn(const char *text, size_t len, void *ud)
{
	json_t *o = jsondec_loadb(text, len, 0, NULL);
	if (o)
		upsert(ud, o, obj_rv(o));
	return 0;
}

/* (Re)reads every Workflow; those gone from the store leave the cache. */
static int relist(struct wf_grpc_api *a)
{
	for (size_t i = 0; i < a->wfs.nb; i++)
		for (struct hent *e = a->wfs.b[i]; e; e = e->next)
			((struct wf_entry *)e->val)->seen = false;
	int e = store_each(a->rd, STORE_KIND_WORKFLOW, each_fn, a, &a->rv);
	if (e < 0)
		return e;
	for (size_t i = 0; i < a->wfs.nb; i++) {
		struct hent *h = a->wfs.b[i];
		while (h) {
			struct wf_entry *w = h->val;
			h = h->next;
			if (!w->seen)
				entry_remove(a, w);
		}
	}
	a->loaded = true;
	return 0;
}

/* One change of a Workflow, undecoded: one already held at its
 * resourceVersion or newer (our own write, upserted when it committed)
 * costs no decoding. */
static int change_fn(const struct store_change *c, void *ud)
{
	struct wf_grpc_api *a = ud;
	char key[WF_ID_MAX];
	if ((size_t)snprintf(key, sizeof(key), "%s/%s", *c->namespace_ ? c->namespace_ : "default",
			     c->name) >= sizeof(key))
		return 0;
	struct wf_entry *w = hget(&a->wfs, key);
	if (strcmp(c->type, "DELETED") == 0) {
		if (w)
			entry_remove(a, w);
		return 0;
	}
	if (w && w->rv >= c->rv)
		return 0;
	/* the writer's tree when the store still holds it: shared, and
	 * never changed here (every call works on a copy of the status) */
	json_t *o = store_change_object(c);
	if (!o) {
		const char *text;
		size_t len;
		o = store_change_text(c, &text, &len) == 0 ? jsondec_loadb(text, len, 0, NULL) : NULL;
	}
	if (o)
		upsert(a, o, obj_rv(o));
	return 0;
}

static void follow_changes(struct wf_grpc_api *a)
{
	for (int round = 0; round < WF_API_CHANGES_ROUNDS; round++) {
		uint64_t last = a->rv;
		size_t n = 0;
		int e = store_changes_each(a->rd, a->rv, STORE_KIND_WORKFLOW, NULL,
					   WF_API_CHANGES_BATCH, change_fn, a, &n, &last);
		if (e == -ETIME) {
			log_info("grpc", "change log moved past the cache: reading every Workflow");
			relist(a);
			return;
		}
		if (e < 0) {
			log_warn("grpc", "store changes: %s", strerror(-e));
			return;
		}
		a->rv = last;
		if (n < WF_API_CHANGES_BATCH)
			return;
	}
}

/* ---- answers ---- */

static void pcall_free(struct pcall *pc)
{
	if (pc->req)
		protobuf_c_message_free_unpacked(pc->req, NULL);
	store_op_clear(&pc->op);
	json_decref(pc->copy);
	if (pc->have_h)
		wf_handout_clear(&pc->h);
	free(pc);
}

static void unpark(struct pcall *pc)
{
	if (!pc->park_pprev)
		return;
	*pc->park_pprev = pc->park_next;
	if (pc->park_next)
		pc->park_next->park_pprev = pc->park_pprev;
	pc->park_next = NULL;
	pc->park_pprev = NULL;
	pc->a->parked--;
}

/* Answers pc (if its client is still there) and frees it. */
static void finish(struct pcall *pc, int code, const char *msg, const uint8_t *resp, size_t len)
{
	struct wf_h2_call *call = pc->call;
	unpark(pc);
	if (call) {
		call->app = NULL;
		if (pc->method == WF_GRPC_GET_ACTION && code == GRPC_OK && !pc->parked_ever)
			metric_observe(pc->a->m_latency,
				       (double)(now_mono_ns() - call->start_ns) / 1e9);
		if (code == GRPC_OK)
			wf_h2_reply(call, resp, len);
		else
			wf_h2_fail(call, code, msg);
	}
	pcall_free(pc);
}

static char **strv_of(const json_t *arr, size_t *ret_n)
{
	size_t n = json_array_size(arr), i;
	json_t *v;
	char **out = n ? calloc(n, sizeof(*out)) : NULL;
	*ret_n = 0;
	if (!out)
		return NULL;
	json_array_foreach (arr, i, v)
		out[i] = (char *)(json_string_value(v) ?: "");
	*ret_n = n;
	return out;
}

static void answer_handout(struct pcall *pc)
{
	const struct wf_handout *h = &pc->h;
	Proto__ActionResponse r = PROTO__ACTION_RESPONSE__INIT;
	Proto__Namespaces ns = PROTO__NAMESPACES__INIT;
	r.workflow_id = (char *)h->workflow_id;
	r.task_id = (char *)(h->task_id ?: "");
	r.agent_id = (char *)(h->agent_id ?: "");
	r.action_id = (char *)(h->action_id ?: "");
	r.name = (char *)(h->name ?: "");
	r.image = (char *)(h->image ?: "");
	r.timeout = h->timeout_s;
	r.command = strv_of(h->command, &r.n_command);
	r.volumes = strv_of(h->volumes, &r.n_volumes);
	r.environment = strv_of(h->environment, &r.n_environment);
	r.pid = (char *)(h->pid ?: "");
	ns.network = (char *)(h->ns_network ?: "");
	ns.pid = (char *)(h->ns_pid ?: "");
	r.namespaces = &ns;
	size_t len = protobuf_c_message_get_packed_size(&r.base);
	uint8_t *out = malloc(len ? len : 1);
	if (out)
		protobuf_c_message_pack(&r.base, out);
	if (out)
		finish(pc, GRPC_OK, NULL, out, len);
	else
		finish(pc, GRPC_INTERNAL, "out of memory", NULL, 0);
	free(out);
	free(r.command);
	free(r.volumes);
	free(r.environment);
}

static void random_fill(void *buf, size_t n, void *ud)
{
	if (getrandom(buf, n, 0) != (ssize_t)n)
		memset(buf, 0x5a, n); /* never: getrandom of a few bytes does not fail */
}

static struct wf_clock clock_now(const struct wf_grpc_api *a)
{
	return (struct wf_clock){ .now_ms = (int64_t)(now_real_ns() / 1000000u),
				  .random = random_fill,
				  .settings = &a->engine_set };
}

/* Writes pc->copy's status with the cached rv as precondition. */
static void write_status(struct pcall *pc, const struct wf_entry *w)
{
	snprintf(pc->rv, sizeof(pc->rv), "%" PRIu64, w->rv);
	store_op_clear(&pc->op);
	pc->op = (struct store_op){ .type = STORE_OP_STATUS,
				    .source = STORE_SOURCE_DAEMON,
				    .kind = STORE_KIND_WORKFLOW,
				    .namespace_ = w->ns,
				    .name = w->name,
				    .body = pc->copy,
				    .resource_version = pc->rv,
				    .take_body = true };
	int e = store_write_async(pc->a->store, &pc->op, 1, true, pc->a->cq, (uint64_t)(uintptr_t)pc);
	if (e < 0) {
		finish(pc, GRPC_UNAVAILABLE, e == -EAGAIN ? "too many writes in flight" :
							    "the store is closing",
		       NULL, 0);
		return;
	}
	pc->writing = true;
}

static void park(struct pcall *pc, int code, const char *msg);


/* GetAction: one run over the cache. */
static void run_get_action(struct pcall *pc)
{
	struct wf_grpc_api *a = pc->a;
	struct agent *ag = agent_get(a, pc->agent_id, false);
	char msg[256] = "no workflow for this agent";
	int code = GRPC_NOT_FOUND, idx = -ENOENT;
	json_t *stack[64], **objs = stack;
	size_t n = ag ? ag->n : 0;
	if (n > ARRAY_SIZE(stack) && !(objs = calloc(n, sizeof(*objs)))) {
		finish(pc, GRPC_INTERNAL, "out of memory", NULL, 0);
		return;
	}
	for (size_t i = 0; i < n; i++)
		objs[i] = ag->wfs[i]->obj;
	if (n)
		idx = wf_engine_pick(objs, n, pc->agent_id);
	if (objs != stack)
		free(objs);
	if (idx >= 0) {
		struct wf_entry *w = ag->wfs[idx];
		struct wf_clock clk = clock_now(a);
		bool changed = false;
		json_decref(pc->copy);
		if (pc->have_h)
			wf_handout_clear(&pc->h);
		pc->have_h = false;
		/* the engine replaces .status, never changes it in place:
		 * a new top level is copy enough */
		if (!(pc->copy = json_copy(w->obj))) {
			finish(pc, GRPC_INTERNAL, "out of memory", NULL, 0);
			return;
		}
		memset(&pc->h, 0, sizeof(pc->h));
		code = wf_engine_get_action(pc->copy, pc->agent_id, &clk, &pc->h, &changed, msg,
					    sizeof(msg));
		pc->have_h = code == GRPC_OK;
		if (code == GRPC_OK && changed) {
			write_status(pc, w);
			return;
		}
		if (code == GRPC_OK) {
			answer_handout(pc);
			return;
		}
	}
	if (code == GRPC_NOT_FOUND || code == GRPC_FAILED_PRECONDITION)
		park(pc, code, msg);
	else
		finish(pc, code, msg, NULL, 0);
}

static int64_t ts_ms(const Google__Protobuf__Timestamp *t)
{
	return t ? (int64_t)t->seconds * 1000 + t->nanos / 1000000 : 0;
}

/* ReportActionStatus: one run over the cache. */
static void run_report(struct pcall *pc)
{
	struct wf_grpc_api *a = pc->a;
	Proto__ActionStatusRequest *q = (Proto__ActionStatusRequest *)pc->req;
	struct wf_entry *w = hget(&a->wfs, q->workflow_id);
	char msg[256] = "";
	bool changed = false;
	if (!w) {
		finish(pc, GRPC_NOT_FOUND, "no such workflow", NULL, 0);
		return;
	}
	struct wf_report r = {
		.workflow_id = q->workflow_id, .agent_id = q->agent_id, .task_id = q->task_id,
		.action_id = q->action_id, .action_name = q->action_name,
		.state = (int)q->action_state, .start_ms = ts_ms(q->execution_start),
		.stop_ms = ts_ms(q->execution_stop), .duration = q->execution_duration,
		.message = q->message && q->message->message ? q->message->message : "",
	};
	struct wf_clock clk = clock_now(a);
	json_decref(pc->copy);
	/* wf_engine_report works on its own copy of .status and, when it
	 * changed, sets that copy as the status: the cached object is never
	 * changed through a top-level copy */
	if (!(pc->copy = json_copy(w->obj))) {
		finish(pc, GRPC_INTERNAL, "out of memory", NULL, 0);
		return;
	}
	int code = wf_engine_report(pc->copy, &r, &clk, &changed, msg, sizeof(msg));
	if (code != GRPC_OK)
		finish(pc, code, msg, NULL, 0);
	else if (changed)
		write_status(pc, w);
	else
		finish(pc, GRPC_OK, NULL, (const uint8_t *)"", 0);
}

static void run(struct pcall *pc)
{
	if (!pc->call) {
		pcall_free(pc);
		return;
	}
	if (pc->method == WF_GRPC_GET_ACTION)
		run_get_action(pc);
	else
		run_report(pc);
}

/* ---- long polls ---- */

static void park(struct pcall *pc, int code, const char *msg)
{
	struct wf_grpc_api *a = pc->a;
	uint64_t now = now_mono_ns() / 1000000u;
	struct agent *ag;
	if (!pc->parked_ever) {
		pc->parked_ever = true;
		pc->park_until = now + (uint64_t)a->set->long_poll_s * 1000u;
		uint64_t dl = pc->call->deadline_ms;
		if (dl && (dl <= now + WF_API_DEADLINE_MARGIN_MS ||
			   dl - WF_API_DEADLINE_MARGIN_MS < pc->park_until))
			pc->park_until = dl > now + WF_API_DEADLINE_MARGIN_MS ?
						 dl - WF_API_DEADLINE_MARGIN_MS :
						 now;
	}
	if (now >= pc->park_until || !(ag = agent_get(a, pc->agent_id, true))) {
		finish(pc, code, msg, NULL, 0);
		return;
	}
	pc->last_code = code;
	snprintf(pc->last_msg, sizeof(pc->last_msg), "%s", msg);
	pc->park_next = ag->parked;
	if (ag->parked)
		ag->parked->park_pprev = &pc->park_next;
	ag->parked = pc;
	pc->park_pprev = &ag->parked;
	a->parked++;
	if (!a->next_at || pc->park_until < a->next_at)
		a->next_at = pc->park_until;
}

/* The agent's long polls run again (after the change being handled). */
static void wake_agent(struct wf_grpc_api *a, const char *agent_id)
{
	struct agent *ag = agent_get(a, agent_id, false);
	while (ag && ag->parked) {
		struct pcall *pc = ag->parked;
		unpark(pc);
		pc->retry_next = a->retry;
		pc->on_retry = true;
		a->retry = pc;
	}
}

static void run_retries(struct wf_grpc_api *a)
{
	for (int round = 0; a->retry && round < 8; round++) {
		struct pcall *list = a->retry;
		a->retry = NULL;
		while (list) {
			struct pcall *pc = list;
			list = pc->retry_next;
			pc->retry_next = NULL;
			pc->on_retry = false;
			run(pc);
		}
	}
}

/* Long polls whose time is up answer what they last found; agents left
 * with no Workflow and no long poll leave the index. */
static void expire_parked(struct wf_grpc_api *a, uint64_t now)
{
	a->next_at = 0;
	for (size_t i = 0; i < a->agents.nb; i++) {
		struct hent *e = a->agents.b[i];
		while (e) {
			struct agent *ag = e->val;
			const char *key = e->key;
			e = e->next;
			struct pcall *pc = ag->parked;
			while (pc) {
				struct pcall *next = pc->park_next;
				if (pc->park_until <= now)
					finish(pc, pc->last_code, pc->last_msg, NULL, 0);
				else if (!a->next_at || pc->park_until < a->next_at)
					a->next_at = pc->park_until;
				pc = next;
			}
			if (!ag->n && !ag->parked) {
				free(ag->wfs);
				free(ag);
				hdel(&a->agents, key);
			}
		}
	}
}

/* ---- writes ---- */

static void write_done(struct wf_grpc_api *a, struct pcall *pc, const struct store_done *d)
{
	pc->writing = false;
	if (d->error == 0 && pc->op.object) {
		upsert(a, json_incref(pc->op.object), pc->op.rv);
		if (!pc->call)
			pcall_free(pc);
		else if (pc->method == WF_GRPC_GET_ACTION)
			answer_handout(pc);
		else
			finish(pc, GRPC_OK, NULL, (const uint8_t *)"", 0);
		return;
	}
	if (d->error == -ESTALE && pc->call && ++pc->attempts < WF_API_MAX_ATTEMPTS) {
		/* The controller wrote first: read the Workflow again, run again. */
		json_t *o = NULL;
		if (store_get(a->rd, STORE_KIND_WORKFLOW, pc->op.namespace_, pc->op.name, &o) == 0)
			upsert(a, o, obj_rv(o));
		store_op_clear(&pc->op);
		run(pc);
		return;
	}
	if (pc->call)
		log_warn("grpc", "workflow %s/%s: status write failed: %s", pc->op.namespace_,
			 pc->op.name, d->message);
	finish(pc, d->error == -ENOENT ? GRPC_NOT_FOUND : GRPC_UNAVAILABLE, d->message, NULL, 0);
}

static void drain(struct wf_grpc_api *a)
{
	struct store_done done[64];
	for (int round = 0; round < 64; round++) {
		size_t n = store_completion_drain(a->cq, done, ARRAY_SIZE(done));
		for (size_t i = 0; i < n; i++)
			write_done(a, (struct pcall *)(uintptr_t)done[i].tag, &done[i]);
		if (n < ARRAY_SIZE(done))
			break;
	}
}

/* ---- the public face ---- */

void wf_grpc_api_call(struct wf_grpc_api *a, struct wf_h2_call *call)
{
	struct tink_check_error ce = { 0 };
	struct pcall *pc = calloc(1, sizeof(*pc));
	char msg[256];
	if (!pc) {
		wf_h2_fail(call, GRPC_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	pc->a = a;
	pc->call = call;
	pc->method = call->method;
	enum tink_msg m = call->method == WF_GRPC_GET_ACTION ? TINK_MSG_ACTION_REQUEST :
							       TINK_MSG_ACTION_STATUS_REQUEST;
	int e = tink_decode(m, call->msg, call->msg_len, &pc->req, &ce);
	if (e < 0) {
		snprintf(msg, sizeof(msg), "malformed request: byte %zu: %s", ce.offset,
			 e == -ENOMEM ? "out of memory" : ce.message);
		wf_grpc_count_refusal(WF_REFUSE_PROTOBUF);
		finish(pc, e == -ENOMEM ? GRPC_RESOURCE_EXHAUSTED : GRPC_INVALID_ARGUMENT, msg,
		       NULL, 0);
		return;
	}
	const char *agent = call->method == WF_GRPC_GET_ACTION ?
				    ((Proto__ActionRequest *)pc->req)->agent_id :
				    ((Proto__ActionStatusRequest *)pc->req)->agent_id;
	if (!agent || !*agent || strlen(agent) >= sizeof(pc->agent_id)) {
		finish(pc, GRPC_INVALID_ARGUMENT, "agent_id is empty or too long", NULL, 0);
		return;
	}
	snprintf(pc->agent_id, sizeof(pc->agent_id), "%s", agent);
	call->app = pc;
	if (!a->loaded) {
		finish(pc, GRPC_UNAVAILABLE, "the workflow cache is loading", NULL, 0);
		return;
	}
	run(pc);
	run_retries(a);
}

void wf_grpc_api_cancelled(struct wf_grpc_api *a, struct wf_h2_call *call)
{
	struct pcall *pc = call->app;
	if (!pc)
		return;
	call->app = NULL;
	pc->call = NULL;
	unpark(pc);
	if (!pc->writing && !pc->on_retry)
		pcall_free(pc);
}

size_t wf_grpc_api_waiting(const struct wf_grpc_api *a)
{
	return a ? a->parked : 0;
}

int wf_grpc_api_fds(const struct wf_grpc_api *a, int fds[2])
{
	fds[0] = store_subscription_fd(a->sub);
	fds[1] = store_completion_fd(a->cq);
	return 0;
}

uint64_t wf_grpc_api_next(const struct wf_grpc_api *a)
{
	return a->next_at;
}

uint64_t wf_grpc_api_run(struct wf_grpc_api *a, uint64_t now_ms)
{
	if (!a->rd && !(a->rd = store_reader_new(a->store))) {
		log_error("grpc", "cannot open a store reader");
		return a->next_at = now_ms + 1000;
	}
	if (!a->loaded) {
		int e = relist(a);
		if (e < 0) {
			log_warn("grpc", "reading the Workflows: %s", strerror(-e));
			return a->next_at = now_ms + 1000;
		}
		log_info("grpc", "%zu workflows cached", a->wfs.n);
	}
	store_subscription_ack(a->sub);
	/* our writes first: their changes are then held, not decoded again */
	drain(a);
	follow_changes(a);
	run_retries(a);
	if (a->next_at && a->next_at <= now_ms)
		expire_parked(a, now_ms);
	run_retries(a);
	return a->next_at;
}

struct wf_grpc_api *wf_grpc_api_new(struct store *store, const struct wf_grpc_settings *settings,
				    char *err, size_t errlen)
{
	struct wf_grpc_api *a = calloc(1, sizeof(*a));
	if (!a)
		goto fail;
	a->store = store;
	a->set = settings;
	a->engine_set = (struct wf_settings){
		.default_action_timeout_s = settings->default_action_timeout_s,
		.action_grace_s = settings->action_grace_s,
		.retry_base_s = settings->retry_base_s,
		.retry_max_s = settings->retry_max_s,
	};
	a->sub = store_subscribe(store, 1u << STORE_KIND_WORKFLOW);
	a->cq = store_completion_new(WF_API_MAX_WRITES);
	if (!a->sub || !a->cq)
		goto fail;
	a->m_latency = metrics_histogram("ironbell_grpc_get_action_seconds",
					 "Time to hand out an action (GetAction answered at once).",
					 NULL, metrics_latency_buckets, metrics_latency_nbuckets);
	return a;
fail:
	snprintf(err, errlen, "grpc: out of memory");
	if (a) {
		store_unsubscribe(store, a->sub);
		store_completion_free(a->cq);
		free(a);
	}
	return NULL;
}

void wf_grpc_api_stop(struct wf_grpc_api *a)
{
	for (size_t i = 0; a && i < a->agents.nb; i++)
		for (struct hent *e = a->agents.b[i]; e; e = e->next)
			while (((struct agent *)e->val)->parked)
				finish(((struct agent *)e->val)->parked, GRPC_UNAVAILABLE,
				       "the server is stopping", NULL, 0);
}

void wf_grpc_api_free(struct wf_grpc_api *a)
{
	if (!a)
		return;
	/* Writes in flight borrow their calls' ops: wait for them (the
	 * store is still open, so they complete). */
	for (int i = 0; i < 100000 && store_completion_inflight(a->cq) > 0; i++) {
		struct store_done done[64];
		size_t n = store_completion_drain(a->cq, done, ARRAY_SIZE(done));
		for (size_t j = 0; j < n; j++)
			pcall_free((struct pcall *)(uintptr_t)done[j].tag);
		if (!n)
			usleep(1000);
	}
	wf_grpc_api_stop(a);
	for (size_t i = 0; i < a->wfs.nb; i++) {
		while (a->wfs.b[i]) {
			struct wf_entry *w = a->wfs.b[i]->val;
			entry_remove(a, w);
		}
	}
	for (size_t i = 0; i < a->agents.nb; i++)
		for (struct hent *e = a->agents.b[i]; e; e = e->next) {
			free(((struct agent *)e->val)->wfs);
			free(e->val);
		}
	hfree(&a->agents);
	hfree(&a->wfs);
	store_unsubscribe(a->store, a->sub);
	store_completion_free(a->cq);
	store_reader_free(a->rd);
	free(a);
}
