/* base64 — RFC 4648 standard base64, decoded from untrusted text: a
 * Kubernetes Secret's data, a kubeconfig's -data fields. */
#pragma once

#include <stddef.h>

/* Decodes standard base64 (padding required; line breaks skipped, as
 * Go's decoder does) of len bytes into out, at most cap bytes; the length
 * in *ret_len. 0, -EINVAL for bad base64, -E2BIG when over cap. */
int base64_decode(const char *in, size_t len, char *out, size_t cap, size_t *ret_len);
