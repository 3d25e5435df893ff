/* agent-internal — declarations shared by agent/'s files only. */
#pragma once

#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>

#include "agent/agent.h"

/* Set by SIGTERM/SIGINT (main.c); every wait of the agent checks it. */
extern volatile sig_atomic_t agent_stop;

/* Logging to stderr: level 0 always, 1 with -v, 2 with -vv. */
void agent_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern int agent_verbose;

/* Monotonic and wall-clock time. */
uint64_t agent_mono_ms(void);
uint64_t agent_wall_ns(void);
/* Sleeps ms, cut short by agent_stop. */
void agent_sleep_ms(uint64_t ms);

/* host:port with a numeric IPv4 or [IPv6] address (or "localhost") into
 * *ss. The agent is linked statically, where glibc's resolver cannot
 * load NSS: host names are not resolved. 0 or -EINVAL. */
int agent_addr_parse(const char *hostport, struct sockaddr_storage *ss, socklen_t *len);

/* ---- the gRPC client (agent/client.c) ---- */

/* The largest response message taken. */
#define AGENT_GRPC_MAX (4u << 20)

struct agent_conn;
/* A connection to s->authority (connected on the first call). NULL on
 * failure to allocate. s is borrowed for the connection's lifetime. */
struct agent_conn *agent_conn_new(const struct agent_settings *s);
void agent_conn_free(struct agent_conn *c);
/* One unary call: req (n bytes, the protobuf message without its prefix)
 * to path, with grpc-timeout timeout_ms. Returns the gRPC status code
 * (>= 0; msg gets grpc-message) and, for GRPC_OK, the response message
 * in *ret_body (owned by the connection, valid until the next call) and
 * *ret_len; or a negative errno when the connection failed (it is closed
 * and the next call reconnects). */
int agent_conn_call(struct agent_conn *c, const char *path, const uint8_t *req, size_t n,
		    uint64_t timeout_ms, const uint8_t **ret_body, size_t *ret_len, char *msg,
		    size_t msgcap);

/* ---- running an action ---- */

struct agent_action {
	const char *name;
	const char *image;
	uint64_t timeout_s; /* 0: none */
	char **command;
	size_t ncmd;
	char **env;
	size_t nenv;
	char **volumes;
	size_t nvol;
	const char *pidns;
	const char *netns;
};

enum agent_outcome {
	AGENT_OUT_SUCCESS,
	AGENT_OUT_FAILED,
	AGENT_OUT_TIMEOUT,
	AGENT_OUT_STOPPED
};

/* What a runtime calls back: tick about once a second (nonzero: stop the
 * action, the server ended it), line for each line of output. */
struct agent_hooks {
	void *arg;
	int (*tick)(void *arg);
	void (*line)(void *arg, const char *s, size_t n);
};

/* The grace between SIGTERM (docker stop) and SIGKILL. */
#define AGENT_STOP_GRACE_MS 5000
/* The longest output line passed on; longer ones are cut. */
#define AGENT_LINE_MAX 4096

/* Runs a with the command itself (agent/host.c). Returns the outcome;
 * why holds a short reason ("exit status 2", "killed by signal 9"). */
enum agent_outcome agent_host_run(const struct agent_settings *s, const struct agent_action *a,
				  const struct agent_hooks *h, char *why, size_t whycap);
/* The body of POST /containers/create for a, as tink-agent makes it:
 * Image, Env, Cmd (absent when the action has no command: the image's
 * own), HostConfig.Privileged (s->privileged), Binds (the volumes),
 * PidMode and NetworkMode (the namespaces, absent when empty). A JSON
 * string to free(), or NULL when out of memory. */
char *agent_docker_create_body(const struct agent_settings *s, const struct agent_action *a);
/* Runs a in a container of the Docker Engine (agent/docker.c). */
enum agent_outcome agent_docker_run(const struct agent_settings *s, const struct agent_action *a,
				    const struct agent_hooks *h, char *why, size_t whycap);

/* Splits buffered output into lines: feeds n bytes, calls h->line for
 * each whole line (a line over AGENT_LINE_MAX is passed on in pieces);
 * flush passes on what is left. */
struct agent_lines {
	char buf[AGENT_LINE_MAX];
	size_t n;
};
void agent_lines_feed(struct agent_lines *l, const char *p, size_t n, const struct agent_hooks *h);
void agent_lines_flush(struct agent_lines *l, const struct agent_hooks *h);
