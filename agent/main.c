/* main — ironbell-agent's command line: flags first, then tink-agent's
 * environment variables, then what HookOS put on the kernel command line
 * for tink-agent (/proc/cmdline, or --cmdline FILE for tests), each for
 * whatever the ones before left unset.
 *
 * DESIGN: the program is installed in sbin: it runs as root at boot (it
 * reboots, writes disks and drives the Docker Engine), never as a user's
 * command. The settings are filled here once and then only read. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent-internal.h"
#include "common/num.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ironbell-agent [--id WORKER_ID] [--tinkerbell-grpc-authority HOST:PORT]\n"
		"       [--tinkerbell-tls] [--tinkerbell-insecure-tls] [--runtime docker|host]\n"
		"       [--docker-socket PATH] [--no-privileged] [--syslog HOST:PORT]\n"
		"       [--max-backoff SECONDS] [--heartbeat SECONDS] [--down LIST] [--cmdline FILE]\n"
		"       [--once] [-v]\n");
}

static void on_signal(int sig)
{
	agent_stop = 1;
}

static int copy_opt(char *dst, size_t cap, const char *v, const char *name)
{
	if (strlen(v) >= cap) {
		fprintf(stderr, "ironbell-agent: %s: too long (at most %zu bytes)\n", name,
			cap - 1);
		return -1;
	}
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* Reads the kernel command line into c. 0, or -1 (said why). */
static int read_cmdline(const char *path, struct agent_cmdline *c)
{
	static char buf[AGENT_CMDLINE_MAX + 1];
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ironbell-agent: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (n < sizeof(buf)) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	int e = agent_cmdline_parse(buf, n, c);
	if (e < 0) {
		fprintf(stderr, "ironbell-agent: %s: %s\n", path, strerror(-e));
		return -1;
	}
	return 0;
}

/* The kernel command line's settings for what is still unset in s. 0,
 * or -1 when it cannot be read (said why). */
static int cmdline_settings(const char *path, struct agent_settings *s, bool tls_set,
			    bool insecure_set)
{
	struct agent_cmdline c;
	if (read_cmdline(path, &c) < 0)
		return -1;
	if (!s->id[0])
		memcpy(s->id, c.worker_id, sizeof(c.worker_id));
	if (!s->authority[0])
		memcpy(s->authority, c.grpc_authority, sizeof(c.grpc_authority));
	if (!s->syslog[0] && c.syslog_host[0]) {
		/* HookOS passes an address; syslog's port is 514. */
		bool port = c.syslog_host[0] == '[' ? strstr(c.syslog_host, "]:") != NULL :
						      strchr(c.syslog_host, ':') != NULL;
		size_t hl = strlen(c.syslog_host);
		memcpy(s->syslog, c.syslog_host, hl + 1);
		if (!port && hl + 5 <= sizeof(s->syslog))
			memcpy(s->syslog + hl, ":514", 5);
	}
	if (!tls_set && c.tls >= 0)
		s->tls = c.tls;
	if (!insecure_set && c.insecure_tls >= 0)
		s->insecure_tls = c.insecure_tls;
	return 0;
}

/* tink-agent's environment variables, as HookOS sets them for its
 * container: for what the flags left unset. 0, or -1 (said why). */
static int env_settings(struct agent_settings *s, bool *tls_set, bool *insecure_set)
{
	const char *v;
	struct agent_cmdline c;
	char b[80];
	if (!s->id[0] && (((v = getenv("WORKER_ID")) && *v) || ((v = getenv("ID")) && *v)) &&
	    copy_opt(s->id, sizeof(s->id), v, "WORKER_ID") < 0)
		return -1;
	if (!s->authority[0] && (v = getenv("TINKERBELL_GRPC_AUTHORITY")) && *v &&
	    copy_opt(s->authority, sizeof(s->authority), v, "TINKERBELL_GRPC_AUTHORITY") < 0)
		return -1;
	/* The booleans through the command line's parser: one set of rules. */
	if (!*tls_set && (v = getenv("TINKERBELL_TLS")) && *v) {
		snprintf(b, sizeof(b), "tinkerbell_tls=%.40s", v);
		if (agent_cmdline_parse(b, strlen(b), &c) == 0 && c.tls >= 0) {
			s->tls = c.tls;
			*tls_set = true;
		}
	}
	if (!*insecure_set && (v = getenv("TINKERBELL_INSECURE_TLS")) && *v) {
		snprintf(b, sizeof(b), "tinkerbell_insecure_tls=%.40s", v);
		if (agent_cmdline_parse(b, strlen(b), &c) == 0 && c.insecure_tls >= 0) {
			s->insecure_tls = c.insecure_tls;
			*insecure_set = true;
		}
	}
	return 0;
}

/* The flags into s (filled with the defaults first). 0, 1 after --help,
 * or -1 (said why). */
static int parse_flags(int argc, char **argv, struct agent_settings *s, const char **cmdline,
		       bool *tls_set, bool *insecure_set)
{
	enum {
		O_TLS = 256,
		O_INSECURE,
		O_RUNTIME,
		O_SOCKET,
		O_SYSLOG,
		O_BACKOFF,
		O_ONCE,
		O_CMDLINE,
		O_NOPRIV,
		O_DOWN,
		O_HEARTBEAT
	};
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "tinkerbell-grpc-authority", required_argument, NULL, 'a' },
		{ "tinkerbell-tls", no_argument, NULL, O_TLS },
		{ "tinkerbell-insecure-tls", no_argument, NULL, O_INSECURE },
		{ "runtime", required_argument, NULL, O_RUNTIME },
		{ "docker-socket", required_argument, NULL, O_SOCKET },
		{ "no-privileged", no_argument, NULL, O_NOPRIV },
		{ "syslog", required_argument, NULL, O_SYSLOG },
		{ "max-backoff", required_argument, NULL, O_BACKOFF },
		{ "heartbeat", required_argument, NULL, O_HEARTBEAT },
		{ "down", required_argument, NULL, O_DOWN },
		{ "cmdline", required_argument, NULL, O_CMDLINE },
		{ "once", no_argument, NULL, O_ONCE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int o;
	agent_settings_init(s);
	while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (o) {
		case 'i':
			if (copy_opt(s->id, sizeof(s->id), optarg, "--id") < 0)
				return -1;
			break;
		case 'a':
			if (copy_opt(s->authority, sizeof(s->authority), optarg,
				     "--tinkerbell-grpc-authority") < 0)
				return -1;
			break;
		case O_TLS: s->tls = *tls_set = true; break;
		case O_INSECURE: s->insecure_tls = *insecure_set = true; break;
		case O_RUNTIME:
			if (strcmp(optarg, "docker") == 0)
				s->runtime = AGENT_RUNTIME_DOCKER;
			else if (strcmp(optarg, "host") == 0)
				s->runtime = AGENT_RUNTIME_HOST;
			else {
				fprintf(stderr, "ironbell-agent: --runtime: docker or host\n");
				return -1;
			}
			break;
		case O_SOCKET:
			if (copy_opt(s->docker_socket, sizeof(s->docker_socket), optarg,
				     "--docker-socket") < 0)
				return -1;
			break;
		case O_NOPRIV: s->privileged = false; break;
		case O_SYSLOG:
			if (copy_opt(s->syslog, sizeof(s->syslog), optarg, "--syslog") < 0)
				return -1;
			break;
		case O_BACKOFF:
		case O_HEARTBEAT:
			if (num_parse_u64(optarg, strlen(optarg), 3600, &v) < 0 || v == 0) {
				fprintf(stderr, "ironbell-agent: %s: 1 to 3600 seconds\n",
					o == O_BACKOFF ? "--max-backoff" : "--heartbeat");
				return -1;
			}
			*(o == O_BACKOFF ? &s->max_backoff_ms : &s->heartbeat_ms) = v * 1000;
			break;
		case O_DOWN:
			if (copy_opt(s->down, sizeof(s->down), optarg, "--down") < 0)
				return -1;
			break;
		case O_CMDLINE: *cmdline = optarg; break;
		case O_ONCE: s->once = true; break;
		case 'v': s->verbose++; break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_settings s;
	const char *cmdline = "/proc/cmdline";
	bool tls_set = false, insecure_set = false;
	int r = parse_flags(argc, argv, &s, &cmdline, &tls_set, &insecure_set);
	if (r != 0)
		return r < 0 ? 2 : 0;
	if (env_settings(&s, &tls_set, &insecure_set) < 0)
		return 2;
	if ((!s.id[0] || !s.authority[0] || !tls_set || !insecure_set || !s.syslog[0]) &&
	    cmdline_settings(cmdline, &s, tls_set, insecure_set) < 0 &&
	    (!s.id[0] || !s.authority[0]))
		return 2;
	if (!s.id[0] || !s.authority[0]) {
		fprintf(stderr, "ironbell-agent: no worker ID or server: give --id and "
				"--tinkerbell-grpc-authority, or worker_id= and grpc_authority= "
				"on the kernel command line\n");
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return agent_run(&s);
}
