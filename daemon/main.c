/* ironbelld — main: flags, start-up, signals, systemd notification, reload
 * and stop.
 *
 * DESIGN: the main thread owns the process's life cycle and nothing else.
 * It reads the config (a bad one stops everything before anything is
 * created: exit 78), blocks SIGHUP/SIGTERM/SIGINT before the first thread
 * exists (so every thread inherits the mask and only the signalfd sees
 * them), creates the state directory, opens the store, binds the DHCP
 * sockets when dhcp.enabled (a busy port stops the start) and the
 * listeners' sockets, drops every capability (daemon/privilege.c), starts
 * the listeners (daemon/http/http.c), the BMC thread (bmc/, when
 * bmc.enabled), the workflow controller (workflow/, when
 * workflow.enabled) and the DHCP thread (which loads every
 * Hardware before it returns), and tells systemd READY=1. In Kubernetes
 * mode (kube.enabled) the kubeconfig is read before the privileges go,
 * the watchers start instead of the acting parts (BMC, workflow, worker
 * API), which start when this instance leads (struct acting), and
 * /readyz answers 200 only once every kind has been listed. Then it sleeps in
 * poll() on a signalfd and, when the service manager asks for a watchdog,
 * a timerfd that fires every WATCHDOG_USEC/2:
 *   SIGHUP           RELOADING=1, read the config again; a bad file is
 *                    logged and the old snapshot kept; a good one is
 *                    swapped in whole (the api refcounts snapshots, so a
 *                    request in flight keeps the one it started with),
 *                    the log level applied, and keys that only take
 *                    effect at start are named in a warning; READY=1.
 *   SIGTERM/SIGINT   STOPPING=1, stop the listeners (watch streams end at
 *                    once), close the store (it commits what is queued),
 *                    remove the socket, exit 0.
 * There is no fork: ironbelld always runs in the foreground, which is what
 * systemd's Type=notify wants; --foreground is accepted for compatibility.
 * Command-line overrides (--log-level, --state-dir) are re-applied to each
 * reloaded snapshot. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "bmc/bmc.h"
#include "common/common.h"
#include "daemon/config/conf.h"
#include "daemon/http/http.h"
#include "daemon/public/answers.h"
#include "daemon/public/public.h"
#include "daemon/privilege.h"
#include "daemon/settings.h"
#include "dhcp/dhcp.h"
#include "kube/kube.h"
#include "syslog/syslog.h"
#include "tftp/tftp.h"
#include "store/store.h"
#include "workflow/workflow.h"

#define EXIT_USAGE 2
#define STATE_DIR_MODE 0750
#define DB_NAME "ironbell.db"
#define IB_MMAP_THRESHOLD (128 * 1024) /* glibc's own default, kept fixed */
#define IB_TRIM_THRESHOLD (16 * 1024 * 1024)

struct opts {
	const char *config_path;
	bool check;
	bool have_level;
	enum log_level level;
	const char *state_dir;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ironbelld [OPTIONS]\n"
		"\n"
		"The ironbell provisioning daemon.\n"
		"\n"
		"  -c, --config FILE      configuration file (default %s)\n"
		"  -n, --check            check the configuration and exit\n"
		"      --foreground       run in the foreground (always the case; accepted for\n"
		"                         compatibility)\n"
		"      --log-level LEVEL  error, warn, info or debug (overrides log_level)\n"
		"      --state-dir DIR    where the database lives (overrides state_dir)\n"
		"      --version          print the version and exit\n"
		"  -h, --help             print this help and exit\n",
		CONFIG_DEFAULT_PATH);
}

enum {
	OPT_FOREGROUND = 256,
	OPT_LOG_LEVEL,
	OPT_STATE_DIR,
	OPT_VERSION
};

/* Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "foreground", no_argument, NULL, OPT_FOREGROUND },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .config_path = CONFIG_DEFAULT_PATH };
	while ((c = getopt_long(argc, argv, "c:nh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config_path = optarg; break;
		case 'n': o->check = true; break;
		case OPT_FOREGROUND: break;
		case OPT_LOG_LEVEL:
			if (log_level_parse(optarg, &o->level) < 0) {
				fprintf(stderr, "ironbelld: --log-level: unknown level \"%s\"\n",
					optarg);
				usage(stderr);
				return EXIT_USAGE;
			}
			o->have_level = true;
			break;
		case OPT_STATE_DIR:
			if (!*optarg) {
				fprintf(stderr, "ironbelld: --state-dir: empty path\n");
				return EXIT_USAGE;
			}
			o->state_dir = optarg;
			break;
		case OPT_VERSION: printf("ironbelld %s\n", PACKAGE_VERSION); return EXIT_SUCCESS;
		case 'h': usage(stdout); return EXIT_SUCCESS;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ironbelld: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

/* Reads the config and applies the command-line overrides. */
static int load_config(const struct opts *o, struct ib_config **ret, char *err, size_t errlen)
{
	struct ib_config *c = NULL;
	int e = config_load(o->config_path, &c, err, errlen);
	if (e < 0)
		return e;
	if (o->have_level)
		c->log_level = o->level;
	if (o->state_dir) {
		char *d = strdup(o->state_dir);
		if (!d) {
			config_free(c);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		free(c->state_dir);
		c->state_dir = d;
	}
	*ret = c;
	return 0;
}

/* mkdir -p: the last component gets mode, its missing parents 0755. */
static int make_dir(const char *path, mode_t mode)
{
	char *p = strdup(path);
	int e = 0;
	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			e = -errno;
			goto out;
		}
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		e = -errno;
out:
	free(p);
	return e;
}

static bool str_differs(const char *a, const char *b)
{
	if (!a || !b)
		return a != b;
	return strcmp(a, b) != 0;
}

/* Names, in buf, the keys whose change only a restart applies. */
static void restart_keys(const struct ib_config *a, const struct ib_config *b, struct buf *out)
{
	const struct {
		const char *key;
		bool changed;
	} keys[] = {
		{ "state_dir", str_differs(a->state_dir, b->state_dir) },
		{ "api.socket", str_differs(a->api.socket, b->api.socket) },
		{ "api.listen", str_differs(a->api.listen, b->api.listen) },
		{ "api.tls_cert", str_differs(a->api.tls_cert_pem, b->api.tls_cert_pem) },
		{ "api.tls_key", str_differs(a->api.tls_key_pem, b->api.tls_key_pem) },
		{ "http.listen", str_differs(a->http.listen, b->http.listen) },
		{ "http.threads", a->http.threads != b->http.threads },
		{ "http.pin_threads", a->http.pin_threads != b->http.pin_threads },
		{ "http.idle_timeout", a->http.idle_timeout != b->http.idle_timeout },
		{ "store.changes_retention",
		  a->store.changes_retention != b->store.changes_retention },
		{ "store.events_retention",
		  a->store.events_retention != b->store.events_retention },
		{ "store.batch_max", a->store.batch_max != b->store.batch_max },
		{ "store.commit_delay", a->store.commit_delay != b->store.commit_delay },
		{ "dhcp.enabled", a->dhcp.enabled != b->dhcp.enabled },
		{ "dhcp.mode", a->dhcp.mode != b->dhcp.mode },
		{ "dhcp.interfaces", memcmp(&a->dhcp.interfaces, &b->dhcp.interfaces,
					    sizeof(a->dhcp.interfaces)) != 0 },
		{ "dhcp.server_address", a->dhcp.server_address != b->dhcp.server_address },
		{ "dhcp.public_address", a->dhcp.public_address != b->dhcp.public_address },
		{ "dhcp.tftp_address", a->dhcp.tftp_address != b->dhcp.tftp_address },
		{ "dhcp.http_base_url", str_differs(a->dhcp.http_base_url, b->dhcp.http_base_url) },
		{ "dhcp.syslog_address", a->dhcp.syslog_address != b->dhcp.syslog_address },
		{ "dhcp.lease_time", a->dhcp.lease_time != b->dhcp.lease_time },
		{ "dhcp.lease_reuse", a->dhcp.lease_reuse != b->dhcp.lease_reuse },
		{ "dhcp.arch", memcmp(&a->dhcp.arch, &b->dhcp.arch, sizeof(a->dhcp.arch)) != 0 },
		{ "dhcp.subnet_check", a->dhcp.subnet_check != b->dhcp.subnet_check },
		{ "tftp.enabled", a->tftp.enabled != b->tftp.enabled },
		{ "tftp.listen", str_differs(a->tftp.listen, b->tftp.listen) },
		{ "tftp.max_transfers", a->tftp.max_transfers != b->tftp.max_transfers },
		{ "tftp.blksize_max", a->tftp.blksize_max != b->tftp.blksize_max },
		{ "tftp.windowsize_max", a->tftp.windowsize_max != b->tftp.windowsize_max },
		{ "tftp.timeout", a->tftp.timeout != b->tftp.timeout },
		{ "tftp.retries", a->tftp.retries != b->tftp.retries },
		{ "ipxe.binary_dir (for TFTP)",
		  a->tftp.enabled && str_differs(a->ipxe.binary_dir, b->ipxe.binary_dir) },
		{ "syslog.enabled", a->syslog.enabled != b->syslog.enabled },
		{ "syslog.listen", str_differs(a->syslog.listen, b->syslog.listen) },
		{ "syslog.rate", a->syslog.rate != b->syslog.rate },
		{ "syslog.burst", a->syslog.burst != b->syslog.burst },
		{ "syslog.max_message", a->syslog.max_message != b->syslog.max_message },
		{ "bmc.enabled", a->bmc.enabled != b->bmc.enabled },
		{ "bmc.ipmi.cipher_suite", a->bmc.ipmi.cipher_suite != b->bmc.ipmi.cipher_suite },
		{ "bmc.ipmi.timeout", a->bmc.ipmi.timeout_ms != b->bmc.ipmi.timeout_ms },
		{ "bmc.ipmi.retries", a->bmc.ipmi.retries != b->bmc.ipmi.retries },
		{ "bmc.ipmi.max_sessions", a->bmc.ipmi.max_sessions != b->bmc.ipmi.max_sessions },
		{ "bmc.redfish.timeout", a->bmc.redfish.timeout_ms != b->bmc.redfish.timeout_ms },
		{ "bmc.redfish.max_connections",
		  a->bmc.redfish.max_connections != b->bmc.redfish.max_connections },
		{ "bmc.redfish.ca_file",
		  str_differs(a->bmc.redfish.ca_file, b->bmc.redfish.ca_file) },
		{ "bmc.poll_interval", a->bmc.poll_interval_s != b->bmc.poll_interval_s },
		{ "bmc.task_timeout", a->bmc.task_timeout_s != b->bmc.task_timeout_s },
		{ "bmc.max_jobs", a->bmc.max_jobs != b->bmc.max_jobs },
		{ "bmc.verify_interval", a->bmc.verify_interval_ms != b->bmc.verify_interval_ms },
		/* workflow: */
		{ "workflow.enabled", a->workflow.enabled != b->workflow.enabled },
		{ "workflow.resync_interval", a->workflow.resync_s != b->workflow.resync_s },
		{ "workflow.default_action_timeout",
		  a->workflow.default_action_timeout_s != b->workflow.default_action_timeout_s },
		{ "workflow.action_grace",
		  a->workflow.action_grace_s != b->workflow.action_grace_s },
		{ "workflow.retry_backoff", a->workflow.retry_base_s != b->workflow.retry_base_s },
		{ "workflow.retry_backoff_max",
		  a->workflow.retry_max_s != b->workflow.retry_max_s },
		{ "grpc.enabled", a->grpc.enabled != b->grpc.enabled },
		{ "grpc.listen", str_differs(a->grpc.listen, b->grpc.listen) },
		{ "grpc.tls_cert", str_differs(a->grpc.tls_cert, b->grpc.tls_cert) },
		{ "grpc.tls_key", str_differs(a->grpc.tls_key, b->grpc.tls_key) },
		{ "grpc.max_connections", a->grpc.max_connections != b->grpc.max_connections },
		{ "grpc.max_message", a->grpc.max_message != b->grpc.max_message },
		{ "grpc.max_streams", a->grpc.max_streams != b->grpc.max_streams },
		{ "grpc.long_poll", a->grpc.long_poll_s != b->grpc.long_poll_s },
		{ "grpc.idle_timeout", a->grpc.idle_timeout_s != b->grpc.idle_timeout_s },
	};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (keys[i].changed)
			buf_printf(out, "%s%s", out->len ? ", " : "", keys[i].key);
}

/* The answer cache, made at start and started while http.answer_cache is
 * true (at start, or at the first reload that turns it on): a cache turned
 * off keeps no index of every Hardware. */
static struct answers *answers_made;

static void reload(struct api *api, const struct opts *o)
{
	char err[1024];
	struct ib_config *c = NULL;
	struct buf keys = BUF_INIT(1024);

	sd_notifyf(0, "RELOADING=1\nSTATUS=Reloading %s\nMONOTONIC_USEC=%llu", o->config_path,
		   (unsigned long long)(now_mono_ns() / 1000));
	if (load_config(o, &c, err, sizeof(err)) < 0) {
		log_error("daemon", "reload failed, keeping the running configuration: %s", err);
		goto out;
	}
	const struct ib_config *old = api_config_get(api);
	restart_keys(old, c, &keys);
	api_config_put(api, old);
	log_set_level(c->log_level);
	api_set_config(api, c);
	answers_prebuild_enable(answers_made, c->http.answer_cache && c->http.answer_prebuild);
	answers_set_config(answers_made, c); /* drops the answers made with the old one */
	if (c->http.answer_cache && answers_made && !answers_current() &&
	    answers_start(answers_made, err, sizeof(err)) < 0)
		log_error("daemon", "%s; answering from the store", err);
	if (keys.len)
		log_warn("daemon",
			 "reloaded %s; changed keys that take effect only after a restart: %s",
			 o->config_path, keys.data);
	else
		log_info("daemon", "reloaded %s (log level %s)", o->config_path,
			 log_level_name(log_get_level()));
out:
	buf_free(&keys);
	sd_notify(0, "READY=1\nSTATUS=Running");
}

/* The parts that act (BMC jobs, the workflow controller, the worker API).
 * Standalone they start with the others; in Kubernetes mode when this
 * instance starts leading (kube/, on its elector's thread). Losing the
 * lead stops the daemon with a failure, so that the service manager
 * starts it again as a follower: no controller is ever left half
 * stopped. */
struct acting {
	struct bmc_server *bmc;
	struct wf_server *wf;
	struct wf_grpc *grpc;
	/* In Kubernetes mode with a Lease the worker API binds its port only
	 * when this instance leads: an agent that reaches a follower is
	 * refused at once rather than left waiting. */
	struct store *store;
	const struct wf_grpc_settings *grpc_set; /* when grpc is made late */
	bool started; /* atomic */
	int lost_fd;  /* eventfd: the lead was lost */
	pthread_mutex_t lock; /* a start and the stop, one at a time */
	bool stopping;        /* under lock: nothing starts any more */
};

static int acting_start(struct acting *a, char *err, size_t errlen)
{
	if (a->bmc && bmc_server_start(a->bmc, err, errlen) < 0)
		return -1;
	if (a->wf && wf_server_start(a->wf, err, errlen) < 0)
		return -1;
	if (!a->grpc && a->grpc_set && wf_grpc_new(a->store, a->grpc_set, &a->grpc, err, errlen) < 0)
		return -1;
	if (a->grpc && wf_grpc_start(a->grpc, err, errlen) < 0)
		return -1;
	__atomic_store_n(&a->started, true, __ATOMIC_RELEASE);
	return 0;
}

/* Stops the acting parts, while the Lease is still held: kube_free() then
 * sends back what they changed last, and releases it. None starts after. */
static void acting_stop(struct acting *a)
{
	pthread_mutex_lock(&a->lock);
	a->stopping = true;
	pthread_mutex_unlock(&a->lock);
	wf_grpc_free(a->grpc); /* before the store: its writes in flight complete */
	wf_server_free(a->wf); /* before the store: it writes status, Jobs and events */
	bmc_server_free(a->bmc); /* before the store: it writes status and events */
	a->grpc = NULL;
	a->wf = NULL;
	a->bmc = NULL;
}

static void on_leading(bool leading, void *userdata)
{
	struct acting *a = userdata;
	char err[1024];
	uint64_t one = 1;
	pthread_mutex_lock(&a->lock);
	bool started = __atomic_load_n(&a->started, __ATOMIC_ACQUIRE);
	if (a->stopping) {
		/* The daemon stops: the Lease goes with it, not an error. */
		if (!leading && started)
			log_info("daemon", "stopped leading");
	} else if (leading && !started) {
		log_info("daemon", "leading: the BMC jobs, the workflows and the worker API start");
		if (acting_start(a, err, sizeof(err)) < 0) {
			log_error("daemon", "%s", err);
			if (write(a->lost_fd, &one, sizeof(one)) < 0)
				log_error("daemon", "eventfd: %s", strerror(errno));
		}
	} else if (!leading && started) {
		log_error("daemon", "no longer leading: stopping, to start again as a follower");
		if (write(a->lost_fd, &one, sizeof(one)) < 0)
			log_error("daemon", "eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&a->lock);
}

static bool kube_ready(struct buf *out, void *userdata)
{
	struct kube *k = userdata;
	kube_sync_state(k, out);
	return kube_synced(k);
}

static int watchdog_timer(void)
{
	uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return -1;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -1;
	uint64_t half = usec / 2;
	struct itimerspec its = {
		.it_interval = { .tv_sec = (time_t)(half / 1000000),
				 .tv_nsec = (long)(half % 1000000) * 1000 },
	};
	its.it_value = its.it_interval;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		close(fd);
		return -1;
	}
	sd_notify(0, "WATCHDOG=1");
	return fd;
}

/* Sleeps on signals and the watchdog until asked to stop: 0, or -1 when
 * the lead was lost (lfd readable). */
static int main_loop(struct api *api, const struct opts *o, int sfd, int wfd, int lfd)
{
	for (;;) {
		struct pollfd pfd[3] = { { .fd = sfd, .events = POLLIN },
					 { .fd = lfd, .events = POLLIN },
					 { .fd = wfd, .events = POLLIN } };
		if (poll(pfd, wfd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_error("daemon", "poll: %s", strerror(errno));
			return 0;
		}
		if (pfd[1].revents & POLLIN)
			return -1;
		if (wfd >= 0 && (pfd[2].revents & POLLIN)) {
			uint64_t n;
			if (read(wfd, &n, sizeof(n)) > 0)
				sd_notify(0, "WATCHDOG=1");
		}
		if (!(pfd[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo == SIGHUP) {
			reload(api, o);
		} else {
			log_info("daemon", "stopping on %s", strsignal((int)si.ssi_signo));
			return 0;
		}
	}
}

static void log_start(const struct ib_config *c, const char *db)
{
	log_write(LOG_LVL_INFO, "daemon",
		  LOG_FIELDS({ "CONFIG", c->path }, { "DATABASE", db },
			     { "ADMIN_SOCKET", c->api.socket }, { "ADMIN_LISTEN", c->api.listen },
			     { "HTTP_LISTEN", c->http.listen }),
		  "ironbelld %s started: admin unix:%s%s%s, http %s", PACKAGE_VERSION,
		  c->api.socket, c->api.listen ? " and " : "", c->api.listen ? c->api.listen : "",
		  c->http.listen);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ib_config *cfg = NULL;
	struct store *store = NULL;
	struct api *api = NULL;
	struct answers *answers = NULL;
	struct dhcp_server *dhcp = NULL;
	struct tftp_server *tftp = NULL;
	struct syslog_server *syslogd = NULL;
	struct bmc_server *bmc = NULL;
	struct wf_server *wf = NULL;
	struct wf_grpc *grpc = NULL;
	struct kube *kube = NULL;
	struct acting acting = { .lost_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };
	const struct ib_config *dhcp_cfg = NULL; /* the snapshot DHCP started with */
	struct dhcp_settings dhcp_set;
	struct tftp_settings tftp_set;
	struct syslog_settings syslog_set;
	struct bmc_settings bmc_set;
	struct wf_settings wf_set;
	struct wf_grpc_settings grpc_set;
	struct kube_settings kube_set;
	char err[1024], db[4096];
	int sfd = -1, wfd = -1, status = EXIT_FAILURE;
	sigset_t mask;

	int r = parse_args(argc, argv, &o);
	if (r >= 0)
		return r;
	log_init_auto(o.have_level ? o.level : LOG_LVL_INFO);
	if (load_config(&o, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return CONFIG_EXIT_STATUS;
	}
	if (o.check) {
		printf("config ok\n");
		config_free(cfg);
		return EXIT_SUCCESS;
	}
	log_init_auto(cfg->log_level);
	/* Allocations of IB_MMAP_THRESHOLD bytes or more are mmapped, so a
	 * freed one goes back to the system. glibc otherwise raises the
	 * threshold to the size of each mmapped block freed (up to 32 MiB):
	 * after one large apply, later large buffers (a list's response, the
	 * next body) come from the heap, and stay resident once freed. */
	mallopt(M_MMAP_THRESHOLD, IB_MMAP_THRESHOLD);
	/* No fastbins: the threads that decode and free JSON objects (tens of
	 * thousands of small blocks a second) would otherwise fill them, and
	 * every larger allocation (a row's text, a serialized object) first
	 * consolidates them all (malloc_consolidate, a tenth of the daemon's
	 * CPU under a thousand workflow agents); small blocks still come
	 * from the per-thread cache. */
	mallopt(M_MXFAST, 0);
	/* A heap keeps up to IB_TRIM_THRESHOLD bytes free at its top before
	 * giving pages back. A decoded Hardware's nodes come from jsonmem's
	 * blocks, not the heap, so little else is left in a thread's heap
	 * between requests: at glibc's 128 KiB, a row read from the store
	 * (a few KiB, freed into the top) made the heap shrink, and the next
	 * answer grow it again, a page fault per page, a tenth of the
	 * daemon's CPU in a fleet's crawl. */
	mallopt(M_TRIM_THRESHOLD, IB_TRIM_THRESHOLD);

	/* Before any thread exists, so that all of them inherit the mask. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_error("daemon", "signalfd: %s", strerror(errno));
		goto out;
	}

	if ((r = make_dir(cfg->state_dir, STATE_DIR_MODE)) < 0) {
		log_error("daemon", "cannot create the state directory %s: %s", cfg->state_dir,
			  strerror(-r));
		goto out;
	}
	snprintf(db, sizeof(db), "%s/%s", cfg->state_dir, DB_NAME);
	if (store_open(db, &cfg->store, &store, err, sizeof(err)) < 0) {
		log_error("daemon", "cannot open the store %s: %s", db, err);
		goto out;
	}
	api = api_new(store, cfg);
	cfg = NULL; /* the api's now */
	if (!api) {
		log_error("daemon", "out of memory");
		goto out;
	}
	/* DHCP keeps the settings it starts with: its keys need a restart. */
	dhcp_cfg = api_config_get(api);
	if (dhcp_cfg->dhcp.enabled &&
	    (settings_dhcp(dhcp_cfg, &dhcp_set, err, sizeof(err)) < 0 ||
	     dhcp_server_new(store, &dhcp_set, &dhcp, err, sizeof(err)) < 0)) {
		log_error("daemon", "%s", err);
		goto out;
	}
	/* TFTP too: its socket and root are opened once. */
	settings_tftp(dhcp_cfg, &tftp_set);
	if (dhcp_cfg->tftp.enabled && tftp_server_new(&tftp_set, &tftp, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	settings_syslog(dhcp_cfg, &syslog_set);
	if (dhcp_cfg->syslog.enabled &&
	    syslog_server_new(store, &syslog_set, &syslogd, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	/* The BMC thread: its IPMI socket is an ephemeral UDP port, which
	 * needs no privilege, but an error there stops the start like the
	 * others'. */
	settings_bmc(dhcp_cfg, &bmc_set);
	if (dhcp_cfg->bmc.enabled && bmc_server_new(store, &bmc_set, &bmc, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	/* The workflow controller: no socket, only the store. */
	settings_workflow(dhcp_cfg, &wf_set);
	if (dhcp_cfg->workflow.enabled &&
	    wf_server_new(store, &wf_set, &wf, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	/* The worker API binds its port (and reads its TLS files) here,
	 * before the privileges go. */
	settings_grpc(dhcp_cfg, &grpc_set);
	bool grpc_late = dhcp_cfg->kube.enabled && dhcp_cfg->kube.leader_election;
	if (dhcp_cfg->grpc.enabled && !grpc_late &&
	    wf_grpc_new(store, &grpc_set, &grpc, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	/* Kubernetes mode: the kubeconfig and its files are read here, and a
	 * bad one stops the start. */
	acting = (struct acting){ .bmc = bmc, .wf = wf, .grpc = grpc, .store = store,
				  .grpc_set = dhcp_cfg->grpc.enabled && grpc_late ? &grpc_set : NULL,
				  .lost_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
				  .lock = PTHREAD_MUTEX_INITIALIZER };
	if (acting.lost_fd < 0) {
		log_error("daemon", "eventfd: %s", strerror(errno));
		goto out;
	}
	if (dhcp_cfg->kube.enabled) {
		settings_kube(dhcp_cfg, &kube_set);
		kube_set.leading = on_leading;
		kube_set.userdata = &acting;
		if (kube_new(store, &kube_set, &kube, err, sizeof(err)) < 0) {
			log_error("daemon", "%s", err);
			goto out;
		}
		api_set_ready_check(api, kube_ready, kube);
	}
	/* Every socket is bound now: give up every privilege before the
	 * listeners' and the servers' threads start. */
	const char *keep[] = { dhcp_cfg->state_dir, db, NULL }; /* opened again later */
	if (api_bind(api, err, sizeof(err)) < 0 || privilege_drop(keep, err, sizeof(err)) < 0 ||
	    api_start(api, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	/* The public listener's answer cache, made current for its handlers
	 * (daemon/public/answers.c); freed once the listeners have stopped. */
	const struct ib_config *acfg = api_config_get(api);
	answers = answers_made = answers_new(store, public_answer_free);
	bool cache_on = acfg->http.answer_cache;
	if (answers) {
		answers_set_config(answers, acfg);
		answers_set_prebuild(answers, public_prebuild, api);
		answers_prebuild_enable(answers,
					acfg->http.answer_cache && acfg->http.answer_prebuild);
	}
	api_config_put(api, acfg);
	if (!answers || (cache_on && answers_start(answers, err, sizeof(err)) < 0)) {
		log_error("daemon", "%s", answers ? err : "answer cache: out of memory");
		goto out;
	}
	if (dhcp && dhcp_server_start(dhcp, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	if (tftp && tftp_server_start(tftp, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	if (syslogd && syslog_server_start(syslogd, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	if (!kube && acting_start(&acting, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	if (kube && kube_start(kube, err, sizeof(err)) < 0) {
		log_error("daemon", "%s", err);
		goto out;
	}
	api_set_ready(api, true);
	const struct ib_config *c = api_config_get(api);
	log_start(c, db);
	sd_notifyf(0, "READY=1\nSTATUS=Running: admin unix:%s, http %s", c->api.socket,
		   c->http.listen);
	api_config_put(api, c);
	wfd = watchdog_timer();

	if (main_loop(api, &o, sfd, wfd, acting.lost_fd) == 0)
		status = EXIT_SUCCESS;
	sd_notify(0, "STOPPING=1\nSTATUS=Stopping");
out:
	/* First the parts that act, while the Lease is still held; then the
	 * Lease is released. */
	if (!acting.store) { /* not handed over yet */
		acting.bmc = bmc;
		acting.wf = wf;
		acting.grpc = grpc;
	}
	acting_stop(&acting);
	kube_free(kube);
	/* Before the store closes: DHCP sends the ACKs whose leases are being
	 * committed, and frees its reader. */
	dhcp_server_free(dhcp);
	tftp_server_free(tftp);
	syslog_server_free(syslogd); /* before the store: it queues events */
	if (dhcp_cfg)
		api_config_put(api, dhcp_cfg);
	/* Its prebuild function uses the api: stopped before the api goes. */
	answers_stop(answers);
	api_free(api); /* joins every listener thread: their readers are freed */
	answers_made = NULL;
	answers_free(answers); /* no handler is left to use it */
	public_recent_clear();
	store_close(store);
	config_free(cfg);
	if (sfd >= 0)
		close(sfd);
	if (wfd >= 0)
		close(wfd);
	if (acting.lost_fd >= 0)
		close(acting.lost_fd);
	if (status == EXIT_SUCCESS)
		log_info("daemon", "stopped");
	return status;
}
