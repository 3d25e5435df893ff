/* kube-call — kube/'s HTTP client without the daemon, for the tests: one
 * request, or one stream, to the API server a kubeconfig names.
 *
 *   kube-call (--kubeconfig F [--context C] | --in-cluster DIR) [options]
 *             METHOD PATH [BODY]
 *   kube-call ... --stream PATH
 *
 * Options:
 *   --content-type T   the body's type (default application/json)
 *   --qps N, --burst N the client-side rate limit (default none)
 *   --count N          send the request N times (rate-limit tests)
 *   --timeout-ms N     a request's timeout
 *   --idle S           a stream ends when no byte came for S seconds
 *   --seconds N        a stream is cancelled after N seconds
 *   --wait-file F      after loading the settings, print "loaded" on
 *                      stderr and wait (at most 60 s) until F exists
 *
 * A request prints "HTTP STATUS" (and "retry-after N" when the answer had
 * one) and the body on stdout, and the error line on stderr for a status
 * of 400 and above. A stream prints "HTTP 200" then the bytes as they
 * come (flushed), and at the end "end: ok" or "end: ERROR". Exit status:
 * 0 for a 2xx answer or a stream the server ended, 1 for another status,
 * 2 when no answer came (or the stream failed), 64 for usage. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/num.h"
#include "kube/kube-internal.h"

#define KUBE_CALL_MAX_WAIT_S 60
#define KUBE_CALL_MAX_COUNT 10000

static void usage(void)
{
	fprintf(stderr, "usage: kube-call (--kubeconfig F [--context C] | --in-cluster DIR) "
			"[--qps N] [--burst N] [--count N] [--timeout-ms N] [--idle S] "
			"[--seconds N] [--wait-file F] [--content-type T] "
			"(METHOD PATH [BODY] | --stream PATH)\n");
	exit(64);
}

static unsigned num_arg(const char *s)
{
	uint64_t v;
	if (num_parse_u64_str(s, 1000000000, &v) < 0)
		usage();
	return (unsigned)v;
}

static int print_bytes(const char *data, size_t len, void *userdata)
{
	(void)userdata;
	if (!data)
		return 0;
	fwrite(data, 1, len, stdout);
	fflush(stdout);
	return 0;
}

struct canceller {
	struct kube_session *s;
	unsigned seconds;
};

static void *cancel_later(void *p)
{
	struct canceller *c = p;
	struct timespec ts = { (time_t)c->seconds, 0 };
	nanosleep(&ts, NULL);
	kube_session_cancel(c->s);
	return NULL;
}

static void wait_file(const char *f)
{
	fprintf(stderr, "loaded\n");
	for (int i = 0; i < KUBE_CALL_MAX_WAIT_S * 10 && access(f, F_OK) != 0; i++) {
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
	}
}

static int do_stream(struct kube_session *s, const char *path, unsigned idle, unsigned seconds)
{
	struct kube_response r;
	struct canceller c = { s, seconds };
	pthread_t t;
	bool timer = seconds > 0 && pthread_create(&t, NULL, cancel_later, &c) == 0;
	int rc = kube_stream(s, path, idle, print_bytes, NULL, &r);

	if (timer) {
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	if (r.status && r.status != 200) {
		printf("HTTP %ld\n", r.status);
		if (r.retry_after)
			printf("retry-after %u\n", r.retry_after);
		fwrite(r.body.data ? r.body.data : "", 1, r.body.len, stdout);
		fprintf(stderr, "%s\n", r.error);
	}
	if (rc < 0)
		printf("end: %s (%s)\n", r.error, strerror(-rc));
	else if (r.status == 200)
		printf("end: ok\n");
	buf_free(&r.body);
	return rc < 0 ? 2 : r.status == 200 ? 0 : 1;
}

static int do_request(struct kube_session *s, const char *method, const char *path,
		      const char *ctype, const char *body, unsigned n)
{
	int status = 0;
	for (unsigned i = 0; i < n; i++) {
		struct kube_response r;
		int rc = kube_request(s, method, path, ctype, body, body ? strlen(body) : 0, &r);
		if (rc < 0) {
			fprintf(stderr, "%s\n", r.error);
			buf_free(&r.body);
			return 2;
		}
		printf("HTTP %ld\n", r.status);
		if (r.retry_after)
			printf("retry-after %u\n", r.retry_after);
		fwrite(r.body.data ? r.body.data : "", 1, r.body.len, stdout);
		if (r.body.len && r.body.data[r.body.len - 1] != '\n')
			putchar('\n');
		if (r.status >= 400)
			fprintf(stderr, "%s\n", r.error);
		fflush(stdout);
		status = r.status >= 200 && r.status < 300 ? 0 : 1;
		buf_free(&r.body);
	}
	return status;
}

int main(int argc, char **argv)
{
	const char *kubeconfig = NULL, *context = NULL, *in_cluster = NULL, *stream = NULL;
	const char *wait = NULL, *ctype = NULL;
	struct kube_api_opts opts = { 0 };
	unsigned idle = 0, seconds = 0, count = 1;
	struct kube_conn conn;
	struct kube_api *api = NULL;
	struct kube_session *s = NULL;
	char err[1024];
	int i, rc;

	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *o = argv[i];
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (strcmp(o, "--kubeconfig") == 0)
			kubeconfig = v;
		else if (strcmp(o, "--context") == 0)
			context = v;
		else if (strcmp(o, "--in-cluster") == 0)
			in_cluster = v;
		else if (strcmp(o, "--stream") == 0)
			stream = v;
		else if (strcmp(o, "--wait-file") == 0)
			wait = v;
		else if (strcmp(o, "--content-type") == 0)
			ctype = v;
		else if (strcmp(o, "--qps") == 0)
			opts.qps = num_arg(v);
		else if (strcmp(o, "--burst") == 0)
			opts.burst = num_arg(v);
		else if (strcmp(o, "--timeout-ms") == 0)
			opts.timeout_ms = num_arg(v);
		else if (strcmp(o, "--idle") == 0)
			idle = num_arg(v);
		else if (strcmp(o, "--seconds") == 0)
			seconds = num_arg(v);
		else if (strcmp(o, "--count") == 0)
			count = num_arg(v);
		else
			usage();
	}
	if (!!kubeconfig == !!in_cluster || count == 0 || count > KUBE_CALL_MAX_COUNT)
		usage();
	if (!stream && (argc - i < 2 || argc - i > 3))
		usage();
	if (stream && argc != i)
		usage();
	rc = kubeconfig ? kube_conn_from_kubeconfig(kubeconfig, context, &conn, err, sizeof(err)) :
			  kube_conn_in_cluster(in_cluster, &conn, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	rc = kube_api_new(&conn, &opts, &api, err, sizeof(err));
	kube_conn_clear(&conn);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (!(s = kube_session_new(api))) {
		fprintf(stderr, "cannot make a session\n");
		kube_api_free(api);
		return 2;
	}
	if (wait)
		wait_file(wait);
	rc = stream ? do_stream(s, stream, idle, seconds) :
		      do_request(s, argv[i], argv[i + 1], ctype, argc - i == 3 ? argv[i + 2] : NULL,
				 count);
	kube_session_free(s);
	kube_api_free(api);
	return rc;
}
