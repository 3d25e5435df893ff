/* agent — ironbell-agent, the worker that runs a workflow's actions on the
 * machine being provisioned: it asks the server for an action
 * (proto.WorkflowService/GetAction, common/tink.proto), reports it
 * RUNNING, runs it with a runtime (docker: the Docker Engine API; host:
 * the command itself) and reports how it ended. This header is the part's
 * one public header: its settings, the pure helpers the tests drive
 * (the kernel command line, durations, the reboot detection, the Docker
 * Engine's HTTP responses) and the entry point main.c calls. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- settings ---- */

#define AGENT_ID_MAX 256
#define AGENT_AUTHORITY_MAX 256
#define AGENT_PATH_MAX 108 /* sun_path */
#define AGENT_DOWN_MAX 1024
/* tink-agent's default list of the images and commands that take the
 * machine down (a comma-separated list of suffixes and commands). */
#define AGENT_DOWN_DEFAULT "/kexec,/reboot,reboot,poweroff,halt,kexec -e"

enum agent_runtime {
	AGENT_RUNTIME_DOCKER,
	AGENT_RUNTIME_HOST,
	AGENT_RUNTIME_MAX
};

struct agent_settings {
	char id[AGENT_ID_MAX];               /* worker_id: the MAC or the name */
	char authority[AGENT_AUTHORITY_MAX]; /* host:port of the server */
	bool tls;                            /* TLS with ALPN h2, else h2c */
	bool insecure_tls;                   /* do not verify the certificate */
	enum agent_runtime runtime;
	char docker_socket[AGENT_PATH_MAX];
	char syslog[AGENT_AUTHORITY_MAX]; /* host:port, "" for none */
	uint64_t max_backoff_ms;          /* the cap of every backoff */
	uint64_t heartbeat_ms;            /* RUNNING re-sent this often */
	bool once;                        /* exit when the workflow is over */
	bool privileged;                  /* docker: run containers privileged */
	char down[AGENT_DOWN_MAX];        /* see agent_is_down() */
	int verbose;
};

/* Fills s with the defaults (runtime docker, /var/run/docker.sock, 5 s
 * backoff cap, 10 s heartbeat, privileged, AGENT_DOWN_DEFAULT). */
void agent_settings_init(struct agent_settings *s);

/* ---- the kernel command line (agent/cmdline.c) ---- */

/* The largest command line read, and the longest value kept. */
#define AGENT_CMDLINE_MAX 65536
#define AGENT_CMDLINE_VALUE_MAX 255

/* What HookOS puts on the kernel command line for tink-agent: worker_id=,
 * grpc_authority=, tinkerbell_tls=, tinkerbell_insecure_tls=,
 * syslog_host=. A value not there is "" (a bool: -1). */
struct agent_cmdline {
	char worker_id[AGENT_CMDLINE_VALUE_MAX + 1];
	char grpc_authority[AGENT_CMDLINE_VALUE_MAX + 1];
	char syslog_host[AGENT_CMDLINE_VALUE_MAX + 1];
	int tls;
	int insecure_tls;
};

/* Parses a kernel command line of n bytes (untrusted: whatever the boot
 * loader was given): parameters separated by blanks, key=value, a value
 * in double quotes may hold blanks, as the kernel's next_arg() reads
 * them. Other keys are skipped. Booleans are Go's strconv.ParseBool's
 * (1 t T TRUE true True, 0 f F FALSE false False; empty: unset, as a
 * key with no value is, e.g. "syslog_host="). 0 with *ret filled,
 * -E2BIG when n is over AGENT_CMDLINE_MAX, -EBADMSG for a control byte
 * or an unterminated quote, -ENAMETOOLONG when a known key's value is
 * over AGENT_CMDLINE_VALUE_MAX, -EINVAL for a bad boolean. */
int agent_cmdline_parse(const char *p, size_t n, struct agent_cmdline *ret);

/* ---- pure helpers (agent/util.c) ---- */

/* Formats ns as Go's time.Duration.String() does, which is what
 * tink-agent reports as execution_duration: "0s", "1.5s", "1m2s",
 * "1h0m0s", "250ms", "3µs", "7ns". out holds 32 bytes. Returns out. */
#define AGENT_DURATION_MAX 32
char *agent_duration_format(uint64_t ns, char out[AGENT_DURATION_MAX]);

/* Whether an action takes the machine down before it could report (so it
 * is reported SUCCESS before it runs). list is comma-separated: an entry
 * starting with '/' is an image-name suffix (matched with the tag
 * removed: "quay.io/tinkerbell/actions/kexec:v1" ends in "/kexec");
 * another entry is a command (command[0]'s basename, then the next words
 * when the entry has several: "kexec -e"). A waitdaemon image
 * (".../waitdaemon") is judged by its IMAGE= environment variable. For
 * the host runtime the command is also looked at through "sh -c CMD".
 * Commands are matched only when host is true (the host runtime runs the
 * command itself; in an image a "reboot" may be anything). image may be
 * "" and cmd may be empty. */
bool agent_is_down(const char *list, bool host, const char *image, char *const *cmd, size_t ncmd,
		   char *const *env, size_t nenv);

/* ---- the Docker Engine's HTTP/1.1 responses (agent/http.c) ---- */

#define AGENT_HTTP_HEAD_MAX 16384
#define AGENT_HTTP_BODY_MAX (4u << 20)

struct agent_http_head {
	int status;             /* 100..599 */
	bool chunked;           /* Transfer-Encoding: chunked */
	int64_t content_length; /* -1 when absent */
	size_t head_len;        /* bytes up to and with the blank line */
};

/* Parses a response's status line and headers from the n bytes at p.
 * 0 with *ret filled, -EAGAIN when the blank line has not come yet (and
 * n is under AGENT_HTTP_HEAD_MAX), -EMSGSIZE when the head is longer,
 * -EBADMSG when malformed (status line, a header without ':', a bad or
 * repeated Content-Length, a control byte). */
int agent_http_head_parse(const uint8_t *p, size_t n, struct agent_http_head *ret);

/* The chunked decoder's state (RFC 9112 §7.1). */
struct agent_http_chunked {
	int state;
	uint64_t left;
	unsigned digits;
};

/* Decodes chunked data in place: consumes the n bytes at p, moving the
 * payload to the front of p; *ret_out is the payload length. Returns 1
 * when the last chunk (and the trailers) has been read, 0 when more is
 * needed, -EBADMSG when malformed (a size over 16 hex digits or
 * AGENT_HTTP_BODY_MAX, a missing CRLF). Chunk extensions and trailer
 * fields are skipped. */
int agent_http_chunked_feed(struct agent_http_chunked *c, uint8_t *p, size_t n, size_t *ret_out);

/* The Docker Engine's multiplexed log stream (a container without a
 * TTY): frames of an 8-byte header (stream 0, 1 or 2, three zero bytes,
 * a big-endian length) and the payload. */
struct agent_mux {
	uint8_t hdr[8];
	size_t hdr_n;
	uint32_t left;
};

/* Feeds n bytes of the stream; out gets each piece of payload. 0, or
 * -EBADMSG for a header with a stream other than 0-2 or nonzero padding. */
int agent_mux_feed(struct agent_mux *m, const uint8_t *p, size_t n,
		   void (*out)(void *arg, const uint8_t *p, size_t n), void *arg);

/* ---- the program ---- */

/* Runs the agent with s until it is stopped (SIGTERM/SIGINT) or, with
 * s->once, until the workflow it was running is over. Returns the exit
 * status (0, or 1 when the last action failed with --once). */
int agent_run(const struct agent_settings *s);
