/* fuzz_kubeconfig — libFuzzer target for kube/kubeconfig.c's parser.
 *
 * The input is a kubeconfig's text, parsed from memory with no directory
 * (kube_conn_parse() then reads no file: a field naming one is refused),
 * once with its current-context and once with a context named "c". An
 * answer must be consistent: on success a server that is https:// with
 * no trailing '/', a certificate only with its key, an origin; on
 * failure a non-empty message that names the file, and nothing left in
 * the result. Any breach abort()s, so libFuzzer reports it. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/kube-internal.h"
#include "tests/fuzz/fuzz.h"

static void check(const uint8_t *data, size_t size, const char *context)
{
	struct kube_conn k;
	char err[512];
	int rc = kube_conn_parse((const char *)data, size, "fuzz.yaml", NULL, context, &k, err,
				 sizeof(err));
	if (rc == 0) {
		size_t n = k.server ? strlen(k.server) : 0;
		if (!k.server || strncasecmp(k.server, "https://", 8) != 0 || n <= 8 ||
		    k.server[n - 1] == '/' || !k.origin || !!k.cert_pem != !!k.key_pem ||
		    k.token_file)
			abort();
		kube_conn_clear(&k);
		return;
	}
	if (rc > 0 || err[0] == '\0' || strncmp(err, "fuzz.yaml", 9) != 0 ||
	    memchr(err, '\0', sizeof(err)) == NULL || k.server || k.token || k.ca_pem || k.origin)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > KUBE_MAX_KUBECONFIG)
		return 0;
	check(data, size, NULL);
	check(data, size, "c");
	return 0;
}
