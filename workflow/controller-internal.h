/* controller-internal — private to workflow/: what the workflow
 * controller's two files share (controller.c: the thread, its index of
 * Workflows, the queue of those to look at and the timers;
 * controller-step.c: one look at a Workflow, the engine's step and its
 * effects carried out in the store). Everything here runs on the
 * controller's thread alone. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/timerheap.h"
#include "workflow/engine.h"
#include "workflow/workflow.h"

struct store;
struct store_reader;
struct store_subscription;
struct metric;

#define WF_CTL_BUCKETS 4096         /* hash buckets of the Workflow index */
#define WF_CTL_MAX_WORKFLOWS 100000 /* Workflows followed at once */
#define WF_CTL_MAX_JOB_REFS 8       /* status.bootOptions.jobs names followed per Workflow */
#define WF_CTL_CHANGES_PAGE 256     /* store changes read at once */
#define WF_CTL_SYNC_PAGES 16        /* pages read per wake before the loop turns */
#define WF_CTL_LOOKS_PER_TURN 256   /* Workflows looked at per turn of the loop */
/* A status write that meets a newer version: read again and step again,
 * this many times. */
#define WF_CTL_STEP_ATTEMPTS 4
/* A Hardware write that meets a newer version (Tinkerbell's 4). */
#define WF_CTL_CONFLICT_RETRIES 4
/* A look that failed (store, engine) is tried again after this. */
#define WF_CTL_ERROR_RETRY_MS 5000
#define WF_CTL_MAX_WAIT_MS 60000 /* longest sleep of the loop */
/* An engine's wake_ms sooner than this is put off to it, so that no
 * Workflow spins. */
#define WF_CTL_MIN_WAKE_MS 100

#define WF_CTL_AUTO_LABEL "tink-controller-auto-created" /* Tinkerbell's, on Jobs it makes */

/* One Workflow the controller follows: where it is and what it refers
 * to, so that a change of a Template, Hardware or Job finds the
 * Workflows to look at again. */
struct wf_entry {
	struct wf_entry *hnext; /* bucket chain */
	struct wf_entry *qnext; /* the queue of Workflows to look at */
	bool queued;
	bool seen;                       /* mark and sweep of a relist */
	struct timerheap_node timer;     /* .at: CLOCK_REALTIME ms to look again;
					  * .idx 0: no timer */
	uint64_t written_rv;             /* resourceVersion of this thread's last status write */
	/* The Workflow as the change that queued it decoded it (owned, NULL:
	 * none), taken by the next look instead of reading it again. */
	json_t *changed_obj;
	char *ns, *name;                 /* owned */
	char *tmpl, *hw;                 /* spec.templateRef, spec.hardwareRef; NULL: none */
	char *jobs[WF_CTL_MAX_JOB_REFS]; /* the names in status.bootOptions.jobs */
	size_t njobs;
};

struct wf_server {
	struct store *store;
	struct wf_settings set;
	struct store_reader *reader; /* the thread's */
	struct store_subscription *sub;
	int stop_fd, ep_fd;
	bool started;
	pthread_t thread;
	uint64_t rv; /* changes read up to */
	bool sync_more;
	uint64_t next_resync_ms; /* CLOCK_MONOTONIC ms */
	/* the index */
	struct wf_entry *bucket[WF_CTL_BUCKETS];
	size_t n;
	/* the queue */
	struct wf_entry *qhead, *qtail;
	/* the entries' timers */
	struct timerheap timers;
	/* metrics */
	struct metric *m_trans[WF_STATE_MAX];
	struct metric *m_render_fail, *m_step_err, *m_followed;
};

/* ---- controller.c ---- */

/* Queues w to be looked at (once, however often it is asked). */
void wf_ctl_queue(struct wf_server *s, struct wf_entry *w);
/* (Re)arms w's timer at at_ms (CLOCK_REALTIME ms); 0 disarms. */
void wf_ctl_timer(struct wf_server *s, struct wf_entry *w, int64_t at_ms);
/* Copies the references of wf (the Workflow object, borrowed) into w:
 * templateRef, hardwareRef, the Job names of status.bootOptions.jobs. */
void wf_ctl_refs(struct wf_entry *w, const json_t *wf);

/* ---- controller-step.c ---- */

/* Looks at w: reads the Workflow and its inputs, steps the engine, carries
 * out the effects, writes the status (a conflict: again, at most
 * WF_CTL_STEP_ATTEMPTS times) and arms w's timer. Returns 0, or -ENOENT
 * when the Workflow is gone from the store (the caller forgets w). */
int wf_ctl_look(struct wf_server *s, struct wf_entry *w);

/* A string at a dotted path of obj ("metadata.name"), or NULL. */
/* A Workflow of its own to change: obj's top level and .metadata copied,
 * the rest shared with obj. Its .status is replaced, never changed in
 * place: wf_engine_step() hands back a new one, and note_job() copies it
 * first. NULL without memory. */
json_t *wf_ctl_own_copy(const json_t *obj);
const char *wf_ctl_jstr(const json_t *obj, const char *path);
