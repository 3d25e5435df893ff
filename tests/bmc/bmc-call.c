/* bmc-call — drives one of bmc/'s engines (IPMI or Redfish) without the
 * daemon, for the tests and the benchmark: the same calls to one BMC or
 * to many at once, from one thread, as the bmc thread makes them.
 *
 *   bmc-call [options] CMD [ARG...] [+ CMD [ARG...]]...
 *
 * Options:
 *   --provider ipmitool|redfish   the engine (default ipmitool)
 *   --host H                      the BMC (default 127.0.0.1)
 *   --port P                      its port; repeat, or give A-B, for many
 *                                 BMCs on one host (each runs the commands)
 *   --user U, --password-file F   credentials (the password is the file's
 *                                 first line; never an argument, so that
 *                                 it stays out of ps)
 *   --cipher N                    IPMI cipher suite (3, 17)
 *   --insecure, --basic, --system NAME, --ca-file F   Redfish
 *   --timeout-ms N, --retries N   IPMI retransmission; --http-timeout-ms N
 *   --max-connections N           Redfish connections at once
 *   --summary                     last line: "calls=N failed=M seconds=S
 *                                 sessions=K" (sessions still open)
 *
 * Commands, run in order for each BMC, BMCs at once:
 *   power-status | power on|off|soft|cycle|reset |
 *   bootdev pxe|disk|bios|cdrom|safe|http [persistent] [efi] |
 *   bootdev-get | media URL | media-eject | sleep MS
 *
 * One line per call: "PORT CMD ok[ power=on|off|unknown][ boot=DEV
 * persistent=0|1 efi=0|1][ boot=unknown device=DEV]" (the last when the
 * BMC does not mark the boot flags valid; DEV is what it holds) or "PORT CMD fail=REASON message=...". Exit
 * status 0 when every call succeeded, 1 when one failed, 64 for usage. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmc/bmc.h"
#include "bmc/provider.h"

#define MAX_PORTS 4096
#define MAX_STEPS 32
#define DEADLINE_MS 600000u

enum step_kind { STEP_CALL, STEP_SLEEP };
struct step {
	enum step_kind kind;
	const char *name;
	struct bmc_call call;
	unsigned sleep_ms;
};

struct target {
	struct bmc_endpoint ep;
	size_t next;       /* the step to run next */
	uint64_t wake_ms;  /* a sleep step: when it ends; 0 when none */
	bool busy;         /* a call in flight */
};

static struct step steps[MAX_STEPS];
static size_t nsteps;
static const struct bmc_engine_ops *ops;
static void *engine;
static size_t calls, failed;

static const char *power_name(enum bmc_power p)
{
	return p == BMC_POWER_ON ? "on" : p == BMC_POWER_OFF ? "off" : "unknown";
}

static const char *const boot_names[] = { "none", "pxe", "disk", "bios", "cdrom", "safe", "http" };

static void usage(void)
{
	fputs("usage: bmc-call [--provider ipmitool|redfish] [--host H] [--port P|A-B]...\n"
	      "                [--user U] [--password-file F] [--cipher N] [--insecure]\n"
	      "                [--basic] [--system NAME] [--ca-file F] [--timeout-ms N]\n"
	      "                [--retries N] [--http-timeout-ms N] [--max-connections N]\n"
	      "                [--summary]\n"
	      "                CMD [ARG...] [+ CMD [ARG...]]...\n",
	      stderr);
	exit(64);
}

static unsigned num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v > 0xffffffffu)
		usage();
	return (unsigned)v;
}

static int parse_step(char **argv, int argc, struct step *st)
{
	const char *c = argv[0];

	memset(st, 0, sizeof(*st));
	st->kind = STEP_CALL;
	st->name = c;
	if (strcmp(c, "power-status") == 0 && argc == 1) {
		st->call.cmd = BMC_CMD_POWER_GET;
	} else if (strcmp(c, "power") == 0 && argc == 2) {
		static const char *const acts[] = { "on", "off", "soft", "cycle", "reset" };
		size_t i;

		st->call.cmd = BMC_CMD_POWER_SET;
		for (i = 0; i < 5 && strcmp(argv[1], acts[i]) != 0; i++)
			;
		if (i == 5)
			return -1;
		st->call.action = (enum bmc_power_action)i;
	} else if (strcmp(c, "bootdev") == 0 && argc >= 2) {
		size_t i;

		st->call.cmd = BMC_CMD_BOOT_SET;
		for (i = 1; i < 7 && strcmp(argv[1], boot_names[i]) != 0; i++)
			;
		if (i == 7)
			return -1;
		st->call.boot.device = (enum bmc_boot_device)i;
		for (int a = 2; a < argc; a++) {
			if (strcmp(argv[a], "persistent") == 0)
				st->call.boot.persistent = true;
			else if (strcmp(argv[a], "efi") == 0)
				st->call.boot.efi = true;
			else
				return -1;
		}
	} else if (strcmp(c, "bootdev-get") == 0 && argc == 1) {
		st->call.cmd = BMC_CMD_BOOT_GET;
	} else if (strcmp(c, "media") == 0 && argc == 2) {
		st->call.cmd = BMC_CMD_MEDIA_SET;
		if (strlen(argv[1]) >= sizeof(st->call.media_url))
			return -1;
		snprintf(st->call.media_url, sizeof(st->call.media_url), "%s", argv[1]);
	} else if (strcmp(c, "media-eject") == 0 && argc == 1) {
		st->call.cmd = BMC_CMD_MEDIA_SET;
	} else if (strcmp(c, "sleep") == 0 && argc == 2) {
		st->kind = STEP_SLEEP;
		st->sleep_ms = num(argv[1]);
	} else {
		return -1;
	}
	return 0;
}

static void run_next(struct target *t, uint64_t now);

static void done(const struct bmc_reply *r, void *userdata)
{
	struct target *t = userdata;
	const struct step *st = &steps[t->next];

	calls++;
	if (r->fail != BMC_FAIL_NONE) {
		failed++;
		printf("%u %s fail=%s message=%s\n", t->ep.port, st->name, bmc_fail_name(r->fail),
		       r->message);
	} else if (st->call.cmd == BMC_CMD_POWER_GET) {
		printf("%u %s ok power=%s\n", t->ep.port, st->name, power_name(r->power));
	} else if (st->call.cmd == BMC_CMD_BOOT_GET) {
		if (r->boot_known)
			printf("%u %s ok boot=%s persistent=%d efi=%d\n", t->ep.port, st->name,
			       (unsigned)r->boot.device < 7 ? boot_names[r->boot.device] : "?",
			       r->boot.persistent, r->boot.efi);
		else /* what the BMC holds without vouching for it */
			printf("%u %s ok boot=unknown device=%s\n", t->ep.port, st->name,
			       (unsigned)r->boot.device < 7 ? boot_names[r->boot.device] : "?");
	} else {
		printf("%u %s ok\n", t->ep.port, st->name);
	}
	t->busy = false;
	t->next++;
	run_next(t, bmc_now_ms());
}

static void run_next(struct target *t, uint64_t now)
{
	while (t->next < nsteps && !t->busy) {
		const struct step *st = &steps[t->next];

		if (st->kind == STEP_SLEEP) {
			if (t->wake_ms == 0)
				t->wake_ms = now + st->sleep_ms;
			if (now < t->wake_ms)
				return;
			t->wake_ms = 0;
			t->next++;
			continue;
		}
		int rc = ops->submit(engine, &t->ep, &st->call, done, t);
		if (rc < 0) {
			calls++;
			failed++;
			printf("%u %s fail=submit message=%s\n", t->ep.port, st->name,
			       strerror(-rc));
			t->next++;
			continue;
		}
		t->busy = true;
	}
}

static int read_password(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(out, (int)cap, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\r\n")] = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	static struct target targets[MAX_PORTS];
	struct bmc_endpoint ep = { .host = "127.0.0.1" };
	struct bmc_settings set = { 0 };
	size_t ntargets = 0;
	bool summary = false;
	int i;

	ops = &bmc_ipmi_ops;
	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "--summary") == 0) {
			summary = true;
			continue;
		}
		if (strcmp(o, "--insecure") == 0) {
			ep.insecure_tls = true;
			continue;
		}
		if (strcmp(o, "--basic") == 0) {
			ep.basic_auth = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (strcmp(o, "--provider") == 0) {
			if (strcmp(v, "ipmitool") == 0)
				ops = &bmc_ipmi_ops;
			else if (strcmp(v, "redfish") == 0)
				ops = &bmc_redfish_ops;
			else
				usage();
		} else if (strcmp(o, "--host") == 0 && strlen(v) < sizeof(ep.host)) {
			snprintf(ep.host, sizeof(ep.host), "%s", v);
		} else if (strcmp(o, "--port") == 0) {
			const char *dash = strchr(v, '-');
			unsigned lo, hi;

			if (dash) {
				char a[16];

				if ((size_t)(dash - v) >= sizeof(a))
					usage();
				memcpy(a, v, (size_t)(dash - v));
				a[dash - v] = '\0';
				lo = num(a);
				hi = num(dash + 1);
			} else {
				lo = hi = num(v);
			}
			if (lo == 0 || hi > 65535 || lo > hi || ntargets + (hi - lo + 1) > MAX_PORTS)
				usage();
			for (unsigned p = lo; p <= hi; p++)
				targets[ntargets++].ep.port = (uint16_t)p;
		} else if (strcmp(o, "--user") == 0 && strlen(v) < sizeof(ep.user)) {
			snprintf(ep.user, sizeof(ep.user), "%s", v);
		} else if (strcmp(o, "--password-file") == 0) {
			if (read_password(v, ep.password, sizeof(ep.password)) < 0) {
				fprintf(stderr, "bmc-call: %s: %s\n", v, strerror(errno));
				return 64;
			}
		} else if (strcmp(o, "--cipher") == 0) {
			ep.cipher_suite = num(v);
		} else if (strcmp(o, "--system") == 0 && strlen(v) < sizeof(ep.system_name)) {
			snprintf(ep.system_name, sizeof(ep.system_name), "%s", v);
		} else if (strcmp(o, "--ca-file") == 0) {
			set.ca_file = v;
		} else if (strcmp(o, "--timeout-ms") == 0) {
			set.timeout_ms = num(v);
		} else if (strcmp(o, "--retries") == 0) {
			set.retries = num(v);
		} else if (strcmp(o, "--http-timeout-ms") == 0) {
			set.http_timeout_ms = num(v);
		} else if (strcmp(o, "--max-connections") == 0) {
			set.max_connections = num(v);
		} else {
			usage();
		}
	}
	if (ntargets == 0)
		ntargets = 1; /* one BMC on the provider's default port */
	/* The commands, split at "+". */
	while (i < argc) {
		int j = i;

		while (j < argc && strcmp(argv[j], "+") != 0)
			j++;
		if (j == i || nsteps == MAX_STEPS || parse_step(argv + i, j - i, &steps[nsteps]) < 0)
			usage();
		nsteps++;
		i = j + 1;
	}
	if (nsteps == 0)
		usage();

	bmc_settings_default(&set);
	char err[256];
	int rc = ops->new(&set, &engine, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "bmc-call: %s\n", err);
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint64_t start = bmc_now_ms();
	for (size_t t = 0; t < ntargets; t++) {
		uint16_t port = targets[t].ep.port;

		targets[t].ep = ep;
		targets[t].ep.port = port;
		run_next(&targets[t], start);
	}
	/* Every call ends within its engine's retries or timeout; the deadline
	 * bounds the loop should an engine not keep to that. */
	for (;;) {
		uint64_t now = bmc_now_ms();
		bool pending = false;
		int wait = -1;

		if (now - start > DEADLINE_MS) {
			fprintf(stderr, "bmc-call: calls still pending after %u s\n",
				DEADLINE_MS / 1000);
			return 1;
		}

		for (size_t t = 0; t < ntargets; t++) {
			run_next(&targets[t], now);
			if (targets[t].next < nsteps) {
				pending = true;
				if (targets[t].wake_ms) {
					int w = targets[t].wake_ms > now ? (int)(targets[t].wake_ms - now) : 0;
					if (wait < 0 || w < wait)
						wait = w;
				}
			}
		}
		if (!pending)
			break;
		int et = ops->timeout_ms(engine, now);
		if (et >= 0 && (wait < 0 || et < wait))
			wait = et;
		if (wait < 0 || wait > 1000)
			wait = 1000;
		struct pollfd pfd = { .fd = ops->fd(engine), .events = POLLIN };
		poll(&pfd, 1, wait);
		ops->process(engine, bmc_now_ms());
	}
	double secs = (double)(bmc_now_ms() - start) / 1000.0;
	size_t open = ops->sessions(engine);
	ops->free(engine, 2000);
	if (summary)
		printf("calls=%zu failed=%zu seconds=%.3f sessions=%zu\n", calls, failed, secs, open);
	return failed ? 1 : 0;
}
