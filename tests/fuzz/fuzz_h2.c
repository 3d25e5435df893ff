/* fuzz_h2 — bytes from a client (untrusted: anyone who reaches port
 * 42113) into the worker API's HTTP/2 and gRPC layer as the server uses
 * it (workflow/grpc-h2.c): an nghttp2 server session with the server's
 * limits, fed through memory in chunks whose size the first byte picks,
 * its output pulled after each chunk as the server pulls it. The handler
 * answers a message starting with 'o' OK, keeps one starting with 'h'
 * (answered when the deadline sweep or the connection's end comes), and
 * refuses the rest. Properties: no crash, no leak, no handler call after
 * it was told its call was cancelled, a kept call always told. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/grpc.h"
#include "workflow/grpc-internal.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_H2_MAX (256 * 1024)
#define FUZZ_H2_HELD 64

static struct wf_h2_call *held[FUZZ_H2_HELD];
static size_t n_held;

static void h_call(void *ud, struct wf_h2_call *call)
{
	if (call->msg_len && call->msg[0] == 'o')
		wf_h2_reply(call, call->msg, call->msg_len);
	else if (call->msg_len && call->msg[0] == 'h' && n_held < FUZZ_H2_HELD)
		held[n_held++] = call;
	else
		wf_h2_fail(call, GRPC_INVALID_ARGUMENT, "no");
}

static void h_cancelled(void *ud, struct wf_h2_call *call)
{
	for (size_t i = 0; i < n_held; i++) {
		if (held[i] == call) {
			held[i] = held[--n_held];
			return;
		}
	}
	abort(); /* told about a call it never kept */
}

static const struct wf_h2_ops ops = { .call = h_call, .cancelled = h_cancelled };

static void drain(struct wf_h2_conn *c)
{
	const uint8_t *p;
	for (int i = 0; i < 1000 && wf_h2_conn_pull(c, &p) > 0; i++)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wf_h2_limits lim = { .max_message = 4096, .max_streams = 8 };
	if (size < 1 || size > FUZZ_H2_MAX)
		return 0;
	size_t chunk = (size_t)data[0] * 16 + 1;
	data++;
	size--;
	n_held = 0;
	struct wf_h2_conn *c = wf_h2_conn_new(&lim, &ops, NULL, NULL, "fuzz");
	if (!c)
		abort();
	drain(c);
	for (size_t off = 0; off < size;) {
		size_t n = size - off < chunk ? size - off : chunk;
		int e = wf_h2_conn_recv(c, data + off, n);
		drain(c);
		if (e < 0)
			break;
		off += n;
		/* every other chunk, answer the oldest kept call */
		if (n_held && (off / chunk) % 2 == 0) {
			struct wf_h2_call *call = held[0];
			held[0] = held[--n_held];
			wf_h2_fail(call, GRPC_NOT_FOUND, "later");
			drain(c);
		}
	}
	wf_h2_conn_expire(c, UINT64_MAX / 2);
	drain(c);
	(void)wf_h2_conn_done(c);
	wf_h2_conn_free(c);
	if (n_held)
		abort(); /* a kept call was never told */
	return 0;
}
