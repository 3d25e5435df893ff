/* check_bmc — the bmc thread's controllers (bmc/server.c, machine.c,
 * job.c, task.c, creds.c) on a store of their own, against a scripted
 * engine: an ops table named "ipmitool" whose fd is an eventfd and whose
 * calls are answered from process() by simulated BMCs (power state that
 * follows a command after N polls, boot device, failures, silence). The
 * "redfish" engine is one that does not start. Every wait is a bounded
 * polling loop; nothing is timed. The objects are the admin API's (local)
 * or, in test_kube_objects, Kubernetes mode's (kube). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <jansson.h>

#include "bmc/bmc-internal.h"
#include "common/common.h"
#include "tests/unit/unit.h"

#define FIXTURE_NAME "check_bmc"
#include "tests/unit/store_fixture.h"

#define PASSWORD "s3cr3t-pw-7731"
#define WAIT_TURNS 2000 /* x 10 ms */

/* ---- the simulated BMCs ---- */

struct sim_bmc {
	char host[BMC_HOST_MAX];
	enum bmc_power power, target;
	unsigned lag, left; /* power polls before a command takes effect */
	unsigned polls;
	struct bmc_boot boot;
	bool boot_unknown, boot_lie;
	enum bmc_fail fail;     /* every call */
	enum bmc_fail fail_set; /* POWER_SET only */
	enum bmc_fail fail_rf;  /* every call through the "redfish" engine */
	const char *provider;   /* the engine of the last call */
	uint16_t port;          /* and its port */
	unsigned cipher;        /* and cipher suite */
	bool silent;            /* never answers */
	bool in_job;            /* off seen, on not yet */
	bool interleaved;
	char log[512];
	char user[BMC_USER_MAX], password[BMC_PASSWORD_MAX];
};

struct pending {
	char host[BMC_HOST_MAX];
	struct bmc_endpoint ep;
	struct bmc_call call;
	bmc_done_fn done;
	void *ud;
};

#define SIM_MAX 16
#define SIM_QUEUE 1024
static struct {
	pthread_mutex_t mu;
	struct sim_bmc b[SIM_MAX];
	size_t n;
	unsigned active, max_active;
} sim = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* One scripted engine: its queue of calls and its eventfd. */
struct sim_engine {
	const char *name;
	struct pending q[SIM_QUEUE];
	size_t nq;
	int efd;
};
static struct sim_engine eng_ipmi = { .name = "ipmitool", .efd = -1 };
static struct sim_engine eng_rf = { .name = "redfish", .efd = -1 };

static struct sim_bmc *sim_add(const char *host, enum bmc_power p)
{
	pthread_mutex_lock(&sim.mu);
	struct sim_bmc *b = &sim.b[sim.n++];
	memset(b, 0, sizeof(*b));
	snprintf(b->host, sizeof(b->host), "%s", host);
	b->power = b->target = p;
	pthread_mutex_unlock(&sim.mu);
	return b;
}

static struct sim_bmc *sim_find(const char *host)
{
	for (size_t i = 0; i < sim.n; i++)
		if (strcmp(sim.b[i].host, host) == 0)
			return &sim.b[i];
	return NULL;
}

static void logc(struct sim_bmc *b, const char *what)
{
	size_t n = strlen(b->log);
	snprintf(b->log + n, sizeof(b->log) - n, "%s%s", n ? "," : "", what);
}

static void answer(const struct sim_engine *E, struct pending *p, struct bmc_reply *r)
{
	struct sim_bmc *b = sim_find(p->host);
	memset(r, 0, sizeof(*r));
	r->seconds = 0.001;
	if (!b) {
		r->fail = BMC_FAIL_NETWORK;
		snprintf(r->message, sizeof(r->message), "connect to %s: no route to host",
			 p->host);
		return;
	}
	b->provider = E->name;
	b->port = p->ep.port;
	b->cipher = p->ep.cipher_suite;
	if (E == &eng_rf && b->fail_rf) {
		r->fail = b->fail_rf;
		snprintf(r->message, sizeof(r->message), "GET /redfish/v1: HTTP 503");
		return;
	}
	snprintf(b->user, sizeof(b->user), "%s", p->ep.user);
	snprintf(b->password, sizeof(b->password), "%s", p->ep.password);
	if (b->fail) {
		r->fail = b->fail;
		snprintf(r->message, sizeof(r->message), "RAKP 2: unauthorized name (status 0x0d)");
		return;
	}
	switch (p->call.cmd) {
	case BMC_CMD_POWER_GET:
		b->polls++;
		if (b->left && --b->left == 0)
			b->power = b->target;
		r->power = b->power;
		break;
	case BMC_CMD_POWER_SET:
		if (b->fail_set) {
			r->fail = b->fail_set;
			snprintf(r->message, sizeof(r->message),
				 "chassis control: completion code 0xd5");
			return;
		}
		b->target = p->call.action == BMC_ACT_OFF || p->call.action == BMC_ACT_SOFT ?
				    BMC_POWER_OFF :
				    BMC_POWER_ON;
		b->left = b->lag;
		if (!b->lag)
			b->power = b->target;
		logc(b, b->target == BMC_POWER_ON ? "on" : "off");
		if (b->target == BMC_POWER_OFF) {
			if (b->in_job)
				b->interleaved = true;
			else if (++sim.active > sim.max_active)
				sim.max_active = sim.active;
			b->in_job = true;
		} else if (b->in_job) {
			b->in_job = false;
			sim.active--;
		}
		break;
	case BMC_CMD_BOOT_SET:
		b->boot = p->call.boot;
		logc(b, p->call.boot.device == BMC_BOOT_PXE ? "pxe" : "disk");
		break;
	case BMC_CMD_BOOT_GET:
		r->boot = b->boot;
		if (b->boot_lie)
			r->boot.device = BMC_BOOT_BIOS;
		r->boot_known = !b->boot_unknown;
		break;
	default: logc(b, "media"); break;
	}
}

static bool engine_fails;

static int sim_new(const struct bmc_settings *settings, void **ret, char *err, size_t errlen)
{
	(void)settings;
	if (engine_fails) {
		snprintf(err, errlen, "cannot bind 0.0.0.0:623: permission denied");
		return -EACCES;
	}
	eng_ipmi.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	*ret = &eng_ipmi;
	return 0;
}

static int sim_rf_new(const struct bmc_settings *settings, void **ret, char *err, size_t errlen)
{
	(void)settings;
	(void)err;
	(void)errlen;
	eng_rf.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	*ret = &eng_rf;
	return 0;
}

static int sim_fd(void *e)
{
	return ((struct sim_engine *)e)->efd;
}

static int sim_timeout(void *e, uint64_t now)
{
	(void)e;
	(void)now;
	return -1;
}

/* Answers every call queued before it began, from the loop. */
static void sim_process(void *e, uint64_t now)
{
	static struct pending batch[SIM_QUEUE];
	struct bmc_reply r[SIM_QUEUE];
	struct sim_engine *E = e;
	uint64_t v;
	size_t n = 0, keep = 0;
	(void)now;
	if (read(E->efd, &v, sizeof(v)) < 0)
		v = 0;
	pthread_mutex_lock(&sim.mu);
	for (size_t i = 0; i < E->nq; i++) {
		struct sim_bmc *b = sim_find(E->q[i].host);
		if (b && b->silent) {
			E->q[keep++] = E->q[i];
			continue;
		}
		batch[n] = E->q[i];
		answer(E, &batch[n], &r[n]);
		n++;
	}
	E->nq = keep;
	pthread_mutex_unlock(&sim.mu);
	for (size_t i = 0; i < n; i++)
		batch[i].done(&r[i], batch[i].ud);
}

static int sim_submit(void *e, const struct bmc_endpoint *ep, const struct bmc_call *call,
		      bmc_done_fn done, void *ud)
{
	struct sim_engine *E = e;
	uint64_t one = 1;
	if (E == &eng_ipmi && call->cmd == BMC_CMD_MEDIA_SET)
		return -EINVAL; /* IPMI has no virtual media */
	pthread_mutex_lock(&sim.mu);
	if (E->nq == SIM_QUEUE) {
		pthread_mutex_unlock(&sim.mu);
		return -EAGAIN;
	}
	struct pending *p = &E->q[E->nq++];
	snprintf(p->host, sizeof(p->host), "%s", ep->host);
	p->ep = *ep;
	p->call = *call;
	p->done = done;
	p->ud = ud;
	pthread_mutex_unlock(&sim.mu);
	ck_assert_int_eq(write(E->efd, &one, sizeof(one)), sizeof(one));
	return 0;
}

static size_t sim_sessions(void *e)
{
	(void)e;
	return 1;
}

static void sim_free(void *e, unsigned timeout_ms)
{
	struct bmc_reply r = { .fail = BMC_FAIL_CANCELED };
	struct sim_engine *E = e;
	(void)timeout_ms;
	for (size_t i = 0; i < E->nq; i++)
		E->q[i].done(&r, E->q[i].ud);
	E->nq = 0;
	close(E->efd);
	E->efd = -1;
}

static const struct bmc_engine_ops sim_ops = {
	.name = "ipmitool",
	.new = sim_new,
	.fd = sim_fd,
	.timeout_ms = sim_timeout,
	.process = sim_process,
	.submit = sim_submit,
	.sessions = sim_sessions,
	.free = sim_free,
};

static const struct bmc_engine_ops sim_rf_ops = {
	.name = "redfish",
	.new = sim_rf_new,
	.fd = sim_fd,
	.timeout_ms = sim_timeout,
	.process = sim_process,
	.submit = sim_submit,
	.sessions = sim_sessions,
	.free = sim_free,
};

static int off_new(const struct bmc_settings *settings, void **ret, char *err, size_t errlen)
{
	(void)settings;
	(void)ret;
	snprintf(err, errlen, "the redfish engine is not built yet");
	return -ENOSYS;
}

static const struct bmc_engine_ops off_ops = { .name = "redfish", .new = off_new };

/* ---- the server and the store ---- */

static struct bmc_server *srv;

/* Starts a server on the scripted IPMI engine and, with redfish, the
 * scripted Redfish one (else one that does not start). */
static void start_with(unsigned max_jobs, unsigned task_timeout_s, bool redfish)
{
	const struct bmc_engine_ops *const ops[] = { &sim_ops, redfish ? &sim_rf_ops : &off_ops };
	struct bmc_settings set = { .poll_interval_s = 1,
				    .verify_interval_ms = 10,
				    .max_jobs = max_jobs,
				    .task_timeout_s = task_timeout_s };
	char err[256] = "";
	ck_assert_msg(bmc_server_new_with(st, &set, ops, 2, &srv, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_int_eq(bmc_server_start(srv, err, sizeof(err)), 0);
}

static void start(unsigned max_jobs, unsigned task_timeout_s)
{
	start_with(max_jobs, task_timeout_s, false);
}

/* The source create() writes with (NULL: local). */
static const char *create_source;

static void bmc_setup(void)
{
	create_source = NULL;
	setup();
	pthread_mutex_lock(&sim.mu);
	sim.n = eng_ipmi.nq = eng_rf.nq = 0;
	sim.active = sim.max_active = 0;
	pthread_mutex_unlock(&sim.mu);
	engine_fails = false;
	srv = NULL;
}

static void bmc_teardown(void)
{
	bmc_server_free(srv);
	srv = NULL;
	teardown();
}

static void create(enum store_kind k, const char *json)
{
	json_error_t je;
	json_t *o = json_loads(json, 0, &je);
	ck_assert_msg(o, "%s: %s", json, je.text);
	struct store_op op = { .type = STORE_OP_CREATE, .kind = k, .body = o, .source = create_source };
	int e = store_write1(st, &op);
	ck_assert_msg(e == 0, "create: %s", store_op_message(&op));
	store_op_clear(&op);
	json_decref(o);
}

static void secret(const char *name, bool with_password)
{
	char j[512];
	/* "admin" and PASSWORD in base64 */
	snprintf(j, sizeof(j),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\"},"
		 "\"data\":{\"username\":\"YWRtaW4=\"%s}}",
		 name, with_password ? ",\"password\":\"czNjcjN0LXB3LTc3MzE=\"" : "");
	create(STORE_KIND_SECRET, j);
}

static void machine(const char *name, const char *host, const char *extra)
{
	char j[1024];
	snprintf(j, sizeof(j),
		 "{\"apiVersion\":\"bmc.tinkerbell.org/v1alpha1\",\"kind\":\"Machine\","
		 "\"metadata\":{\"name\":\"%s\"%s},\"spec\":{\"connection\":{\"host\":\"%s\","
		 "\"authSecretRef\":{\"name\":\"creds\",\"namespace\":\"default\"}"
		 "%s}}}",
		 name, extra && extra[0] == 'A' ? extra + 1 : "", host,
		 extra && extra[0] == 'C' ? extra + 1 : "");
	create(STORE_KIND_MACHINE, j);
}

static void job(const char *name, const char *machine_name, const char *tasks)
{
	char j[2048];
	snprintf(j, sizeof(j),
		 "{\"apiVersion\":\"bmc.tinkerbell.org/v1alpha1\",\"kind\":\"Job\","
		 "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"machineRef\":{\"name\":\"%s\","
		 "\"namespace\":\"default\"},\"tasks\":%s}}",
		 name, machine_name, tasks);
	create(STORE_KIND_JOB, j);
}

static json_t *get(enum store_kind k, const char *name)
{
	json_t *o = NULL;
	if (store_get(rd, k, "default", name, &o) < 0)
		return NULL;
	return o;
}

/* The message of obj's condition type with status, or NULL. */
static const char *cond(const json_t *obj, const char *type, const char *status)
{
	const json_t *c;
	size_t i;
	json_array_foreach (json_object_get(json_object_get(obj, "status"), "conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *s = json_string_value(json_object_get(c, "status"));
		if (t && s && !strcmp(t, type) && !strcmp(s, status)) {
			const char *m = json_string_value(json_object_get(c, "message"));
			return m ? m : "";
		}
	}
	return NULL;
}

static void nap(void)
{
	usleep(10000);
}

/* Waits until kind/name has condition type=status; returns its message
 * (copied to out). */
static void wait_cond(enum store_kind k, const char *name, const char *type, const char *status,
		      char *out, size_t cap)
{
	for (int i = 0; i < WAIT_TURNS; i++) {
		json_t *o = get(k, name);
		const char *m = o ? cond(o, type, status) : NULL;
		if (m) {
			snprintf(out, cap, "%s", m);
			json_decref(o);
			return;
		}
		json_decref(o);
		nap();
	}
	ck_abort_msg("%s never got %s=%s", name, type, status);
}

static void wait_power(const char *name, const char *want)
{
	for (int i = 0; i < WAIT_TURNS; i++) {
		json_t *o = get(STORE_KIND_MACHINE, name);
		const char *p = json_string_value(
			json_object_get(json_object_get(o, "status"), "powerState"));
		bool ok = p && !strcmp(p, want);
		json_decref(o);
		if (ok)
			return;
		nap();
	}
	ck_abort_msg("machine %s never had powerState %s", name, want);
}

/* The reasons of Machine name's events, comma-joined, in order; with
 * jobs_only, only those of Jobs and Tasks (the power polls' own events
 * may fall anywhere among them). */
static void reasons_of(const char *name, bool jobs_only, char *out, size_t cap)
{
	json_t *ev = NULL, *e;
	size_t i, n = 0;
	store_sync(st);
	ck_assert_int_eq(store_events(rd, 0, STORE_KIND_MACHINE, "default", name, 1000, &ev), 0);
	out[0] = 0;
	json_array_foreach (ev, i, e) {
		const char *r = json_string_value(json_object_get(e, "reason"));
		if (jobs_only && strncmp(r, "Job", 3) && strncmp(r, "Task", 4))
			continue;
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", n ? "," : "",
				      json_string_value(json_object_get(e, "reason")));
	}
	json_decref(ev);
}

static void reasons(const char *name, char *out, size_t cap)
{
	reasons_of(name, false, out, cap);
}

/* Nothing of the password in any object but the Secret, nor any event. */
static void assert_no_password(void)
{
	static const enum store_kind kinds[] = { STORE_KIND_MACHINE, STORE_KIND_JOB,
						 STORE_KIND_TASK };
	json_t *items = NULL;
	store_sync(st);
	for (size_t k = 0; k < 3; k++) {
		ck_assert_int_eq(store_list(rd, kinds[k], NULL, NULL, &items, NULL), 0);
		char *t = json_dumps(items, 0);
		ck_assert_ptr_null(strstr(t, PASSWORD));
		ck_assert_ptr_null(strstr(t, "czNjcjN0LXB3LTc3MzE"));
		free(t);
		json_decref(items);
	}
	ck_assert_int_eq(store_events(rd, 0, STORE_KIND_MAX, NULL, NULL, 100000, &items), 0);
	char *t = json_dumps(items, 0);
	ck_assert_ptr_null(strstr(t, PASSWORD));
	free(t);
	json_decref(items);
}

/* ---- the tests ---- */

START_TEST(test_machine_polled)
{
	char m[512];
	sim_add("10.0.0.1", BMC_POWER_ON);
	secret("creds", true);
	machine("m1", "10.0.0.1", NULL);
	start(0, 0);
	wait_cond(STORE_KIND_MACHINE, "m1", "Contactable", "True", m, sizeof(m));
	wait_power("m1", "on");
	pthread_mutex_lock(&sim.mu);
	ck_assert_str_eq(sim_find("10.0.0.1")->user, "admin");
	ck_assert_str_eq(sim_find("10.0.0.1")->password, PASSWORD);
	pthread_mutex_unlock(&sim.mu);
	/* a power change is seen at the next poll, and is an event */
	pthread_mutex_lock(&sim.mu);
	sim_find("10.0.0.1")->power = BMC_POWER_OFF;
	pthread_mutex_unlock(&sim.mu);
	wait_power("m1", "off");
	reasons("m1", m, sizeof(m));
	ck_assert_str_eq(m, "PowerChanged");
	assert_no_password();
}
END_TEST

START_TEST(test_machine_unreachable)
{
	char m[512];
	sim_add("10.0.0.2", BMC_POWER_ON)->fail = BMC_FAIL_AUTH;
	secret("creds", true);
	machine("m2", "10.0.0.2", NULL);
	/* Redfish options only: Redfish first, which did not start */
	machine("m3", "10.0.0.99", "C,\"providerOptions\":{\"redfish\":{\"port\":8443}}");
	start(0, 0);
	wait_cond(STORE_KIND_MACHINE, "m2", "Contactable", "False", m, sizeof(m));
	ck_assert_msg(strstr(m, "ipmitool: RAKP 2: unauthorized name"), "%s", m);
	wait_power("m2", "unknown");
	wait_cond(STORE_KIND_MACHINE, "m3", "Contactable", "False", m, sizeof(m));
	ck_assert_msg(
		strstr(m, "provider redfish unavailable: the redfish engine is not built yet"),
		"%s", m);
	ck_assert_msg(strstr(m, "ipmitool: connect to 10.0.0.99: no route to host"), "%s", m);
	reasons("m2", m, sizeof(m));
	ck_assert_str_eq(m, "ContactLost");
	/* the BMC answers again */
	pthread_mutex_lock(&sim.mu);
	sim_find("10.0.0.2")->fail = BMC_FAIL_NONE;
	pthread_mutex_unlock(&sim.mu);
	wait_cond(STORE_KIND_MACHINE, "m2", "Contactable", "True", m, sizeof(m));
	reasons("m2", m, sizeof(m));
	ck_assert_str_eq(m, "ContactLost,ContactRestored");
	assert_no_password();
}
END_TEST

START_TEST(test_machine_secret_missing)
{
	char m[512];
	sim_add("10.0.0.3", BMC_POWER_ON);
	secret("half", false);
	create(STORE_KIND_MACHINE,
	       "{\"apiVersion\":\"bmc.tinkerbell.org/v1alpha1\",\"kind\":\"Machine\","
	       "\"metadata\":{\"name\":\"nosecret\"},\"spec\":{\"connection\":{\"host\":"
	       "\"10.0.0.3\",\"authSecretRef\":{\"name\":\"nope\"}}}}");
	create(STORE_KIND_MACHINE,
	       "{\"apiVersion\":\"bmc.tinkerbell.org/v1alpha1\",\"kind\":\"Machine\","
	       "\"metadata\":{\"name\":\"nokey\"},\"spec\":{\"connection\":{\"host\":"
	       "\"10.0.0.3\",\"authSecretRef\":{\"name\":\"half\",\"namespace\":\"default\"}}}}");
	start(0, 0);
	wait_cond(STORE_KIND_MACHINE, "nosecret", "Contactable", "False", m, sizeof(m));
	ck_assert_str_eq(m, "secret default/nope not found");
	wait_cond(STORE_KIND_MACHINE, "nokey", "Contactable", "False", m, sizeof(m));
	ck_assert_str_eq(m, "secret default/half has no key \"password\"");
	/* the Secret appears: the Machines follow */
	secret("nope", true);
	wait_cond(STORE_KIND_MACHINE, "nosecret", "Contactable", "True", m, sizeof(m));
}
END_TEST

static const char netboot[] =
	"[{\"powerAction\":\"off\"},{\"oneTimeBootDeviceAction\":{\"device\":[\"pxe\"],"
	"\"efiBoot\":true}},{\"powerAction\":\"on\"},{\"bootDevice\":{\"device\":\"disk\","
	"\"persistent\":true}}]";

START_TEST(test_job_in_order)
{
	char m[1024];
	sim_add("10.0.1.1", BMC_POWER_ON)->lag = 2;
	secret("creds", true);
	machine("n1", "10.0.1.1", NULL);
	start(0, 0);
	wait_power("n1", "on");
	job("netboot", "n1", netboot);
	wait_cond(STORE_KIND_JOB, "netboot", "Completed", "True", m, sizeof(m));
	json_t *j = get(STORE_KIND_JOB, "netboot");
	ck_assert_ptr_nonnull(cond(j, "Running", "True"));
	ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "status"), "startTime"));
	ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "status"), "completionTime"));
	const char *uid = json_string_value(json_object_get(json_object_get(j, "metadata"), "uid"));
	for (int i = 0; i < 4; i++) {
		char name[64];
		snprintf(name, sizeof(name), "netboot-task-%d", i);
		json_t *t = get(STORE_KIND_TASK, name);
		ck_assert_msg(t, "%s missing", name);
		ck_assert_ptr_nonnull(cond(t, "Completed", "True"));
		json_t *md = json_object_get(t, "metadata");
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(md, "labels"),
								   "owner-name")),
				 "netboot");
		json_t *ref = json_array_get(json_object_get(md, "ownerReferences"), 0);
		ck_assert_str_eq(json_string_value(json_object_get(ref, "uid")), uid);
		ck_assert(json_is_true(json_object_get(ref, "controller")));
		ck_assert_str_eq(
			json_string_value(json_object_get(
				json_object_get(json_object_get(t, "spec"), "connection"), "host")),
			"10.0.1.1");
		json_decref(t);
	}
	json_decref(j);
	ck_assert_ptr_null(get(STORE_KIND_TASK, "netboot-task-4"));
	pthread_mutex_lock(&sim.mu);
	ck_assert_str_eq(sim_find("10.0.1.1")->log, "off,pxe,on,disk");
	pthread_mutex_unlock(&sim.mu);
	reasons_of("n1", true, m, sizeof(m));
	ck_assert_str_eq(m, "JobStarted,TaskStarted,TaskCompleted,TaskStarted,TaskCompleted,"
			    "TaskStarted,TaskCompleted,TaskStarted,TaskCompleted,JobCompleted");
	json_t *t = get(STORE_KIND_TASK, "netboot-task-3");
	ck_assert_msg(strstr(cond(t, "Completed", "True"), "verified by reading it back"), "%s",
		      cond(t, "Completed", "True"));
	json_decref(t);
	t = get(STORE_KIND_TASK, "netboot-task-0");
	ck_assert_msg(strstr(cond(t, "Completed", "True"), "power is off, verified"), "%s",
		      cond(t, "Completed", "True"));
	json_decref(t);
	assert_no_password();
}
END_TEST

static int count_name(const char *ns, const char *name, void *ud)
{
	(void)ns;
	(void)name;
	(*(int *)ud)++;
	return 0;
}

/* Machine and Job mirrored from a cluster: the controllers write their
 * status and make the Tasks as the daemon, and they stay the cluster's. */
START_TEST(test_kube_objects)
{
	char m[1024];
	sim_add("10.0.1.9", BMC_POWER_ON);
	create_source = STORE_SOURCE_KUBE;
	secret("creds", true);
	machine("k1", "10.0.1.9", NULL);
	start(0, 0);
	wait_cond(STORE_KIND_MACHINE, "k1", "Contactable", "True", m, sizeof(m));
	wait_power("k1", "on");
	job("netboot", "k1", netboot);
	wait_cond(STORE_KIND_JOB, "netboot", "Completed", "True", m, sizeof(m));
	json_t *t = get(STORE_KIND_TASK, "netboot-task-3");
	ck_assert_ptr_nonnull(t);
	json_decref(t);
	int n = 0;
	ck_assert_int_eq(store_names(rd, STORE_KIND_MACHINE, STORE_SOURCE_KUBE, count_name, &n,
				     NULL),
			 0);
	ck_assert_int_eq(n, 1);
	n = 0;
	ck_assert_int_eq(
		store_names(rd, STORE_KIND_JOB, STORE_SOURCE_KUBE, count_name, &n, NULL), 0);
	ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(test_job_task_fails)
{
	char m[1024];
	sim_add("10.0.1.2", BMC_POWER_ON)->fail_set = BMC_FAIL_REFUSED;
	secret("creds", true);
	machine("n2", "10.0.1.2", NULL);
	start(0, 0);
	job("j2", "n2", "[{\"powerAction\":\"off\"},{\"powerAction\":\"on\"}]");
	wait_cond(STORE_KIND_JOB, "j2", "Failed", "True", m, sizeof(m));
	ck_assert_msg(strstr(m, "task j2-task-0 failed: power off: ipmitool: chassis control: "
				"completion code 0xd5"),
		      "%s", m);
	ck_assert_ptr_null(get(STORE_KIND_TASK, "j2-task-1"));
	reasons_of("n2", true, m, sizeof(m));
	ck_assert_str_eq(m, "JobStarted,TaskStarted,TaskFailed,JobFailed");
	assert_no_password();
}
END_TEST

START_TEST(test_job_machine_missing)
{
	char m[512];
	secret("creds", true);
	start(0, 0);
	/* Rufio fails a Job whose Machine it cannot get; waiting would leave
	 * it (and whoever follows it) stuck forever */
	job("jx", "no-such-machine", "[{\"powerAction\":\"on\"}]");
	wait_cond(STORE_KIND_JOB, "jx", "Failed", "True", m, sizeof(m));
	ck_assert_msg(strstr(m, "machine default/no-such-machine not found"), "%s", m);
	json_t *j = get(STORE_KIND_JOB, "jx");
	ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "status"), "completionTime"));
	json_decref(j);
	ck_assert_ptr_null(get(STORE_KIND_TASK, "jx-task-0"));
}
END_TEST

/* Waits until Task name has a startTime (its call is at the BMC). */
static void wait_started(const char *name)
{
	json_t *t = NULL;

	for (int i = 0; i < WAIT_TURNS && !t; i++) {
		t = get(STORE_KIND_TASK, name);
		if (t && !json_object_get(json_object_get(t, "status"), "startTime")) {
			json_decref(t);
			t = NULL;
		}
		if (!t)
			nap();
	}
	ck_assert_msg(t, "%s never started", name);
	json_decref(t);
}

/* Deletes default/name of kind k, as a user would. */
static void delete_obj(enum store_kind k, const char *name)
{
	struct store_op op = { .type = STORE_OP_DELETE,
			       .kind = k,
			       .namespace_ = "default",
			       .name = name };

	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
}

START_TEST(test_task_deleted_job_goes_on)
{
	char m[512];
	struct sim_bmc *b = sim_add("10.0.1.9", BMC_POWER_ON);
	b->silent = true;
	secret("creds", true);
	machine("n9", "10.0.1.9", NULL);
	start(0, 0);
	job("j9", "n9", "[{\"powerAction\":\"status\"}]");
	wait_started("j9-task-0");
	/* deleted while its call is in flight: as in Rufio, whose Job
	 * watches its Tasks, the Job makes it again rather than wait forever */
	delete_obj(STORE_KIND_TASK, "j9-task-0");
	pthread_mutex_lock(&sim.mu);
	b->silent = false;
	pthread_mutex_unlock(&sim.mu);
	wait_cond(STORE_KIND_JOB, "j9", "Completed", "True", m, sizeof(m));
	wait_cond(STORE_KIND_TASK, "j9-task-0", "Completed", "True", m, sizeof(m));
	ck_assert_str_eq(m, "power is on");
}
END_TEST

START_TEST(test_job_deleted_task_running)
{
	char m[512];
	struct sim_bmc *b = sim_add("10.0.1.10", BMC_POWER_ON);
	b->silent = true;
	sim_add("10.0.1.11", BMC_POWER_ON);
	secret("creds", true);
	machine("n10", "10.0.1.10", NULL);
	machine("n11", "10.0.1.11", NULL);
	start(0, 0);
	job("ja", "n10", "[{\"powerAction\":\"status\"}]");
	wait_started("ja-task-0");
	job("jb", "n10", "[{\"powerAction\":\"status\"}]");
	/* ja deleted while its Task's call is at the BMC: jb must still wait
	 * for that Task, or two Tasks run on one BMC at once */
	delete_obj(STORE_KIND_JOB, "ja");
	/* a Job of another Machine, done once the deletion has been seen */
	job("jc", "n11", "[{\"powerAction\":\"status\"}]");
	wait_cond(STORE_KIND_JOB, "jc", "Completed", "True", m, sizeof(m));
	json_t *t = get(STORE_KIND_TASK, "jb-task-0");
	ck_assert_msg(!t, "jb-task-0 made while ja-task-0 runs on the same BMC");
	pthread_mutex_lock(&sim.mu);
	b->silent = false;
	pthread_mutex_unlock(&sim.mu);
	uint64_t one = 1;
	ck_assert_int_eq(write(eng_ipmi.efd, &one, sizeof(one)), sizeof(one));
	wait_cond(STORE_KIND_TASK, "ja-task-0", "Completed", "True", m, sizeof(m));
	wait_cond(STORE_KIND_JOB, "jb", "Completed", "True", m, sizeof(m));
}
END_TEST

START_TEST(test_job_made_again)
{
	char m[512];
	sim_add("10.0.1.12", BMC_POWER_ON);
	secret("creds", true);
	machine("n12", "10.0.1.12", NULL);
	start(0, 0);
	job("jr", "n12", "[{\"powerAction\":\"status\"}]");
	wait_cond(STORE_KIND_JOB, "jr", "Completed", "True", m, sizeof(m));
	/* deleted and made again under the same name (kubectl delete, then
	 * apply): the old Job's Task, which nothing collects here as
	 * Kubernetes' garbage collector would, must not fail the new Job */
	delete_obj(STORE_KIND_JOB, "jr");
	job("jr", "n12", "[{\"powerAction\":\"status\"}]");
	for (int i = 0; i < WAIT_TURNS; i++) {
		json_t *j = get(STORE_KIND_JOB, "jr");
		bool end = j && (cond(j, "Completed", "True") || cond(j, "Failed", "True"));
		if (end) {
			ck_assert_msg(!cond(j, "Failed", "True"), "%s", cond(j, "Failed", "True"));
			json_t *t = get(STORE_KIND_TASK, "jr-task-0");
			const char *uid = bmc_jstr(j, "metadata.uid");
			const json_t *refs = json_object_get(json_object_get(t, "metadata"),
							     "ownerReferences");
			const char *tuid = bmc_jstr(json_array_get(refs, 0), "uid");
			ck_assert_str_eq(tuid, uid);
			json_decref(t);
		}
		json_decref(j);
		if (end)
			return;
		nap();
	}
	ck_abort_msg("jr (again) never ended");
}
END_TEST

/* A Job the daemon made, then created in the cluster by kube/: the
 * watcher's first version of it carries the uid the API server gave it
 * (and no status: the store keeps its own) while its first Task, at the
 * BMC, still names the uid the store gave. That Task is still the Job's:
 * not deleted as a former Job's and run again. */
START_TEST(test_job_takes_cluster_uid)
{
	char m[512];
	struct sim_bmc *b = sim_add("10.0.1.13", BMC_POWER_ON);
	b->silent = true;
	secret("creds", true);
	machine("n13", "10.0.1.13", NULL);
	start(0, 0);
	job("ju", "n13", "[{\"powerAction\":\"off\"},{\"powerAction\":\"on\"}]");
	wait_started("ju-task-0");
	json_t *j = get(STORE_KIND_JOB, "ju");
	json_t *md = json_object_get(j, "metadata");
	json_object_set_new(md, "uid", json_string("77777777-2222-4333-8444-555555555555"));
	json_object_del(md, "resourceVersion");
	json_object_del(j, "status");
	struct store_op op = { .type = STORE_OP_MIRROR,
			       .kind = STORE_KIND_JOB,
			       .body = j,
			       .source = STORE_SOURCE_KUBE,
			       .keep_status = true };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	json_decref(j);
	pthread_mutex_lock(&sim.mu);
	b->silent = false;
	pthread_mutex_unlock(&sim.mu);
	uint64_t one = 1;
	ck_assert_int_eq(write(eng_ipmi.efd, &one, sizeof(one)), sizeof(one));
	wait_cond(STORE_KIND_JOB, "ju", "Completed", "True", m, sizeof(m));
	reasons_of("n13", true, m, sizeof(m));
	pthread_mutex_lock(&sim.mu);
	ck_assert_str_eq(sim_find("10.0.1.13")->log, "off,on");
	pthread_mutex_unlock(&sim.mu);
	ck_assert_str_eq(m, "JobStarted,TaskStarted,TaskCompleted,TaskStarted,TaskCompleted,"
			    "JobCompleted");
}
END_TEST

START_TEST(test_power_verified)
{
	char m[512];
	struct sim_bmc *b = sim_add("10.0.1.3", BMC_POWER_ON);
	b->lag = 5;
	secret("creds", true);
	machine("n3", "10.0.1.3", NULL);
	start(0, 0);
	wait_power("n3", "on");
	pthread_mutex_lock(&sim.mu);
	unsigned before = b->polls;
	pthread_mutex_unlock(&sim.mu);
	job("j3", "n3", "[{\"powerAction\":\"off\"}]");
	wait_cond(STORE_KIND_JOB, "j3", "Completed", "True", m, sizeof(m));
	pthread_mutex_lock(&sim.mu);
	ck_assert_int_eq(b->power, BMC_POWER_OFF);
	ck_assert_uint_ge(b->polls - before, 5);
	pthread_mutex_unlock(&sim.mu);
}
END_TEST

START_TEST(test_boot_readback)
{
	char m[512];
	sim_add("10.0.1.4", BMC_POWER_ON)->boot_lie = true;
	sim_add("10.0.1.5", BMC_POWER_ON)->boot_unknown = true;
	secret("creds", true);
	machine("n4", "10.0.1.4", NULL);
	machine("n5", "10.0.1.5", NULL);
	start(0, 0);
	job("j4", "n4", "[{\"bootDevice\":{\"device\":\"pxe\",\"efiBoot\":true}}]");
	job("j5", "n5", "[{\"bootDevice\":{\"device\":\"pxe\",\"persistent\":true}}]");
	wait_cond(STORE_KIND_TASK, "j4-task-0", "Failed", "True", m, sizeof(m));
	ck_assert_str_eq(m, "boot device set to pxe (one time, EFI), but the BMC reads back bios "
			    "(one time, EFI)");
	wait_cond(STORE_KIND_JOB, "j4", "Failed", "True", m, sizeof(m));
	wait_cond(STORE_KIND_TASK, "j5-task-0", "Completed", "True", m, sizeof(m));
	ck_assert_msg(strstr(m, "not verifiable: the BMC does not report its boot device"), "%s",
		      m);
	wait_cond(STORE_KIND_JOB, "j5", "Completed", "True", m, sizeof(m));
}
END_TEST

START_TEST(test_task_timeout)
{
	char m[512];
	sim_add("10.0.1.6", BMC_POWER_ON)->silent = true;
	secret("creds", true);
	machine("n6", "10.0.1.6", NULL);
	start(0, 1);
	job("j6", "n6", "[{\"powerAction\":\"cycle\"}]");
	wait_cond(STORE_KIND_TASK, "j6-task-0", "Failed", "True", m, sizeof(m));
	ck_assert_msg(strstr(m, "bmc task timeout after 1 s"), "%s", m);
	wait_cond(STORE_KIND_JOB, "j6", "Failed", "True", m, sizeof(m));
}
END_TEST

START_TEST(test_max_jobs)
{
	char m[512], name[32], host[32];
	secret("creds", true);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		snprintf(host, sizeof(host), "10.0.2.%d", i);
		sim_add(host, BMC_POWER_ON)->lag = 3;
		machine(name, host, NULL);
	}
	start(2, 0);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "job%d", i);
		snprintf(host, sizeof(host), "p%d", i);
		job(name, host, "[{\"powerAction\":\"off\"},{\"powerAction\":\"on\"}]");
	}
	/* a second Job for p0: after the first, never interleaved */
	job("job0b", "p0", "[{\"powerAction\":\"off\"},{\"powerAction\":\"on\"}]");
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "job%d", i);
		wait_cond(STORE_KIND_JOB, name, "Completed", "True", m, sizeof(m));
	}
	wait_cond(STORE_KIND_JOB, "job0b", "Completed", "True", m, sizeof(m));
	pthread_mutex_lock(&sim.mu);
	ck_assert_uint_le(sim.max_active, 2);
	ck_assert_uint_ge(sim.max_active, 1);
	ck_assert_str_eq(sim_find("10.0.2.0")->log, "off,on,off,on");
	for (size_t i = 0; i < sim.n; i++)
		ck_assert(!sim.b[i].interleaved);
	pthread_mutex_unlock(&sim.mu);
}
END_TEST

START_TEST(test_desired_power)
{
	char m[512];
	struct sim_bmc *b = sim_add("10.0.3.1", BMC_POWER_OFF);
	sim_add("10.0.3.2", BMC_POWER_OFF);
	secret("creds", true);
	machine("d1", "10.0.3.1", "A,\"annotations\":{\"bmc.ironbell.dev/desired-power\":\"on\"}");
	machine("d2", "10.0.3.2",
		"A,\"annotations\":{\"bmc.ironbell.dev/desired-power\":\"maybe\"}");
	start(0, 0);
	wait_power("d1", "on");
	/* drift: restored again */
	pthread_mutex_lock(&sim.mu);
	b->power = b->target = BMC_POWER_OFF;
	pthread_mutex_unlock(&sim.mu);
	for (int i = 0; i < WAIT_TURNS; i++) {
		reasons("d1", m, sizeof(m));
		if (!strcmp(m,
			    "PowerRestored,PowerChanged,PowerChanged,PowerRestored,PowerChanged"))
			break;
		nap();
	}
	ck_assert_str_eq(m, "PowerRestored,PowerChanged,PowerChanged,PowerRestored,PowerChanged");
	pthread_mutex_lock(&sim.mu);
	ck_assert_int_eq(b->power, BMC_POWER_ON);
	pthread_mutex_unlock(&sim.mu);
	/* a Job turns it off: on again when the Job ends */
	job("jd", "d1", "[{\"powerAction\":\"off\"}]");
	wait_cond(STORE_KIND_JOB, "jd", "Completed", "True", m, sizeof(m));
	for (int i = 0; i < WAIT_TURNS; i++) {
		pthread_mutex_lock(&sim.mu);
		bool on = b->power == BMC_POWER_ON;
		pthread_mutex_unlock(&sim.mu);
		if (on)
			break;
		nap();
	}
	pthread_mutex_lock(&sim.mu);
	ck_assert_str_eq(b->log, "on,on,off,on");
	ck_assert_int_eq(sim_find("10.0.3.2")->power, BMC_POWER_OFF);
	pthread_mutex_unlock(&sim.mu);
	wait_cond(STORE_KIND_MACHINE, "d2", "Contactable", "True", m, sizeof(m));
	for (int i = 0; i < WAIT_TURNS; i++) {
		reasons("d2", m, sizeof(m));
		if (strstr(m, "DesiredPowerInvalid"))
			break;
		nap();
	}
	ck_assert_str_eq(m, "DesiredPowerInvalid");
}
END_TEST

static void task_obj(const char *name, const char *action, const char *host)
{
	char j[1024];
	snprintf(j, sizeof(j),
		 "{\"apiVersion\":\"bmc.tinkerbell.org/v1alpha1\",\"kind\":\"Task\","
		 "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"task\":%s,\"connection\":{"
		 "\"host\":\"%s\",\"authSecretRef\":{\"name\":\"creds\"}}}}",
		 name, action, host);
	create(STORE_KIND_TASK, j);
}

/* Tasks made by hand run too, with their events on themselves; a Task
 * that was running when the daemon stopped fails at start, and so does
 * its Job. */
START_TEST(test_tasks_by_hand_and_restart)
{
	char m[512];
	json_t *ev = NULL;
	sim_add("10.0.5.1", BMC_POWER_ON);
	secret("creds", true);
	machine("r1", "10.0.5.1", NULL);
	task_obj("status", "{\"powerAction\":\"status\"}", "10.0.5.1");
	task_obj("media",
		 "{\"virtualMediaAction\":{\"mediaURL\":\"http://x/a.iso\","
		 "\"kind\":\"CD\"}}",
		 "10.0.5.1");
	/* a Job whose first Task was running before a restart */
	job("jr", "r1", "[{\"powerAction\":\"off\"},{\"powerAction\":\"on\"}]");
	create(STORE_KIND_TASK,
	       "{\"apiVersion\":\"bmc.tinkerbell.org/v1alpha1\",\"kind\":\"Task\","
	       "\"metadata\":{\"name\":\"jr-task-0\",\"labels\":{\"owner-name\":\"jr\"}},"
	       "\"spec\":{\"task\":{\"powerAction\":\"off\"},\"connection\":{\"host\":"
	       "\"10.0.5.1\"}}}");
	json_t *body = json_pack("{s:{s:s}}", "status", "startTime", "2026-01-01T00:00:00Z");
	struct store_op op = { .type = STORE_OP_STATUS_PATCH,
			       .kind = STORE_KIND_TASK,
			       .namespace_ = "default",
			       .name = "jr-task-0",
			       .body = body };
	ck_assert_int_eq(store_write1(st, &op), 0);
	store_op_clear(&op);
	json_decref(body);
	start(0, 0);
	wait_cond(STORE_KIND_TASK, "status", "Completed", "True", m, sizeof(m));
	ck_assert_str_eq(m, "power is on");
	wait_cond(STORE_KIND_TASK, "media", "Failed", "True", m, sizeof(m));
	ck_assert_str_eq(m,
			 "virtual media insert: no provider can do it: ipmitool: cannot do this");
	wait_cond(STORE_KIND_TASK, "jr-task-0", "Failed", "True", m, sizeof(m));
	ck_assert_str_eq(m, "interrupted by a restart");
	wait_cond(STORE_KIND_JOB, "jr", "Failed", "True", m, sizeof(m));
	ck_assert_msg(strstr(m, "task jr-task-0 failed: interrupted by a restart"), "%s", m);
	ck_assert_ptr_null(get(STORE_KIND_TASK, "jr-task-1"));
	store_sync(st);
	ck_assert_int_eq(store_events(rd, 0, STORE_KIND_TASK, "default", "status", 100, &ev), 0);
	ck_assert_uint_eq(json_array_size(ev), 2);
	json_decref(ev);
	pthread_mutex_lock(&sim.mu);
	ck_assert_str_eq(sim_find("10.0.5.1")->log, "");
	pthread_mutex_unlock(&sim.mu);
	assert_no_password();
}
END_TEST

/* preferredOrder first ("gofish" is Redfish), then the rest; the next
 * provider when one cannot reach the BMC; ports and cipher suite as the
 * Machine says. */
START_TEST(test_provider_order)
{
	char m[512];
	sim_add("10.0.6.1", BMC_POWER_ON);
	sim_add("10.0.6.2", BMC_POWER_ON)->fail_rf = BMC_FAIL_NETWORK;
	struct sim_bmc *b3 = sim_add("10.0.6.3", BMC_POWER_ON);
	b3->fail_rf = BMC_FAIL_NETWORK;
	b3->fail = BMC_FAIL_AUTH;
	sim_add("10.0.6.4", BMC_POWER_OFF);
	sim_add("10.0.6.5", BMC_POWER_OFF);
	secret("creds", true);
	machine("o1", "10.0.6.1",
		"C,\"providerOptions\":{\"preferredOrder\":[\"GoFish\"],"
		"\"redfish\":{\"port\":8443}}");
	machine("o2", "10.0.6.2",
		"C,\"providerOptions\":{\"preferredOrder\":[\"gofish\",\"ipmitool\"]}");
	machine("o3", "10.0.6.3",
		"C,\"providerOptions\":{\"preferredOrder\":[\"openbmc\","
		"\"gofish\"]}");
	machine("o4", "10.0.6.4",
		"C,\"port\":6230,\"providerOptions\":{\"ipmitool\":{\"cipherSuite\":\"17\"}}");
	task_obj("media", "{\"virtualMediaAction\":{\"mediaURL\":\"\",\"kind\":\"CD\"}}",
		 "10.0.6.5");
	start_with(0, 0, true);
	wait_cond(STORE_KIND_TASK, "media", "Completed", "True", m, sizeof(m));
	ck_assert_str_eq(m, "virtual media eject: done");
	wait_power("o1", "on");
	wait_power("o2", "on");
	wait_power("o4", "off");
	wait_cond(STORE_KIND_MACHINE, "o3", "Contactable", "False", m, sizeof(m));
	ck_assert_str_eq(m, "redfish: GET /redfish/v1: HTTP 503; ipmitool: RAKP 2: unauthorized "
			    "name (status 0x0d)");
	pthread_mutex_lock(&sim.mu);
	ck_assert_str_eq(sim_find("10.0.6.1")->provider, "redfish");
	ck_assert_uint_eq(sim_find("10.0.6.1")->port, 8443);
	ck_assert_str_eq(sim_find("10.0.6.2")->provider, "ipmitool");
	ck_assert_uint_eq(sim_find("10.0.6.2")->port, 623);
	ck_assert_str_eq(sim_find("10.0.6.4")->provider, "ipmitool");
	ck_assert_uint_eq(sim_find("10.0.6.4")->port, 6230);
	ck_assert_uint_eq(sim_find("10.0.6.4")->cipher, 17);
	ck_assert_str_eq(sim_find("10.0.6.5")->log, "media");
	ck_assert_str_eq(sim_find("10.0.6.5")->provider, "redfish");
	pthread_mutex_unlock(&sim.mu);
}
END_TEST

/* A thousand Machines on one thread: each polled once and written, in a
 * few store writes; their statuses listed until every one is there. */
START_TEST(test_many_machines)
{
	enum {
		N = 1000
	};
	static struct store_op ops[N];
	char name[32];
	secret("creds", true);
	sim_add("10.0.7.1", BMC_POWER_ON);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "many-%04d", i);
		ops[i] = (struct store_op){
			.type = STORE_OP_CREATE,
			.kind = STORE_KIND_MACHINE,
			.no_object = true,
			.body = json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:{s:s}}}}", "apiVersion",
					  "bmc.tinkerbell.org/v1alpha1", "kind", "Machine",
					  "metadata", "name", name, "spec", "connection", "host",
					  "10.0.7.1", "authSecretRef", "name", "creds"),
		};
	}
	ck_assert_int_eq(store_write(st, ops, N, true), 0);
	for (int i = 0; i < N; i++) {
		json_decref(ops[i].body);
		store_op_clear(&ops[i]);
	}
	uint64_t t0 = now_mono_ns();
	start(0, 0);
	size_t ok = 0;
	for (int turn = 0; turn < WAIT_TURNS && ok < N; turn++) {
		json_t *items = NULL, *o;
		size_t i;
		ok = 0;
		ck_assert_int_eq(store_list(rd, STORE_KIND_MACHINE, NULL, NULL, &items, NULL), 0);
		json_array_foreach (items, i, o)
			ok += cond(o, "Contactable", "True") != NULL;
		json_decref(items);
		if (ok < N)
			nap();
	}
	ck_assert_uint_eq(ok, N);
	/* for the record, not asserted */
	fprintf(stderr, "# %d Machines polled and written in %.0f ms\n", N,
		(double)(now_mono_ns() - t0) / 1e6);
}
END_TEST

/* The Secret as kubectl writes it (stringData), and values that cannot be
 * credentials: each named, never shown. */
START_TEST(test_creds)
{
	struct bmc_endpoint ep = { 0 };
	char err[256] = "", big[400];
	create(STORE_KIND_SECRET, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
				  "{\"name\":\"plain\"},\"stringData\":{\"username\":\"root\","
				  "\"password\":\"" PASSWORD "\"}}");
	ck_assert_int_eq(bmc_creds_read(rd, "default", "plain", &ep, err, sizeof(err)), 0);
	ck_assert_str_eq(ep.user, "root");
	ck_assert_str_eq(ep.password, PASSWORD);
	/* a 150-byte password: longer than an endpoint holds */
	snprintf(big, sizeof(big),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
		 "\"big\"},\"data\":{\"username\":\"YWRtaW4=\",\"password\":\"%.*s\"}}",
		 200,
		 "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"
		 "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"
		 "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB");
	create(STORE_KIND_SECRET, big);
	memset(&ep, 0, sizeof(ep));
	ck_assert_int_eq(bmc_creds_read(rd, "default", "big", &ep, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "secret default/big: key \"password\" is longer than 127 bytes");
	ck_assert_str_eq(ep.password, "");
	ck_assert_int_eq(bmc_creds_read(rd, "other", "plain", &ep, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "secret other/plain not found");
}
END_TEST

START_TEST(test_engine_unavailable)
{
	char m[512];
	engine_fails = true;
	secret("creds", true);
	machine("u1", "10.0.4.1", NULL);
	start(0, 0);
	wait_cond(STORE_KIND_MACHINE, "u1", "Contactable", "False", m, sizeof(m));
	ck_assert_str_eq(m, "provider ipmitool unavailable: cannot bind 0.0.0.0:623: permission "
			    "denied; provider redfish unavailable: the redfish engine is not built "
			    "yet");
}
END_TEST

/* The wait between a Machine's polls stays within a tenth of the
 * interval either way, and the draws cover that range, so that Machines
 * made together drift apart instead of polling in the same instant. */
START_TEST(test_poll_delay)
{
	uint32_t rng = 12345;
	uint64_t lo = UINT64_MAX, hi = 0;

	for (int i = 0; i < 10000; i++) {
		uint64_t d = bmc_poll_delay_ms(30, &rng);
		ck_assert_uint_ge(d, 27000);
		ck_assert_uint_le(d, 33000);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	ck_assert_uint_lt(lo, 27300);
	ck_assert_uint_gt(hi, 32700);
	rng = 0; /* a zero state still moves */
	uint64_t a = bmc_poll_delay_ms(1, &rng), b = bmc_poll_delay_ms(1, &rng);
	ck_assert_uint_ne(rng, 0);
	ck_assert(a >= 900 && a <= 1100 && b >= 900 && b <= 1100);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bmc");
	TCase *tc = tcase_create("controllers");
	tcase_add_checked_fixture(tc, bmc_setup, bmc_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_machine_polled);
	tcase_add_test(tc, test_machine_unreachable);
	tcase_add_test(tc, test_machine_secret_missing);
	tcase_add_test(tc, test_job_in_order);
	tcase_add_test(tc, test_kube_objects);
	tcase_add_test(tc, test_job_task_fails);
	tcase_add_test(tc, test_job_machine_missing);
	tcase_add_test(tc, test_task_deleted_job_goes_on);
	tcase_add_test(tc, test_job_deleted_task_running);
	tcase_add_test(tc, test_job_made_again);
	tcase_add_test(tc, test_job_takes_cluster_uid);
	tcase_add_test(tc, test_power_verified);
	tcase_add_test(tc, test_boot_readback);
	tcase_add_test(tc, test_task_timeout);
	tcase_add_test(tc, test_max_jobs);
	tcase_add_test(tc, test_desired_power);
	tcase_add_test(tc, test_engine_unavailable);
	tcase_add_test(tc, test_tasks_by_hand_and_restart);
	tcase_add_test(tc, test_provider_order);
	tcase_add_test(tc, test_many_machines);
	suite_add_tcase(s, tc);
	TCase *tb = tcase_create("credentials");
	tcase_add_test(tb, test_poll_delay);
	tcase_add_checked_fixture(tb, setup, teardown);
	tcase_add_test(tb, test_creds);
	suite_add_tcase(s, tb);
	return unit_run(s);
}
