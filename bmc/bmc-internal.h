/* bmc-internal — private to bmc/: the state the bmc thread's files share
 * (server.c: the loop, timers, engine calls; machine.c, job.c, task.c: the
 * controllers; creds.c: Secrets), and the constructor the unit test uses
 * to run the controllers on engines of its own. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bmc/bmc.h"
#include "bmc/provider.h"
#include "common/timerheap.h"

struct store;
struct store_reader;
struct store_subscription;
struct store_op;
struct metric;

#define BMC_MAX_ENGINES 4         /* engines one server drives */
#define BMC_NS_MAX 64             /* a namespace (DNS label), NUL included */
#define BMC_OBJ_NAME_MAX 254      /* an object name (DNS subdomain), NUL included */
#define BMC_COND_MAX 1024         /* a condition's message */
#define BMC_MACHINE_BUCKETS 4096  /* hash buckets of the Machine table */
#define BMC_MAX_MACHINES 100000   /* Machines followed at once */
#define BMC_MAX_JOBS 100000       /* Jobs not yet finished followed at once */
#define BMC_MAX_TASKS 100000      /* Tasks running at once */
#define BMC_CHANGES_PAGE 256      /* store changes read at once */
#define BMC_SYNC_PAGES 16         /* pages read per wake before the loop turns */
#define BMC_TIMERS_PER_TURN 4096  /* timers fired per turn of the loop */
#define BMC_RETRY_BUSY_MS 1000    /* an engine said -EAGAIN: try again after */
#define BMC_FIRST_POLL_MS 10      /* a new or changed Machine is polled after */
#define BMC_CLOSE_TIMEOUT_MS 3000 /* engines' close at shutdown */
#define BMC_WRITE_BATCH 1024      /* Machine status writes in one store write */

#define BMC_DESIRED_ANNOTATION "bmc.ironbell.dev/desired-power"

/* Makes a server whose engines are ops[0..nops) (each ops->new() is
 * called; one that fails is logged and left out, as bmc_server_new()
 * does with the IPMI and Redfish engines). For the unit test, which
 * passes scripted engines named "ipmitool" and "redfish". ops must
 * outlive the server. Same contract as bmc_server_new(). */
int bmc_server_new_with(struct store *store, const struct bmc_settings *settings,
			const struct bmc_engine_ops *const *ops, size_t nops,
			struct bmc_server **ret, char *err, size_t errlen);

/* ---- timers (server.c): one min-heap of the controllers' deadlines ---- */

struct bmc_server;
struct bmc_timer;
typedef void (*bmc_timer_fn)(struct bmc_server *s, struct bmc_timer *t);
struct bmc_timer {
	struct timerheap_node node; /* .at: the bmc_now_ms() deadline; .idx 0:
				     * not armed */
	bmc_timer_fn fire;
};

/* (Re)arms t at at. 0 or -ENOMEM. */
int bmc_timer_set(struct bmc_server *s, struct bmc_timer *t, uint64_t at);
/* Disarms t (no-op if not armed). */
void bmc_timer_cancel(struct bmc_server *s, struct bmc_timer *t);

/* ---- engines and calls (server.c) ---- */

struct bmc_engine {
	const struct bmc_engine_ops *ops;
	void *e;       /* NULL: unavailable */
	char why[256]; /* why unavailable */
	struct metric *m_seconds[BMC_CMD_MAX];
	struct metric *m_fail[BMC_FAIL_MAX];
	struct metric *m_sessions;
};

/* A Machine's (or a Task's) connection, resolved: the endpoint with its
 * credentials, and the engines to try, in order. */
struct bmc_conn {
	struct bmc_endpoint ep; /* port 0 here; ports[] per engine */
	uint16_t ports[BMC_MAX_ENGINES];
	int order[BMC_MAX_ENGINES]; /* engine indexes */
	size_t norder;
	char unavailable[512]; /* "provider redfish unavailable: ..." for
				       * the engines this connection asks for
				       * by name that did not start: the start
				       * of a failure's message */
};

/* What a call's caller is told, exactly once, from the loop. engine is
 * the index of the engine that answered last. why, on failure, is the
 * reply's message prefixed by its provider's name, after those of the
 * providers tried before and of those asked for that did not start
 * ("provider redfish unavailable: ...; ipmitool: RAKP 2: ..."): use it
 * rather than r->message, which is the last engine's alone. */
typedef void (*bmc_req_fn)(struct bmc_server *s, const struct bmc_reply *r, int engine,
			   const char *why, void *obj);

/* Runs call against conn's engines in order, starting with prefer when it
 * is one of them (-1: conn's order): an engine that cannot reach the BMC
 * (timeout, network, TLS, auth, protocol, unsupported) passes the call
 * to the next; the failure's why then names each provider tried. conn
 * is copied (and its password wiped when the call ends). 0, or a negative
 * errno (-EAGAIN: every engine is full, try later) with no callback and
 * what each engine said in err. */
int bmc_req_start(struct bmc_server *s, const struct bmc_conn *conn, int prefer,
		  const struct bmc_call *call, bmc_req_fn done, void *obj, char *err,
		  size_t errlen);

/* The engine's provider name ("ipmitool"), for messages. */
const char *bmc_engine_name(const struct bmc_server *s, int engine);

/* Patches obj's .status with status (borrowed): 0 or a negative errno,
 * logged. */
int bmc_status_patch(struct bmc_server *s, int kind, const char *ns, const char *name,
		     json_t *status);

/* Queues a Machine's status patch (takes status) for the write that ends
 * this turn of the loop: the polls of a thousand Machines are one
 * transaction, not a thousand. 0 or -ENOMEM (status freed). */
int bmc_status_patch_later(struct bmc_server *s, const char *ns, const char *name, json_t *status);
/* Writes what bmc_status_patch_later() queued. */
void bmc_status_flush(struct bmc_server *s);

/* The current wall time as RFC 3339 (out: 21 bytes). */
void bmc_time_now(char out[static 21]);

/* ---- the server ---- */

struct bmc_machine;
struct bmc_job;
struct bmc_task;

struct bmc_server {
	struct store *store;
	struct bmc_settings set;
	struct store_reader *reader; /* the thread's */
	struct store_subscription *sub;
	int stop_fd;
	bool started;
	bool stopping; /* the engines are being freed */
	pthread_t thread;
	uint64_t rv; /* changes read up to */
	bool sync_more;
	struct bmc_engine eng[BMC_MAX_ENGINES];
	size_t neng;
	/* timers */
	struct timerheap timers;
	/* machines */
	struct bmc_machine *mbucket[BMC_MACHINE_BUCKETS];
	size_t nmachines;
	/* jobs, oldest first */
	struct bmc_job *jobs_head, *jobs_tail;
	size_t njobs;
	unsigned jobs_running;
	uint64_t job_seq;
	bool admitting; /* in bmc_jobs_admit() */
	/* Machine status writes queued for the end of the turn */
	struct store_op *pend;
	size_t npend;
	/* tasks running */
	struct bmc_task *tasks;
	size_t ntasks;
	/* metrics */
	struct metric *m_jobs_running, *m_tasks[2], *m_jobs[2];
};

/* ---- creds.c ---- */

/* Reads username and password from Secret ns/name into ep (user,
 * password). 0, or -ENOENT / -EINVAL with err naming what is missing
 * ("secret default/bmc-creds has no key \"password\""). Never puts the
 * password in err. */
int bmc_creds_read(struct store_reader *r, const char *ns, const char *name,
		   struct bmc_endpoint *ep, char *err, size_t errlen);

/* ---- machine.c ---- */

/* Resolves a connection object (a Machine's spec.connection, or a Task's
 * copy of it), in namespace ns (the Secret's default), into *ret: engines
 * in Rufio's order, ports, options and credentials. 0, or a negative
 * errno with a message in err ("secret ... has no key ...", "provider
 * redfish unavailable: ..."). Wipe ret->ep.password after use. */
int bmc_conn_resolve(struct bmc_server *s, const json_t *conn, const char *ns, struct bmc_conn *ret,
		     char *err, size_t errlen);
void bmc_machine_changed(struct bmc_server *s, bool deleted, const json_t *obj);
void bmc_machine_secret_changed(struct bmc_server *s, const char *ns, const char *name);
/* Machine ns/name's queued status write failed: forget the cached status,
 * so the next poll writes it again. */
void bmc_machine_status_lost(struct bmc_server *s, const char *ns, const char *name);
/* The wait before a Machine's next power poll: interval_s seconds give or
 * take a tenth, drawn from *state (any value; updated). Never less than
 * 0.9 and never more than 1.1 times the interval. */
uint64_t bmc_poll_delay_ms(unsigned interval_s, uint32_t *state);
struct bmc_machine *bmc_machine_find(struct bmc_server *s, const char *ns, const char *name);
/* Whether m is free of Jobs and Tasks (for the desired power state). */
bool bmc_machine_idle(struct bmc_server *s, const struct bmc_machine *m);
/* The engine that last answered m, or -1. */
int bmc_machine_engine(const struct bmc_machine *m);
/* Polls m soon (after a Job ends, or a Machine appears), and lets the
 * desired power state act then, however recently it last did. */
void bmc_machine_poll_soon(struct bmc_server *s, struct bmc_machine *m);
/* Marks and sweeps for a relist: mark, then bmc_machine_changed() for
 * each object listed, then sweep drops those not seen. */
void bmc_machines_mark(struct bmc_server *s);
void bmc_machines_sweep(struct bmc_server *s);
void bmc_machines_free(struct bmc_server *s);

/* ---- job.c ---- */

void bmc_job_changed(struct bmc_server *s, bool deleted, const json_t *obj);
/* A Task owned by Job ns/job changed state: the Job goes on. */
void bmc_job_kick(struct bmc_server *s, const char *ns, const char *job);
/* Starts waiting Jobs while there is room (max_jobs). */
void bmc_jobs_admit(struct bmc_server *s);
/* Whether Machine ns/name has a Job waiting or running. */
bool bmc_jobs_for_machine(const struct bmc_server *s, const char *ns, const char *name);
/* The Machine of a running Job ns/name, into mns/mname: true when known. */
bool bmc_job_machine(const struct bmc_server *s, const char *ns, const char *name, const char **mns,
		     const char **mname);
void bmc_jobs_free(struct bmc_server *s);

/* ---- task.c ---- */

/* restart: the object comes from the first listing after a start. */
void bmc_task_changed(struct bmc_server *s, bool deleted, const json_t *obj);
/* Whether a Task is running on Machine ns/name. */
bool bmc_tasks_for_machine(const struct bmc_server *s, const char *ns, const char *name);
void bmc_tasks_free(struct bmc_server *s);

/* ---- small JSON helpers (server.c) ---- */

const char *bmc_jstr(const json_t *obj, const char *path);
/* Copies s into out (cap bytes); false (and out "") when s is NULL or
 * does not fit. */
bool bmc_copy(char *out, size_t cap, const char *s);
/* The condition of type in obj's .status.conditions with status "True". */
const json_t *bmc_cond_true(const json_t *obj, const char *type);
