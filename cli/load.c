/* load — reads the files given to `apply -f` and `delete -f`.
 *
 * Every document of every file is parsed before anything is sent: a YAML
 * error anywhere means the command sends nothing, which, with the server
 * applying one request all or none, makes an apply atomic from the file to
 * the database. Each object remembers where it came from ("FILE:LINE
 * (document N)") so that a server error about item i can point back to it. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/common.h"

struct loader {
	json_t *objs;
	json_t *origins;
	size_t total; /* bytes read so far, against CLI_MAX_INPUT */
	const char *ns;
	bool ns_explicit;
};

static int read_fd(int fd, const char *name, struct loader *l, struct buf *out)
{
	char tmp[65536];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error("%s: %s", name, strerror(errno));
			return -1;
		}
		if (n == 0)
			return 0;
		l->total += (size_t)n;
		if (l->total > CLI_MAX_INPUT || buf_append(out, tmp, (size_t)n) < 0) {
			cli_error("%s: the input is larger than %u bytes", name, CLI_MAX_INPUT);
			return -1;
		}
	}
}

static int add_object(struct loader *l, json_t *obj, const char *name, size_t doc, size_t line)
{
	char where[4096];
	snprintf(where, sizeof(where), "%s:%zu (document %zu)", name, line, doc);
	if (!json_is_object(obj)) {
		cli_error("%s: the document is not an object", where);
		return -1;
	}
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	json_t *items = json_object_get(obj, "items");
	size_t len = kind ? strlen(kind) : 0;
	if (len >= 4 && strcmp(kind + len - 4, "List") == 0 && json_is_array(items)) {
		size_t i;
		json_t *it;
		json_array_foreach (items, i, it)
			if (add_object(l, it, name, doc, line) < 0)
				return -1;
		return 0;
	}
	if (!kind) {
		cli_error("%s: the object has no kind", where);
		return -1;
	}
	json_t *meta = json_object_get(obj, "metadata");
	if (!meta) {
		meta = json_object();
		if (!meta || json_object_set_new(obj, "metadata", meta) < 0)
			goto nomem;
	}
	if (!json_is_object(meta)) {
		cli_error("%s: metadata is not an object", where);
		return -1;
	}
	json_t *nsv = json_object_get(meta, "namespace");
	const char *ns = json_string_value(nsv);
	if (ns && *ns) {
		if (l->ns_explicit && strcmp(ns, l->ns) != 0) {
			cli_error(
				"%s: the namespace of the object (%s) does not match the one given "
				"with -n (%s)",
				where, ns, l->ns);
			return -1;
		}
	} else if (json_object_set_new(meta, "namespace", json_string(l->ns)) < 0) {
		goto nomem;
	}
	if (json_array_append(l->objs, obj) < 0 ||
	    json_array_append_new(l->origins, json_string(where)) < 0)
		goto nomem;
	return 0;
nomem:
	cli_error("out of memory");
	return -1;
}

static int load_text(struct loader *l, const char *name, const struct buf *text)
{
	json_t *docs = NULL;
	size_t *lines = NULL;
	struct yj_error e = { 0 };
	int ret = -1;
	if (yj_load(text->data ? text->data : "", text->len, &docs, &lines, &e) < 0) {
		if (e.line)
			cli_error("%s:%zu:%zu (document %zu): %s", name, e.line, e.column,
				  e.document, e.message);
		else
			cli_error("%s (document %zu): %s", name, e.document,
				  e.message[0] ? e.message : "cannot parse");
		goto out;
	}
	size_t i;
	json_t *d;
	json_array_foreach (docs, i, d)
		if (add_object(l, d, name, i + 1, lines ? lines[i] : 0) < 0)
			goto out;
	ret = 0;
out:
	json_decref(docs);
	free(lines);
	return ret;
}

static int load_file(struct loader *l, const char *path)
{
	struct buf text = BUF_INIT(CLI_MAX_INPUT);
	int fd = -1, ret = -1;
	if (strcmp(path, "-") == 0) {
		if (read_fd(STDIN_FILENO, "<stdin>", l, &text) < 0)
			goto out;
		ret = load_text(l, "<stdin>", &text);
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("%s: %s", path, strerror(errno));
		goto out;
	}
	if (read_fd(fd, path, l, &text) < 0)
		goto out;
	ret = load_text(l, path, &text);
out:
	if (fd >= 0)
		close(fd);
	buf_free(&text);
	return ret;
}

static bool wanted_name(const char *n)
{
	static const char *const suffixes[] = { ".yaml", ".yml", ".json" };
	size_t len = strlen(n);
	if (n[0] == '.')
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);
		if (len > sl && strcmp(n + len - sl, suffixes[i]) == 0)
			return true;
	}
	return false;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

#define CLI_MAX_DIR_FILES 100000

static int load_dir(struct loader *l, const char *dir)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	int ret = -1;
	struct dirent *de;
	if (!d) {
		cli_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (!wanted_name(de->d_name))
			continue;
		if (n == CLI_MAX_DIR_FILES) {
			cli_error("%s: more than %d files", dir, CLI_MAX_DIR_FILES);
			goto out;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nn = realloc(names, nc * sizeof(*nn));
			if (!nn)
				goto nomem;
			names = nn;
			cap = nc;
		}
		if (!(names[n] = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct buf path = BUF_INIT(8192);
		struct stat st;
		const char *sep = dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/";
		if (buf_printf(&path, "%s%s%s", dir, sep, names[i]) < 0) {
			buf_free(&path);
			goto nomem;
		}
		int r = stat(path.data, &st) == 0 && S_ISREG(st.st_mode) ? load_file(l, path.data) :
									   0;
		buf_free(&path);
		if (r < 0)
			goto out;
	}
	ret = 0;
	goto out;
nomem:
	cli_error("out of memory");
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return ret;
}

int cli_load_files(char *const *files, size_t nfiles, const char *ns, bool ns_explicit,
		   json_t **ret_objs, json_t **ret_origins)
{
	struct loader l = {
		.objs = json_array(), .origins = json_array(), .ns = ns, .ns_explicit = ns_explicit
	};
	if (!l.objs || !l.origins) {
		cli_error("out of memory");
		goto fail;
	}
	for (size_t i = 0; i < nfiles; i++) {
		struct stat st;
		int r;
		if (strcmp(files[i], "-") != 0 && stat(files[i], &st) == 0 && S_ISDIR(st.st_mode))
			r = load_dir(&l, files[i]);
		else
			r = load_file(&l, files[i]);
		if (r < 0)
			goto fail;
	}
	*ret_objs = l.objs;
	*ret_origins = l.origins;
	return 0;
fail:
	json_decref(l.objs);
	json_decref(l.origins);
	return -1;
}
