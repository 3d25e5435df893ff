/* cmd_apply — `ironbell apply` and `ironbell delete`.
 *
 * apply sends every object of every -f file in ONE request to the
 * daemon's apply endpoint, which stores them in one transaction: either
 * every document is stored or none is. The files are parsed completely
 * first (cli/load.c), so a YAML error anywhere sends nothing. Results are
 * printed as kubectl prints them ("hardware.tinkerbell.org/m1 created").
 *
 * delete removes objects named on the command line or found in -f files,
 * one request each (a delete is not atomic across objects, as in kubectl). */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/common.h"

#define APPLY_PATH "/apis/ironbell.dev/v1/apply"

/* The index i of "(item i)" in a Status message, or of "items[i]" in its
 * details.causes[0].field; -1 when neither is there. */
static long failed_item(const json_t *st)
{
	const char *field = json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(st, "details"), "causes"), 0),
		"field"));
	const char *msg = json_string_value(json_object_get(st, "message"));
	const char *p = NULL, *end = NULL;
	uint64_t v;
	if (field && strncmp(field, "items[", 6) == 0) {
		p = field + 6;
		end = strchr(p, ']');
	} else if (msg && (p = strstr(msg, "(item "))) {
		p += 6;
		end = strchr(p, ')');
	}
	if (!p || !end || num_parse_u64(p, (size_t)(end - p), 1u << 30, &v) < 0)
		return -1;
	return (long)v;
}

static const char *resource_of(const json_t *obj, char *tmp, size_t n)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const struct cli_kind *k = cli_kind_from_object(av, kind);
	if (!k)
		k = cli_kind_by_name(kind);
	if (k)
		return k->resource;
	snprintf(tmp, n, "%s", kind ? kind : "object");
	for (char *p = tmp; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return tmp;
}

static int print_apply_result(const struct cli_response *resp)
{
	json_t *res = cli_response_json(resp);
	json_t *items = json_object_get(res, "items");
	size_t i;
	json_t *it;
	if (!json_is_array(items)) {
		json_decref(res);
		return res ? cli_error("the server's answer has no items") : CLI_EXIT_ERROR;
	}
	json_array_foreach (items, i, it) {
		char tmp[128];
		const char *name = json_string_value(json_object_get(it, "name"));
		const char *result = json_string_value(json_object_get(it, "result"));
		printf("%s/%s %s\n", resource_of(it, tmp, sizeof(tmp)), name ? name : "?",
		       result ? result : "applied");
	}
	json_decref(res);
	return CLI_EXIT_OK;
}

int cli_cmd_apply(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "filename", required_argument, NULL, 'f' },
		{ 0 },
	};
	char **files = calloc((size_t)argc + 1, sizeof(*files));
	size_t nfiles = 0;
	json_t *objs = NULL, *origins = NULL;
	char *body = NULL;
	struct cli_response resp = { 0 };
	int ret = CLI_EXIT_ERROR, o;
	if (!files)
		return cli_error("out of memory");
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS "f:", opts, NULL)) != -1) {
		if (o == 'f') {
			files[nfiles++] = optarg;
			continue;
		}
		int r = cli_global_option(c, o, optarg);
		if (r <= 0) {
			ret = r == 0 ? cli_help("apply") : cli_usage("apply");
			goto out;
		}
	}
	if (optind < argc) {
		ret = cli_usage_error("apply", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (nfiles == 0) {
		ret = cli_usage_error("apply", "apply needs -f FILE");
		goto out;
	}
	if (c->all_ns) {
		ret = cli_usage_error("apply", "-A cannot be used with apply");
		goto out;
	}
	if (cli_load_files(files, nfiles, c->ns, c->ns_set, &objs, &origins) < 0)
		goto out;
	if (json_array_size(objs) == 0) {
		ret = cli_error("no objects passed to apply");
		goto out;
	}
	body = json_dumps(objs, JSON_COMPACT);
	if (!body) {
		ret = cli_error("out of memory");
		goto out;
	}
	if (cli_request(c, "POST", APPLY_PATH, "application/json", body, strlen(body), &resp) < 0)
		goto out;
	if (resp.code != 200) {
		cli_print_server_error(&resp);
		json_t *st = cli_response_status(&resp);
		long i = failed_item(st);
		const char *where = json_string_value(json_array_get(origins, (size_t)i));
		if (i >= 0 && where)
			fprintf(stderr, "error: the object refused is %s; nothing was applied\n",
				where);
		else if (resp.code != 401 && resp.code != 403 && resp.code != 404)
			fprintf(stderr, "error: nothing was applied\n");
		json_decref(st);
		goto out;
	}
	ret = print_apply_result(&resp);
out:
	cli_response_free(&resp);
	free(body);
	json_decref(objs);
	json_decref(origins);
	free(files);
	return ret;
}

/* Deletes one object; prints the outcome. Returns 0, -1 when the server
 * refused, or -2 when it could not be reached (no use trying the others). */
static int delete_one(struct cli *c, const struct cli_kind *k, const char *ns, const char *name,
		      bool ignore_not_found)
{
	struct buf path = BUF_INIT(8192);
	struct cli_response resp = { 0 };
	int ret = -1;
	if (cli_kind_path(&path, k, ns, name, NULL) < 0) {
		cli_error("out of memory");
		goto out;
	}
	if (cli_request(c, "DELETE", path.data, NULL, NULL, 0, &resp) < 0) {
		ret = -2;
		goto out;
	}
	if (resp.code == 404 && ignore_not_found) {
		ret = 0;
	} else if (resp.code >= 200 && resp.code < 300) {
		printf("%s \"%s\" deleted\n", k->resource, name);
		ret = 0;
	} else {
		cli_print_server_error(&resp);
	}
out:
	cli_response_free(&resp);
	buf_free(&path);
	return ret;
}

static int delete_files(struct cli *c, char **files, size_t nfiles, bool ignore_not_found)
{
	json_t *objs = NULL, *origins = NULL, *o;
	size_t i;
	int ret = CLI_EXIT_ERROR;
	if (cli_load_files(files, nfiles, c->ns, c->ns_set, &objs, &origins) < 0)
		return CLI_EXIT_ERROR;
	/* Check every object before deleting any. */
	json_array_foreach (objs, i, o) {
		const char *av = json_string_value(json_object_get(o, "apiVersion"));
		const char *kind = json_string_value(json_object_get(o, "kind"));
		if (!cli_kind_from_object(av, kind)) {
			cli_error("%s: unknown kind %s %s",
				  json_string_value(json_array_get(origins, i)), av ? av : "",
				  kind ? kind : "");
			goto out;
		}
		if (!cli_meta_string(o, "name")) {
			cli_error("%s: the object has no metadata.name",
				  json_string_value(json_array_get(origins, i)));
			goto out;
		}
	}
	ret = CLI_EXIT_OK;
	json_array_foreach (objs, i, o) {
		const struct cli_kind *k =
			cli_kind_from_object(json_string_value(json_object_get(o, "apiVersion")),
					     json_string_value(json_object_get(o, "kind")));
		int r = delete_one(c, k, cli_meta_string(o, "namespace"),
				   cli_meta_string(o, "name"), ignore_not_found);
		if (r < 0)
			ret = CLI_EXIT_ERROR;
		if (r == -2)
			break;
	}
out:
	json_decref(objs);
	json_decref(origins);
	return ret;
}

int cli_cmd_delete(struct cli *c, int argc, char **argv)
{
	enum {
		OPT_IGNORE = CLI_OPT_COMMAND
	};
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "filename", required_argument, NULL, 'f' },
		{ "ignore-not-found", no_argument, NULL, OPT_IGNORE },
		{ 0 },
	};
	char **files = calloc((size_t)argc + 1, sizeof(*files));
	size_t nfiles = 0;
	bool ignore = false;
	int ret = CLI_EXIT_OK, o;
	if (!files)
		return cli_error("out of memory");
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS "f:", opts, NULL)) != -1) {
		if (o == 'f') {
			files[nfiles++] = optarg;
		} else if (o == OPT_IGNORE) {
			ignore = true;
		} else {
			int r = cli_global_option(c, o, optarg);
			if (r <= 0) {
				ret = r == 0 ? cli_help("delete") : cli_usage("delete");
				goto out;
			}
		}
	}
	if (c->all_ns) {
		ret = cli_usage_error("delete", "-A cannot be used with delete");
		goto out;
	}
	if (nfiles) {
		if (optind < argc)
			ret = cli_usage_error("delete", "names cannot be given with -f");
		else
			ret = delete_files(c, files, nfiles, ignore);
		goto out;
	}
	if (argc - optind < 2) {
		ret = cli_usage_error("delete", optind < argc ?
							"delete needs a NAME" :
							"delete needs KIND NAME... or -f FILE");
		goto out;
	}
	const struct cli_kind *k = cli_kind_parse(argv[optind]);
	if (!k) {
		ret = cli_usage_error("delete", "unknown kind \"%s\"", argv[optind]);
		goto out;
	}
	for (int i = optind + 1; i < argc; i++) {
		int r = delete_one(c, k, c->ns, argv[i], ignore);
		if (r < 0)
			ret = CLI_EXIT_ERROR;
		if (r == -2)
			break;
	}
out:
	free(files);
	return ret;
}
