/* docker — the docker runtime: an action run in a container of the Docker
 * Engine, through its API on the unix socket, as tink-agent runs it.
 *
 * DESIGN: a small HTTP/1.1 client of its own (no libcurl in an
 * initramfs): one connection per request, "Connection: close", the
 * response parsed by agent/http.c (the head, Content-Length, chunked, or
 * to the end). The action's steps are tink-agent's: pull the image (5
 * tries; an image already there is used when the pull fails: a machine
 * with no registry still runs what it was given), create the container
 * (Privileged unless --no-privileged, Binds = volumes, PidMode and
 * NetworkMode from the namespaces, Env, Cmd = command), start it, follow
 * its logs (the multiplexed stream, line by line) while calling the tick
 * hook and checking the timeout, then wait for its exit status; on a
 * timeout or a stop, docker stop with a 5 s grace. The container is
 * always removed (force), whatever happened. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/agent-internal.h"

#define DOCKER_API "/v1.41"
#define DOCKER_PULL_TRIES 5
#define DOCKER_PULL_TIMEOUT_MS (30 * 60 * 1000)
#define DOCKER_CALL_TIMEOUT_MS 60000
#define DOCKER_ID_MAX 128

struct hresp {
	int status;
	char *body; /* NUL-terminated, owned */
	size_t len;
};

/* A connected socket to the engine, or a negative errno. */
static int engine_connect(const struct agent_settings *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->docker_socket);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Sends a request; returns the socket, or a negative errno. */
static int request_send(const struct agent_settings *s, const char *method, const char *path,
			const char *body)
{
	char head[2048];
	size_t bl = body ? strlen(body) : 0;
	int fd = engine_connect(s);
	if (fd < 0)
		return fd;
	int hl = snprintf(head, sizeof(head),
			  "%s " DOCKER_API "%s HTTP/1.1\r\nHost: docker\r\n"
			  "User-Agent: ironbell-agent/" PACKAGE_VERSION "\r\nConnection: close\r\n"
			  "%sContent-Length: %zu\r\n\r\n",
			  method, path, body ? "Content-Type: application/json\r\n" : "", bl);
	if (hl < 0 || (size_t)hl >= sizeof(head) || send_all(fd, head, (size_t)hl) < 0 ||
	    (bl && send_all(fd, body, bl) < 0)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* Reads up to cap bytes more into buf[*n] within deadline. Returns the
 * count (0 at the end), -ETIMEDOUT, -EINTR (agent_stop) or -EIO. */
static ssize_t read_some(int fd, uint8_t *buf, size_t cap, uint64_t deadline)
{
	for (;;) {
		uint64_t now = agent_mono_ms();
		if (agent_stop)
			return -EINTR;
		if (now >= deadline)
			return -ETIMEDOUT;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t left = deadline - now;
		int r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
		if (r < 0 && errno != EINTR)
			return -EIO;
		if (r <= 0)
			continue;
		ssize_t n = recv(fd, buf, cap, 0);
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -EIO : n;
	}
}

/* Reads the head into buf (AGENT_HTTP_HEAD_MAX); what came after it is
 * left at buf[0..*extra]. */
static int read_head(int fd, uint8_t *buf, struct agent_http_head *h, size_t *extra,
		     uint64_t deadline)
{
	size_t n = 0;
	for (;;) {
		int e = agent_http_head_parse(buf, n, h);
		if (e == 0)
			break;
		if (e != -EAGAIN)
			return e;
		ssize_t r = read_some(fd, buf + n, AGENT_HTTP_HEAD_MAX - n, deadline);
		if (r <= 0)
			return r == 0 ? -EBADMSG : (int)r;
		n += (size_t)r;
	}
	memmove(buf, buf + h->head_len, n - h->head_len);
	*extra = n - h->head_len;
	return 0;
}

/* The body reader: calls sink for each piece of payload. 0 at the end. */
typedef int (*body_sink)(void *arg, const uint8_t *p, size_t n);

static int read_body(int fd, const struct agent_http_head *h, uint8_t *buf, size_t have,
		     uint64_t deadline, body_sink sink, void *arg)
{
	struct agent_http_chunked ch = { 0 };
	uint64_t left = h->content_length >= 0 ? (uint64_t)h->content_length : UINT64_MAX;
	int e = 0;
	if (h->status == 204 || h->status == 304)
		return 0;
	for (;;) {
		if (have) {
			size_t out = have;
			int fin = 0;
			if (h->chunked) {
				fin = agent_http_chunked_feed(&ch, buf, have, &out);
				if (fin < 0)
					return fin;
			} else if (out > left) {
				out = (size_t)left;
			}
			if (out && (e = sink(arg, buf, out)) < 0)
				return e;
			if (!h->chunked && h->content_length >= 0)
				left -= out;
			if (fin == 1 || left == 0)
				return 0;
		}
		ssize_t r = read_some(fd, buf, AGENT_HTTP_HEAD_MAX, deadline);
		if (r < 0)
			return (int)r;
		if (r == 0)
			return h->chunked || h->content_length >= 0 ? -EBADMSG : 0;
		have = (size_t)r;
	}
}

static int sink_buf(void *arg, const uint8_t *p, size_t n)
{
	struct hresp *r = arg;
	if (n > AGENT_HTTP_BODY_MAX - r->len)
		return -EMSGSIZE;
	char *nb = realloc(r->body, r->len + n + 1);
	if (!nb)
		return -ENOMEM;
	r->body = nb;
	memcpy(r->body + r->len, p, n);
	r->len += n;
	r->body[r->len] = '\0';
	return 0;
}

/* One request with its whole response in *resp (free resp->body). */
static int call(const struct agent_settings *s, const char *method, const char *path,
		const char *body, uint64_t timeout_ms, struct hresp *resp)
{
	uint8_t *buf = malloc(AGENT_HTTP_HEAD_MAX);
	struct agent_http_head h;
	size_t extra;
	int fd = -1, e;
	uint64_t deadline = agent_mono_ms() + timeout_ms;
	*resp = (struct hresp){ 0 };
	if (!buf)
		return -ENOMEM;
	fd = e = request_send(s, method, path, body);
	if (e < 0)
		goto out;
	if ((e = read_head(fd, buf, &h, &extra, deadline)) < 0)
		goto out;
	resp->status = h.status;
	e = read_body(fd, &h, buf, extra, deadline, sink_buf, resp);
	if (e == 0 && !resp->body)
		e = sink_buf(resp, (const uint8_t *)"", 0);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	if (e < 0) {
		free(resp->body);
		resp->body = NULL;
	}
	return e < 0 ? e : 0;
}

/* The engine's {"message": ...} of an error, or the body. */
static void engine_error(const struct hresp *r, char *why, size_t cap, const char *what)
{
	json_t *j = r->body ? json_loads(r->body, 0, NULL) : NULL;
	const char *m = json_string_value(json_object_get(j, "message"));
	snprintf(why, cap, "%s: HTTP %d: %.200s", what, r->status, m ? m : r->body ? r->body : "");
	json_decref(j);
}

static void url_escape(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t k = 0;
	for (; *s && k + 4 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			out[k++] = (char)c;
		} else {
			out[k++] = '%';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		}
	}
	out[k] = '\0';
}

/* Pulls a->image, DOCKER_PULL_TRIES times; then accepts a local image. */
static int pull(const struct agent_settings *s, const char *image, char *why, size_t cap)
{
	char esc[1024], path[1200];
	struct hresp r;
	const char *slash = strrchr(image, '/');
	bool tagged = strchr(image, '@') || strchr(slash ? slash : image, ':');
	url_escape(image, esc, sizeof(esc));
	snprintf(path, sizeof(path), "/images/create?fromImage=%s%s", esc,
		 tagged ? "" : "&tag=latest");
	for (int i = 0; i < DOCKER_PULL_TRIES && !agent_stop; i++) {
		if (i) {
			uint64_t wait = (uint64_t)1000 << (i - 1);
			agent_sleep_ms(wait < s->max_backoff_ms ? wait : s->max_backoff_ms);
		}
		int e = call(s, "POST", path, NULL, DOCKER_PULL_TIMEOUT_MS, &r);
		if (e < 0) {
			snprintf(why, cap, "pull %s: %s", image, strerror(-e));
			continue;
		}
		/* A failure after the 200 comes as {"error": ...} in the stream. */
		const char *err = strstr(r.body, "\"error\"");
		if (r.status == 200 && !err) {
			free(r.body);
			return 0;
		}
		if (r.status == 200)
			snprintf(why, cap, "pull %s: %.200s", image, err);
		else
			engine_error(&r, why, cap, "pull");
		free(r.body);
		agent_log(1, "%s (try %d of %d)", why, i + 1, DOCKER_PULL_TRIES);
	}
	snprintf(path, sizeof(path), "/images/%s/json", esc);
	if (call(s, "GET", path, NULL, DOCKER_CALL_TIMEOUT_MS, &r) == 0 && r.status == 200) {
		agent_log(0, "%s; the local image is used", why);
		free(r.body);
		return 0;
	}
	free(r.body);
	return -ENOENT;
}

static json_t *str_array(char **v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

char *agent_docker_create_body(const struct agent_settings *s, const struct agent_action *a)
{
	json_t *hc = json_pack("{s:b}", "Privileged", s->privileged);
	json_t *c = json_pack("{s:s, s:b, s:b, s:b, s:o}", "Image", a->image, "AttachStdout", 1,
			      "AttachStderr", 1, "Tty", 0, "Env", str_array(a->env, a->nenv));
	char *out = NULL;
	if (!hc || !c)
		goto out;
	if (a->ncmd)
		json_object_set_new(c, "Cmd", str_array(a->command, a->ncmd));
	if (a->nvol)
		json_object_set_new(hc, "Binds", str_array(a->volumes, a->nvol));
	if (a->pidns && a->pidns[0])
		json_object_set_new(hc, "PidMode", json_string(a->pidns));
	if (a->netns && a->netns[0])
		json_object_set_new(hc, "NetworkMode", json_string(a->netns));
	json_object_set(c, "HostConfig", hc);
	out = json_dumps(c, JSON_COMPACT);
out:
	json_decref(hc);
	json_decref(c);
	return out;
}

static int create(const struct agent_settings *s, const struct agent_action *a,
		  char id[DOCKER_ID_MAX], char *why, size_t cap)
{
	struct hresp r;
	char *body = agent_docker_create_body(s, a);
	int e;
	if (!body)
		return -ENOMEM;
	e = call(s, "POST", "/containers/create", body, DOCKER_CALL_TIMEOUT_MS, &r);
	free(body);
	if (e < 0) {
		snprintf(why, cap, "create: %s", strerror(-e));
		return e;
	}
	json_t *j = json_loads(r.body, 0, NULL);
	const char *v = json_string_value(json_object_get(j, "Id"));
	e = 0;
	if (r.status != 201 || !v || strlen(v) >= DOCKER_ID_MAX ||
	    strspn(v, "0123456789abcdef") != strlen(v)) {
		engine_error(&r, why, cap, "create");
		e = -EPROTO;
	} else {
		memcpy(id, v, strlen(v) + 1);
	}
	json_decref(j);
	free(r.body);
	return e;
}

/* A call whose answer is only its status: 0 when it is one of ok1/ok2. */
static int simple(const struct agent_settings *s, const char *method, const char *path, int ok1,
		  int ok2, uint64_t timeout_ms, char *why, size_t cap)
{
	struct hresp r;
	int e = call(s, method, path, NULL, timeout_ms, &r);
	if (e < 0) {
		snprintf(why, cap, "%s %s: %s", method, path, strerror(-e));
		return e;
	}
	e = r.status == ok1 || r.status == ok2 ? 0 : -EPROTO;
	if (e < 0)
		engine_error(&r, why, cap, path);
	free(r.body);
	return e;
}

struct follow {
	struct agent_mux mux;
	struct agent_lines lines;
	const struct agent_hooks *h;
	int bad;
};

static void mux_out(void *arg, const uint8_t *p, size_t n)
{
	struct follow *f = arg;
	agent_lines_feed(&f->lines, (const char *)p, n, f->h);
}

static int follow_sink(void *arg, const uint8_t *p, size_t n)
{
	struct follow *f = arg;
	return agent_mux_feed(&f->mux, p, n, mux_out, f);
}

/* Follows the container's logs until they end (the container exited):
 * AGENT_OUT_SUCCESS, or AGENT_OUT_TIMEOUT past deadline, AGENT_OUT_STOPPED
 * when the tick hook says so, AGENT_OUT_FAILED when the stream breaks. */
static enum agent_outcome follow(const struct agent_settings *s, const char *id,
				 const struct agent_hooks *h, uint64_t deadline, char *why,
				 size_t cap)
{
	char path[256];
	uint8_t *buf = malloc(AGENT_HTTP_HEAD_MAX);
	struct agent_http_head hd;
	struct agent_http_chunked ch = { 0 };
	struct follow f = { .h = h };
	enum agent_outcome o = AGENT_OUT_FAILED;
	size_t have = 0;
	uint64_t next_tick = agent_mono_ms() + 1000;
	int fd = -1, e;
	if (!buf)
		return AGENT_OUT_FAILED;
	snprintf(path, sizeof(path), "/containers/%s/logs?follow=1&stdout=1&stderr=1", id);
	fd = e = request_send(s, "GET", path, NULL);
	if (e < 0 ||
	    (e = read_head(fd, buf, &hd, &have, agent_mono_ms() + DOCKER_CALL_TIMEOUT_MS)) < 0) {
		snprintf(why, cap, "logs: %s", strerror(-e));
		goto out;
	}
	if (hd.status != 200) {
		snprintf(why, cap, "logs: HTTP %d", hd.status);
		goto out;
	}
	for (;;) {
		if (have) {
			size_t n = have;
			int fin = 0;
			if (hd.chunked && (fin = agent_http_chunked_feed(&ch, buf, have, &n)) < 0)
				break;
			if (follow_sink(&f, buf, n) < 0)
				break;
			have = 0;
			if (fin == 1) {
				o = AGENT_OUT_SUCCESS;
				goto out;
			}
		}
		uint64_t now = agent_mono_ms();
		if (now >= deadline) {
			o = AGENT_OUT_TIMEOUT;
			goto out;
		}
		if (now >= next_tick) {
			next_tick = now + 1000;
			if (h->tick(h->arg) || agent_stop) {
				o = AGENT_OUT_STOPPED;
				goto out;
			}
		}
		uint64_t wait = next_tick - now < deadline - now ? next_tick - now : deadline - now;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, (int)wait);
		if (r <= 0)
			continue;
		ssize_t n = recv(fd, buf, AGENT_HTTP_HEAD_MAX, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && !hd.chunked) {
			o = AGENT_OUT_SUCCESS;
			goto out;
		}
		if (n <= 0)
			break;
		have = (size_t)n;
	}
	snprintf(why, cap, "logs: the engine's stream is malformed or broken");
out:
	agent_lines_flush(&f.lines, h);
	if (fd >= 0)
		close(fd);
	free(buf);
	return o;
}

/* The container's exit status, or a negative errno. */
static int wait_exit(const struct agent_settings *s, const char *id, char *why, size_t cap)
{
	char path[256];
	struct hresp r;
	snprintf(path, sizeof(path), "/containers/%s/wait", id);
	int e = call(s, "POST", path, NULL, DOCKER_CALL_TIMEOUT_MS, &r);
	if (e < 0) {
		snprintf(why, cap, "wait: %s", strerror(-e));
		return e;
	}
	json_t *j = json_loads(r.body, 0, NULL);
	json_t *v = json_object_get(j, "StatusCode");
	e = r.status == 200 && json_is_integer(v) && json_integer_value(v) >= 0 &&
			    json_integer_value(v) < 256 ?
		    (int)json_integer_value(v) :
		    -EPROTO;
	if (e < 0)
		engine_error(&r, why, cap, "wait");
	json_decref(j);
	free(r.body);
	return e;
}

enum agent_outcome agent_docker_run(const struct agent_settings *s, const struct agent_action *a,
				    const struct agent_hooks *h, char *why, size_t whycap)
{
	char id[DOCKER_ID_MAX] = "", path[256];
	enum agent_outcome o = AGENT_OUT_FAILED;
	uint64_t deadline;
	if (!a->image[0]) {
		snprintf(why, whycap, "the action has no image");
		return o;
	}
	if (pull(s, a->image, why, whycap) < 0 || create(s, a, id, why, whycap) < 0)
		goto out;
	snprintf(path, sizeof(path), "/containers/%s/start", id);
	if (simple(s, "POST", path, 204, 304, DOCKER_CALL_TIMEOUT_MS, why, whycap) < 0)
		goto out;
	/* The timeout is the container's, as tink-agent's: the pull is not in it. */
	deadline = a->timeout_s ? agent_mono_ms() + a->timeout_s * 1000 : UINT64_MAX;
	o = follow(s, id, h, deadline, why, whycap);
	if (o == AGENT_OUT_TIMEOUT || o == AGENT_OUT_STOPPED) {
		char ignore[128];
		snprintf(why, whycap, o == AGENT_OUT_TIMEOUT ? "timed out after %llus" : "stopped",
			 (unsigned long long)a->timeout_s);
		snprintf(path, sizeof(path), "/containers/%s/stop?t=%d", id,
			 AGENT_STOP_GRACE_MS / 1000);
		simple(s, "POST", path, 204, 304, DOCKER_CALL_TIMEOUT_MS + AGENT_STOP_GRACE_MS,
		       ignore, sizeof(ignore));
		goto out;
	}
	if (o != AGENT_OUT_SUCCESS)
		goto out;
	int st = wait_exit(s, id, why, whycap);
	if (st < 0)
		o = AGENT_OUT_FAILED;
	else {
		o = st == 0 ? AGENT_OUT_SUCCESS : AGENT_OUT_FAILED;
		snprintf(why, whycap, "exit status %d", st);
	}
out:
	if (id[0]) {
		char ignore[128];
		snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", id);
		if (simple(s, "DELETE", path, 204, 404, DOCKER_CALL_TIMEOUT_MS, ignore,
			   sizeof(ignore)) < 0)
			agent_log(0, "remove container %.12s: %s", id, ignore);
	}
	return o;
}
