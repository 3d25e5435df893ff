/* fuzz_kube_watch — the watch-stream decoder and the list pages' reader
 * (kube/watchdec.c). The first byte of the input says where the rest is
 * cut in two (0: before it, 255: after it); the two pieces are fed to the
 * stream decoder one after the other, and the whole rest is read as a
 * list page. Every event given must carry fields within their bounds. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "tests/fuzz/fuzz.h"

static int on_event(const struct kube_event *ev, void *userdata)
{
	size_t *seen = userdata;

	if (!json_is_object(ev->object) || strlen(ev->rv) > KUBE_MAX_RV || strlen(ev->name) > 253 ||
	    strlen(ev->namespace_) > 253 || strlen(ev->message) > KUBE_MAX_STATUS_MESSAGE)
		abort();
	if (ev->type != KUBE_EVENT_ERROR && !*ev->rv)
		abort();
	(*seen)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], rv[KUBE_MAX_RV + 1], cont[KUBE_MAX_CONTINUE + 1];
	struct kube_watchdec d;
	json_t *items = NULL;
	size_t seen = 0;

	if (size < 1)
		return 0;
	const char *p = (const char *)data + 1;
	size_t n = size - 1, cut = n * data[0] / 255;

	kube_watchdec_init(&d, "tinkerbell.org/v1alpha1", "Hardware");
	err[0] = '\0';
	int e = kube_watchdec_feed(&d, p, cut, on_event, &seen, err, sizeof(err));
	if (e == 0)
		e = kube_watchdec_feed(&d, p + cut, n - cut, on_event, &seen, err, sizeof(err));
	if (e < 0 && (!err[0] || strlen(err) >= sizeof(err)))
		abort();
	(void)kube_watchdec_partial(&d);
	kube_watchdec_free(&d);

	if (kube_list_parse(p, n, "tinkerbell.org/v1alpha1", "Hardware", &items, rv, cont, err,
			    sizeof(err)) == 0) {
		if (!json_is_array(items) || strlen(rv) > KUBE_MAX_RV ||
		    strlen(cont) > KUBE_MAX_CONTINUE)
			abort();
		for (size_t i = 0; i < json_array_size(items); i++)
			if (!json_is_string(json_object_get(json_array_get(items, i), "kind")))
				abort();
		json_decref(items);
	}
	return 0;
}
