/* client — the HTTP side of `ironbell`: one libcurl easy handle per
 * request, to the daemon's unix socket (no token: the socket's file mode is
 * the access control) or, with --server, to a TCP URL with a bearer token
 * (https:// verified against the system's CAs, or --cacert's; not at all
 * with --insecure-skip-tls-verify).
 *
 * Answers are read into a buffer capped at CLI_MAX_RESPONSE; a watch is
 * read line by line (each line one JSON event, also capped) and handed to a
 * callback as it arrives, so that `ironbell watch` prints each change at
 * once. SIGINT and SIGTERM end a watch cleanly through curl's progress
 * callback, so that what was printed is flushed and the exit status is 0. */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/common.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = 1;
}

struct xfer {
	struct cli_response *resp;
	bool too_large;
	long os_errno; /* CURLINFO_OS_ERRNO after a failed connect */
	/* streaming only */
	CURL *curl;
	cli_line_fn fn;
	void *arg;
	struct buf line;
	int fn_result; /* last non-zero result of fn */
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	if (buf_append(&x->resp->body, p, len) < 0) {
		x->too_large = true;
		return 0;
	}
	return len;
}

static size_t on_stream(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n;
	long code = 0;
	curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 300)
		return on_body(p, size, n, arg);
	for (size_t i = 0; i < len; i++) {
		if (p[i] != '\n') {
			if (buf_putc(&x->line, p[i]) < 0) {
				x->too_large = true;
				return 0;
			}
			continue;
		}
		size_t l = x->line.len;
		if (l && x->line.data[l - 1] == '\r')
			l--;
		int r = l ? x->fn(x->arg, x->line.data, l) : 0;
		buf_reset(&x->line);
		if (r != 0) {
			x->fn_result = r;
			return 0;
		}
	}
	return len;
}

static int on_progress(void *arg, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	return interrupted ? 1 : 0;
}

static const char *target(const struct cli *c, char *tmp, size_t n)
{
	if (c->server)
		snprintf(tmp, n, "%s", c->server);
	else
		snprintf(tmp, n, "unix socket %s", c->socket);
	return tmp;
}

/* Reads the token file (at most CLI_MAX_TOKEN bytes, trailing whitespace
 * dropped) into c->token. Returns 0 or -1 after printing why. */
static int read_token(struct cli *c)
{
	char tmp[4096];
	struct buf b = BUF_INIT(CLI_MAX_TOKEN);
	int fd = open(c->token_file, O_RDONLY | O_CLOEXEC), ret = -1;
	if (fd < 0) {
		cli_error("%s: %s", c->token_file, strerror(errno));
		return -1;
	}
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error("%s: %s", c->token_file, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if (buf_append(&b, tmp, (size_t)n) < 0) {
			cli_error("%s: larger than %u bytes", c->token_file, CLI_MAX_TOKEN);
			goto out;
		}
	}
	while (b.len && strchr(" \t\r\n", b.data[b.len - 1]))
		b.data[--b.len] = '\0';
	if (b.len == 0 || memchr(b.data, '\n', b.len) || memchr(b.data, '\r', b.len) ||
	    strlen(b.data) != b.len) {
		cli_error("%s: not a token (empty, or more than one line)", c->token_file);
		goto out;
	}
	c->token = buf_steal(&b);
	if (!c->token) {
		cli_error("out of memory");
		goto out;
	}
	ret = 0;
out:
	close(fd);
	buf_free(&b);
	return ret;
}

/* Reads what the global options point to, once: the bearer token for
 * --server. Returns 0 or -1 after printing why. */
static int prepare(struct cli *c)
{
	const char *env;
	if (!c->server || c->token)
		return 0;
	if (c->token_file)
		return read_token(c);
	if ((env = getenv("IRONBELL_TOKEN")) && *env && !(c->token = strdup(env))) {
		cli_error("out of memory");
		return -1;
	}
	return 0;
}

/* Makes a handle for method path; *ret_headers must be freed after the
 * transfer. NULL after printing why on failure. */
static CURL *handle_new(struct cli *c, const char *method, const char *path, const char *ctype,
			struct curl_slist **ret_headers, char *errbuf)
{
	struct curl_slist *hd = NULL, *t;
	struct buf url = BUF_INIT(64 * 1024);
	struct buf auth = BUF_INIT(CLI_MAX_TOKEN + 64);
	CURL *h = NULL;
	if (prepare(c) < 0)
		return NULL;
	if (!(h = curl_easy_init()))
		goto fail;
	if (c->server) {
		size_t sl = strlen(c->server);
		if (buf_append(&url, c->server, sl && c->server[sl - 1] == '/' ? sl - 1 : sl) < 0)
			goto fail;
	} else {
		if (buf_puts(&url, "http://localhost") < 0)
			goto fail;
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
	}
	if (buf_puts(&url, path) < 0)
		goto fail;
	curl_easy_setopt(h, CURLOPT_URL, url.data);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, CLI_CONNECT_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "ironbell/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	if (!(t = curl_slist_append(hd, "Accept: application/json")))
		goto fail;
	hd = t;
	if (!(t = curl_slist_append(hd, "Expect:")))
		goto fail;
	hd = t;
	if (ctype) {
		struct buf ct = BUF_INIT(256);
		if (buf_printf(&ct, "Content-Type: %s", ctype) < 0 ||
		    !(t = curl_slist_append(hd, ct.data))) {
			buf_free(&ct);
			goto fail;
		}
		buf_free(&ct);
		hd = t;
	}
	if (c->server && c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->cacert);
	if (c->server && c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->server && c->token) {
		if (buf_printf(&auth, "Authorization: Bearer %s", c->token) < 0 ||
		    !(t = curl_slist_append(hd, auth.data)))
			goto fail;
		hd = t;
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	buf_free(&url);
	buf_free(&auth);
	*ret_headers = hd;
	return h;
fail:
	cli_error("out of memory");
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	buf_free(&url);
	buf_free(&auth);
	return NULL;
}

static int report_transport(struct cli *c, CURLcode rc, const struct xfer *x, const char *errbuf)
{
	char tmp[600];
	if (x->too_large) {
		cli_error("the answer from %s is larger than %u bytes", target(c, tmp, sizeof(tmp)),
			  CLI_MAX_RESPONSE);
		return -1;
	}
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_OPERATION_TIMEDOUT) {
		/* For a unix socket curl's text names "localhost port 80":
		 * the system's reason says more. */
		const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
		if (!c->server && x->os_errno)
			why = strerror((int)x->os_errno);
		cli_error(
			"cannot connect to ironbelld at %s: %s (is the daemon running? see --socket, "
			"--server, $IRONBELL_SOCKET)",
			target(c, tmp, sizeof(tmp)), why);
	} else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE) {
		cli_error("cannot verify ironbelld at %s: %s (name the CA that signed its "
			  "certificate with --cacert or $IRONBELL_CA)",
			  target(c, tmp, sizeof(tmp)), errbuf[0] ? errbuf : curl_easy_strerror(rc));
	} else
		cli_error("request to ironbelld at %s failed: %s", target(c, tmp, sizeof(tmp)),
			  errbuf[0] ? errbuf : curl_easy_strerror(rc));
	return -1;
}

int cli_request(struct cli *c, const char *method, const char *path, const char *ctype,
		const char *body, size_t len, struct cli_response *resp)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hd = NULL;
	struct xfer x = { .resp = resp };
	int ret = -1;
	*resp = (struct cli_response){ .body = BUF_INIT(CLI_MAX_RESPONSE) };
	CURL *h = handle_new(c, method, path, body ? ctype : NULL, &hd, errbuf);
	if (!h)
		goto out;
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	curl_easy_setopt(h, CURLOPT_TIMEOUT, CLI_REQUEST_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &x.os_errno);
	if (rc != CURLE_OK || x.too_large) {
		report_transport(c, rc, &x, errbuf);
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->code);
	ret = 0;
out:
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	return ret;
}

void cli_response_free(struct cli_response *resp)
{
	if (resp)
		buf_free(&resp->body);
}

json_t *cli_response_json(const struct cli_response *resp)
{
	json_error_t e;
	json_t *v = json_loadb(resp->body.data ? resp->body.data : "", resp->body.len, 0, &e);
	if (!json_is_object(v)) {
		cli_error("the server's answer is not a JSON object (%s)",
			  v ? "wrong type" : e.text);
		json_decref(v);
		return NULL;
	}
	return v;
}

json_t *cli_response_status(const struct cli_response *resp)
{
	json_t *v = json_loadb(resp->body.data ? resp->body.data : "", resp->body.len, 0, NULL);
	const char *kind = json_string_value(json_object_get(v, "kind"));
	if (!kind || strcmp(kind, "Status") != 0) {
		json_decref(v);
		return NULL;
	}
	return v;
}

void cli_print_server_error(const struct cli_response *resp)
{
	json_t *st = cli_response_status(resp);
	const char *msg = json_string_value(json_object_get(st, "message"));
	const char *reason = json_string_value(json_object_get(st, "reason"));
	if (msg && reason && *reason)
		fprintf(stderr, "Error from server (%s): %s\n", reason, msg);
	else if (msg)
		fprintf(stderr, "Error from server: %s\n", msg);
	else {
		const char *b = resp->body.data ? resp->body.data : "";
		size_t n = strcspn(b, "\n");
		if (n > 200)
			n = 200;
		fprintf(stderr, "Error from server: HTTP %ld%s%.*s\n", resp->code, n ? ": " : "",
			(int)n, b);
	}
	json_decref(st);
}

int cli_stream(struct cli *c, const char *path, cli_line_fn fn, void *arg)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hd = NULL;
	struct cli_response resp = { .body = BUF_INIT(CLI_MAX_RESPONSE) };
	struct xfer x = { .resp = &resp, .fn = fn, .arg = arg, .line = BUF_INIT(CLI_MAX_RESPONSE) };
	int ret = CLI_EXIT_ERROR;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	CURL *h = handle_new(c, "GET", path, NULL, &hd, errbuf);
	if (!h)
		goto out;
	x.curl = h;
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.code);
	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &x.os_errno);
	if (rc == CURLE_ABORTED_BY_CALLBACK && interrupted) {
		ret = CLI_EXIT_OK;
	} else if (rc == CURLE_WRITE_ERROR && x.fn_result) {
		ret = x.fn_result > 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
	} else if (rc != CURLE_OK || x.too_large) {
		/* The daemon ends a stream with its last chunk when it stops;
		 * a stream that breaks off without it (the daemon was killed,
		 * the connection dropped) is an error, or a watcher would
		 * never know it missed changes. */
		report_transport(c, rc, &x, errbuf);
	} else if (resp.code >= 300) {
		cli_print_server_error(&resp);
	} else {
		if (x.line.len)
			ret = fn(arg, x.line.data, x.line.len) < 0 ? CLI_EXIT_ERROR : CLI_EXIT_OK;
		else
			ret = CLI_EXIT_OK;
	}
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	buf_free(&x.line);
	buf_free(&resp.body);
	return ret;
}

int cli_query_add(struct buf *out, const char *key, const char *value)
{
	char *e = curl_easy_escape(NULL, value, 0);
	if (!e)
		return -ENOMEM;
	int r = buf_printf(out, "%c%s=%s", out->len && strchr(out->data, '?') ? '&' : '?', key, e);
	curl_free(e);
	return r;
}
