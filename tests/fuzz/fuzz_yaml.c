/* fuzz_yaml — libFuzzer target for common/yamljson*.c, common/jsonarr.c
 * and store/validate.c.
 *
 * Every input is loaded as a YAML stream. A refused input must come back
 * with a sane error (a position, a message). Each document that loads is
 * dumped, and the dump must load again as exactly one document equal to
 * the original: yj_dump's quoting and yj_load's typing must agree. Each
 * document then goes through store_validate() for every kind (and
 * store_validate_status() for its status), which must either accept it
 * or give a message, and through store_default(), after which an object
 * that was valid must still be. The input is also walked as a JSON array by
 * jsonarr_each(), which must agree with json_loadb() of the whole: what
 * the walk takes, json_loadb() takes, with the same elements, each equal
 * to its own text parsed again. yj_load_each() must give the documents
 * yj_load() gives, or fail where it fails. Any disagreement abort()s, so
 * libFuzzer reports it. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jsonarr.h"
#include "common/yamljson.h"
#include "store/store.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_YAML_MAX_INPUT (256u << 10)
#define FUZZ_YAML_MAX_DUMP (1u << 20) /* bigger dumps are skipped: slow, not new */

static void check_error(int r, const struct yj_error *e)
{
	if (r != -EINVAL && r != -ENOMEM)
		abort();
	if (r == -EINVAL &&
	    (e->document == 0 || e->line == 0 || e->column == 0 || e->message[0] == '\0' ||
	     memchr(e->message, '\0', sizeof(e->message)) == NULL))
		abort();
}

static void check_validate(const json_t *doc)
{
	char msg[512];
	for (int k = 0; k < STORE_KIND_MAX; k++) {
		msg[0] = '\0';
		int r = store_validate((enum store_kind)k, doc, msg, sizeof(msg));
		if (r != 0 && (r != -EINVAL || msg[0] == '\0'))
			abort();
		const json_t *status = json_is_object(doc) ? json_object_get(doc, "status") : NULL;
		if (!status)
			continue;
		msg[0] = '\0';
		r = store_validate_status((enum store_kind)k, status, msg, sizeof(msg));
		if (r != 0 && (r != -EINVAL || msg[0] == '\0'))
			abort();
	}
	/* Defaulting takes anything, and what it fills in is valid: an object
	 * valid before is valid after. */
	for (int k = 0; k < STORE_KIND_MAX; k++) {
		json_t *copy = json_deep_copy(doc);
		if (!copy)
			continue;
		int before = store_validate((enum store_kind)k, copy, NULL, 0);
		store_default((enum store_kind)k, copy);
		if (before == 0 && store_validate((enum store_kind)k, copy, msg, sizeof(msg)) != 0)
			abort();
		json_decref(copy);
	}
}

static void round_trip(const json_t *doc)
{
	struct buf out = BUF_INIT(FUZZ_YAML_MAX_DUMP);
	struct yj_error e;
	json_t *again = NULL;

	int r = yj_dump(doc, &out);
	if (r == -E2BIG || r == -ENOMEM)
		goto out;
	if (r < 0) {
		fprintf(stderr, "yj_dump failed: %d\n", r);
		abort();
	}
	r = yj_load_one(out.data, out.len, &again, &e);
	if (r == -ENOMEM)
		goto out;
	if (r < 0 || !json_equal(doc, again)) {
		char *j = json_dumps(doc, JSON_ENCODE_ANY);
		fprintf(stderr, "round trip failed (%d: %zu:%zu %s)\njson: %s\nyaml:\n%s\n", r,
			e.line, e.column, r < 0 ? e.message : "not equal", j ? j : "?", out.data);
		free(j);
		abort();
	}
out:
	json_decref(again);
	buf_free(&out);
}

static int array_element(json_t *v, const char *text, size_t len, size_t index, void *userdata)
{
	json_t *again = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_equal(v, again) || (userdata && !json_equal(v, json_array_get(userdata, index))))
		abort();
	json_decref(again);
	return 0;
}

static void check_array(const uint8_t *data, size_t size)
{
	json_error_t je;
	json_t *whole = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
	int r = jsonarr_each((const char *)data, size, JSON_REJECT_DUPLICATES, array_element,
			     json_is_array(whole) ? whole : NULL);
	if (r != 0 && r != -ENOMSG && r != -EBADMSG)
		abort();
	/* An element may nest as deep as a whole text: one level more. */
	if (r == 0 && !json_is_array(whole) && !(!whole && strstr(je.text, "depth")))
		abort();
	if (r == -ENOMSG && json_is_array(whole))
		abort();
	json_decref(whole);
}

static int each_doc(json_t *doc, size_t line, void *userdata)
{
	(void)line;
	return json_array_append(userdata, doc);
}

/* yj_load_each() against yj_load()'s result r, docs and error e. */
static void check_each(const uint8_t *data, size_t size, int r, const json_t *docs,
		       const struct yj_error *e)
{
	json_t *got = json_array();
	struct yj_error e2;
	if (!got)
		return;
	int r2 = yj_load_each((const char *)data, size, each_doc, got, &e2);
	if (r != -ENOMEM && r2 != -ENOMEM &&
	    (r2 != r || (r == 0 && !json_equal(docs, got)) ||
	     (r < 0 && (e->document != e2.document || e->line != e2.line ||
			e->column != e2.column || strcmp(e->message, e2.message) != 0))))
		abort();
	json_decref(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *docs = NULL;
	size_t *lines = NULL;
	struct yj_error e;

	if (size > FUZZ_YAML_MAX_INPUT)
		return 0;
	check_array(data, size);
	int r = yj_load((const char *)data, size, &docs, &lines, &e);
	check_each(data, size, r, docs, &e);
	if (r < 0) {
		check_error(r, &e);
		return 0;
	}
	for (size_t i = 0; i < json_array_size(docs); i++) {
		const json_t *doc = json_array_get(docs, i);
		if (lines[i] == 0 || (i > 0 && lines[i] < lines[i - 1]))
			abort();
		round_trip(doc);
		check_validate(doc);
	}
	json_decref(docs);
	free(lines);
	return 0;
}
