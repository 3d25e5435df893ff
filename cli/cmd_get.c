/* cmd_get — `ironbell get` and `ironbell describe`.
 *
 * get lists a kind (one namespace, or all with -A, filtered by -l) or
 * fetches the objects named, and prints them as a kubectl table (NAME, the
 * kind's printer columns, AGE; NAMESPACE first with -A), as JSON or YAML
 * (one object, or a v1 List), or as kind/name lines. Several kinds joined
 * by commas (`get hardware,workflows`) are fetched in turn and printed as
 * kubectl prints them: a table per kind, separated by a blank line, whose
 * names carry the kind ("hardware.tinkerbell.org/sm01"); one List for JSON
 * and YAML. `get leases` lists
 * the DHCP server's leases, which are not objects: MAC, IP, the Hardware
 * it was given for, state and time left.
 *
 * describe prints one object for people: its identity, labels and
 * annotations, then spec and status as indented YAML, then the object's
 * events. A Workflow shows its tasks and actions instead of the YAML of
 * its status, and its last CLI_WF_DESCRIBE_EVENTS events (cli/cmd_workflow.c).
 * A Secret's values are never printed, only their sizes (describe)
 * or CLI_REDACTED (-o json, -o yaml). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/cli.h"
#include "common/common.h"

#define GET_MAX_KINDS 16          /* kinds in one comma-separated list */
#define CLI_WF_DESCRIBE_EVENTS 20 /* events describe shows of a Workflow */

enum output {
	OUT_TABLE,
	OUT_WIDE,
	OUT_JSON,
	OUT_YAML,
	OUT_NAME
};

static int parse_output(const char *s, enum output *ret)
{
	static const char *const names[] = { "", "wide", "json", "yaml", "name" };
	for (size_t i = 1; i < ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (enum output)i;
			return 0;
		}
	return -1;
}

static void add_cell_owned(struct cli_table *t, char *s)
{
	cli_table_cell(t, s);
	free(s);
}

/* show_kind: names are "resource/name", as kubectl prints them when
 * several kinds are asked for. */
static struct cli_table *make_table(const struct cli_kind *k, const json_t *items, bool wide,
				    bool with_ns, bool show_kind)
{
	struct cli_table *t = cli_table_new();
	const struct cli_column *col;
	int64_t now = (int64_t)time(NULL);
	size_t i;
	json_t *o;
	if (!t)
		return NULL;
	cli_table_row(t);
	if (with_ns)
		cli_table_cell(t, "NAMESPACE");
	cli_table_cell(t, "NAME");
	for (col = k->columns; col->header; col++)
		if (wide || !col->wide)
			cli_table_cell(t, col->header);
	cli_table_cell(t, "AGE");
	json_array_foreach (items, i, o) {
		char age[32];
		cli_table_row(t);
		if (with_ns)
			cli_table_cell(t, cli_meta_string(o, "namespace"));
		if (show_kind) {
			char name[512];
			snprintf(name, sizeof(name), "%s/%s", k->resource,
				 cli_meta_string(o, "name") ?: "");
			cli_table_cell(t, name);
		} else {
			cli_table_cell(t, cli_meta_string(o, "name"));
		}
		for (col = k->columns; col->header; col++) {
			if (!wide && col->wide)
				continue;
			add_cell_owned(t, col->fn ? col->fn(o) : cli_json_path_text(o, col->path));
		}
		cli_object_age(o, now, age);
		cli_table_cell(t, age);
	}
	return t;
}

/* Prints items (or the one object, when single) in the chosen format. */
static int print_objects(struct cli *c, const struct cli_kind *k, json_t *items, bool single,
			 const char *rv, enum output out)
{
	size_t i;
	json_t *o;
	switch (out) {
	case OUT_TABLE:
	case OUT_WIDE: {
		if (json_array_size(items) == 0)
			return CLI_EXIT_OK;
		if (strcmp(k->kind, "Job") == 0)
			cli_bmc_count_tasks(c, items);
		struct cli_table *t = make_table(k, items, out == OUT_WIDE, c->all_ns, false);
		if (!t)
			return cli_error("out of memory");
		cli_table_print(t, stdout);
		cli_table_free(t);
		return CLI_EXIT_OK;
	}
	case OUT_NAME:
		json_array_foreach (items, i, o)
			printf("%s/%s\n", k->resource, cli_meta_string(o, "name"));
		return CLI_EXIT_OK;
	case OUT_JSON:
	case OUT_YAML: break;
	}
	json_t *v;
	if (single && json_array_size(items) == 1) {
		v = json_incref(json_array_get(items, 0));
	} else {
		v = json_pack("{s:s, s:s, s:{s:s}, s:O}", "apiVersion", "v1", "kind", "List",
			      "metadata", "resourceVersion", rv ? rv : "", "items", items);
	}
	if (!v)
		return cli_error("out of memory");
	cli_redact_secrets(v);
	int r = 0;
	if (out == OUT_JSON)
		cli_print_json(v, stdout);
	else
		r = cli_print_yaml(v, stdout, 0);
	json_decref(v);
	return r < 0 ? cli_error("cannot print YAML") : CLI_EXIT_OK;
}

/* GETs path; on 200 returns the JSON object, else prints the error and
 * returns NULL. *ret_code gets the HTTP code (0 when none came). */
static json_t *get_json(struct cli *c, const char *path, long *ret_code)
{
	struct cli_response resp = { 0 };
	json_t *v = NULL;
	*ret_code = 0;
	if (cli_request(c, "GET", path, NULL, NULL, 0, &resp) < 0)
		goto out;
	*ret_code = resp.code;
	if (resp.code != 200)
		cli_print_server_error(&resp);
	else
		v = cli_response_json(&resp);
out:
	cli_response_free(&resp);
	return v;
}

/* ---- leases ---- */

static bool is_leases(const char *s)
{
	return strcasecmp(s, "leases") == 0 || strcasecmp(s, "lease") == 0;
}

/* Does lease l match one of the names (a MAC in any case, or an IP)? */
static bool lease_named(const json_t *l, char **names, int n)
{
	const char *mac = json_string_value(json_object_get(l, "mac"));
	const char *ip = json_string_value(json_object_get(l, "ip"));
	if (n == 0)
		return true;
	for (int i = 0; i < n; i++)
		if ((mac && strcasecmp(names[i], mac) == 0) || (ip && strcmp(names[i], ip) == 0))
			return true;
	return false;
}

/* Time left until an RFC 3339 expiry, or "expired". */
static void lease_left(const char *expires, int64_t now, char out[static 32])
{
	int64_t t;
	if (!expires || cli_parse_time(expires, &t) < 0)
		snprintf(out, 32, "?");
	else if (t <= now)
		snprintf(out, 32, "expired");
	else
		cli_format_age(t - now, out);
}

/* `get leases [MAC|IP...]`: the DHCP server's leases (not Kubernetes
 * objects: no namespace of their own, no selector). */
static int get_leases(struct cli *c, char **names, int n, enum output out)
{
	json_t *list, *items, *keep, *l;
	int64_t now = (int64_t)time(NULL);
	int ret = CLI_EXIT_OK;
	long code;
	size_t i;

	list = get_json(c, "/apis/ironbell.dev/v1/leases", &code);
	if (!list)
		return CLI_EXIT_ERROR;
	items = json_object_get(list, "items");
	keep = json_array();
	if (!json_is_array(items) || !keep) {
		json_decref(list);
		json_decref(keep);
		return cli_error("the server's lease list has no items");
	}
	json_array_foreach (items, i, l)
		if (lease_named(l, names, n))
			json_array_append(keep, l);
	json_object_set_new(list, "items", keep);
	if (n && json_array_size(keep) == 0) {
		ret = cli_error("no lease for %s%s", names[0], n > 1 ? " or the others named" : "");
	} else if (out == OUT_JSON) {
		cli_print_json(list, stdout);
	} else if (out == OUT_YAML) {
		if (cli_print_yaml(list, stdout, 0) < 0)
			ret = cli_error("cannot print YAML");
	} else if (out == OUT_NAME) {
		json_array_foreach (keep, i, l)
			printf("lease/%s\n", json_string_value(json_object_get(l, "mac")));
	} else if (json_array_size(keep) == 0) {
		fprintf(stderr, "No leases found\n");
	} else {
		struct cli_table *t = cli_table_new();
		const char *head[] = { "MAC", "IP", "HARDWARE", "STATE", "EXPIRES", "STARTS",
				       "EXPIRES-AT" };
		if (!t) {
			json_decref(list);
			return cli_error("out of memory");
		}
		cli_table_row(t);
		for (size_t h = 0; h < (out == OUT_WIDE ? 7u : 5u); h++)
			cli_table_cell(t, head[h]);
		json_array_foreach (keep, i, l) {
			const char *ns = json_string_value(json_object_get(l, "namespace"));
			const char *name = json_string_value(json_object_get(l, "name"));
			const char *exp = json_string_value(json_object_get(l, "expires"));
			char hw[512], left[32];
			snprintf(hw, sizeof(hw), "%s%s%s", ns && *ns ? ns : "",
				 ns && *ns ? "/" : "", name && *name ? name : "<none>");
			lease_left(exp, now, left);
			cli_table_row(t);
			cli_table_cell(t, json_string_value(json_object_get(l, "mac")));
			cli_table_cell(t, json_string_value(json_object_get(l, "ip")));
			cli_table_cell(t, hw);
			cli_table_cell(t, json_string_value(json_object_get(l, "state")));
			cli_table_cell(t, left);
			if (out == OUT_WIDE) {
				cli_table_cell(t, json_string_value(json_object_get(l, "starts")));
				cli_table_cell(t, exp);
			}
		}
		cli_table_print(t, stdout);
		cli_table_free(t);
	}
	json_decref(list);
	return ret;
}

/* Resolves "hardware,workflows" into kinds (a repeated kind counts once).
 * Returns 0, -E2BIG for too many, or -EINVAL after printing the usage
 * error. */
static int parse_kinds(const char *arg, const struct cli_kind **kinds, size_t *ret_n)
{
	size_t n = 0;
	const char *p = arg;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char one[64];
		if (len == 0 || len >= sizeof(one)) {
			cli_usage_error("get", "unknown kind \"%.*s\" in \"%s\"", (int)len, p, arg);
			return -EINVAL;
		}
		memcpy(one, p, len);
		one[len] = '\0';
		if (is_leases(one)) {
			cli_usage_error("get", "leases cannot be listed with other kinds");
			return -EINVAL;
		}
		const struct cli_kind *k = cli_kind_parse(one);
		if (!k) {
			cli_usage_error("get", "unknown kind \"%s\"", one);
			return -EINVAL;
		}
		bool seen = false;
		for (size_t i = 0; i < n; i++)
			seen |= kinds[i] == k;
		if (!seen) {
			if (n == GET_MAX_KINDS)
				return -E2BIG;
			kinds[n++] = k;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	*ret_n = n;
	return 0;
}

/* Fetches the objects of kind k: the names given, or the list (one
 * namespace or all, filtered by selector). *ret_items gets a new array;
 * *ret_rv the list's resourceVersion (a new string, or NULL). Returns
 * CLI_EXIT_OK, or CLI_EXIT_ERROR after printing the error (the objects
 * found are still returned when a name was missing). */
static int fetch_kind(struct cli *c, const struct cli_kind *k, char **names, int nnames,
		      const char *selector, json_t **ret_items, char **ret_rv)
{
	struct buf path = BUF_INIT(64 * 1024);
	json_t *items = NULL, *list = NULL;
	int ret = CLI_EXIT_ERROR;
	long code;

	*ret_items = NULL;
	*ret_rv = NULL;
	if (nnames) {
		items = json_array();
		if (!items) {
			ret = cli_error("out of memory");
			goto out;
		}
		ret = CLI_EXIT_OK;
		for (int i = 0; i < nnames; i++) {
			buf_reset(&path);
			if (cli_kind_path(&path, k, c->ns, names[i], NULL) < 0) {
				ret = cli_error("out of memory");
				goto out;
			}
			json_t *obj = get_json(c, path.data, &code);
			if (!obj) {
				ret = CLI_EXIT_ERROR;
				if (code == 0)
					goto out; /* no server: do not try the others */
				continue;
			}
			json_array_append_new(items, obj);
		}
		*ret_items = items;
		items = NULL;
		goto out;
	}
	if (cli_kind_path(&path, k, c->all_ns ? NULL : c->ns, NULL, NULL) < 0 ||
	    (selector && cli_query_add(&path, "labelSelector", selector) < 0)) {
		ret = cli_error("out of memory");
		goto out;
	}
	list = get_json(c, path.data, &code);
	if (!list)
		goto out;
	items = json_incref(json_object_get(list, "items"));
	if (!json_is_array(items)) {
		ret = cli_error("the server's list has no items");
		goto out;
	}
	const char *rv =
		json_string_value(json_object_get(json_object_get(list, "metadata"), "resourceVersion"));
	if (rv && !(*ret_rv = strdup(rv))) {
		ret = cli_error("out of memory");
		goto out;
	}
	*ret_items = items;
	items = NULL;
	ret = CLI_EXIT_OK;
out:
	json_decref(items);
	json_decref(list);
	buf_free(&path);
	return ret;
}

static void no_resources(const struct cli *c)
{
	if (c->all_ns)
		fprintf(stderr, "No resources found\n");
	else
		fprintf(stderr, "No resources found in %s namespace.\n", c->ns);
}

/* `get KIND [NAME...]`. */
static int get_one_kind(struct cli *c, const struct cli_kind *k, char **names, int nnames,
			const char *selector, enum output out)
{
	json_t *items;
	char *rv;
	int ret = fetch_kind(c, k, names, nnames, selector, &items, &rv);
	if (!items)
		return ret;
	if (!nnames && json_array_size(items) == 0 && (out == OUT_TABLE || out == OUT_WIDE))
		no_resources(c);
	else {
		int r = print_objects(c, k, items, nnames == 1, rv, out);
		if (r != CLI_EXIT_OK)
			ret = r;
	}
	json_decref(items);
	free(rv);
	return ret;
}

/* `get KIND,KIND... [NAME...]`: every kind in turn, each name in each. */
static int get_kinds(struct cli *c, const struct cli_kind **kinds, size_t nkinds, char **names,
		     int nnames, const char *selector, enum output out)
{
	json_t *all = json_array();
	int ret = CLI_EXIT_OK;
	size_t shown = 0, i;
	json_t *o;
	if (!all)
		return cli_error("out of memory");
	for (size_t n = 0; n < nkinds; n++) {
		json_t *items;
		char *rv;
		int r = fetch_kind(c, kinds[n], names, nnames, selector, &items, &rv);
		free(rv);
		if (r != CLI_EXIT_OK)
			ret = r;
		if (!items) {
			if (r != CLI_EXIT_OK && !nnames)
				break; /* the list failed: the server said why */
			continue;
		}
		if (out == OUT_TABLE || out == OUT_WIDE) {
			if (json_array_size(items)) {
				if (strcmp(kinds[n]->kind, "Job") == 0)
					cli_bmc_count_tasks(c, items);
				struct cli_table *t = make_table(kinds[n], items, out == OUT_WIDE,
								 c->all_ns, true);
				if (!t) {
					json_decref(items);
					ret = cli_error("out of memory");
					break;
				}
				if (shown++)
					printf("\n");
				cli_table_print(t, stdout);
				cli_table_free(t);
			}
		} else if (out == OUT_NAME) {
			json_array_foreach (items, i, o)
				printf("%s/%s\n", kinds[n]->resource, cli_meta_string(o, "name"));
		} else {
			json_array_extend(all, items);
		}
		json_decref(items);
	}
	if ((out == OUT_TABLE || out == OUT_WIDE) && shown == 0 && ret == CLI_EXIT_OK && !nnames)
		no_resources(c);
	if ((out == OUT_JSON || out == OUT_YAML) && ret == CLI_EXIT_OK) {
		int r = print_objects(c, kinds[0], all, false, NULL, out);
		if (r != CLI_EXIT_OK)
			ret = r;
	}
	json_decref(all);
	return ret;
}

int cli_cmd_get(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_GLOBAL_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "selector", required_argument, NULL, 'l' },
		{ 0 },
	};
	enum output out = OUT_TABLE;
	const char *selector = NULL;
	int o;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS "o:l:", opts, NULL)) != -1) {
		if (o == 'o') {
			if (parse_output(optarg, &out) < 0)
				return cli_usage_error("get",
						       "unknown output format \"%s\" "
						       "(wide, json, yaml, name)",
						       optarg);
		} else if (o == 'l') {
			selector = optarg;
		} else {
			int r = cli_global_option(c, o, optarg);
			if (r <= 0)
				return r == 0 ? cli_help("get") : cli_usage("get");
		}
	}
	if (optind >= argc)
		return cli_usage_error("get", "get needs a KIND");
	if (is_leases(argv[optind])) {
		if (selector)
			return cli_usage_error("get", "leases have no labels: -l does not apply");
		return get_leases(c, argv + optind + 1, argc - optind - 1, out);
	}
	const struct cli_kind *kinds[GET_MAX_KINDS];
	size_t nkinds = 0;
	int r = parse_kinds(argv[optind], kinds, &nkinds);
	if (r < 0)
		return r == -E2BIG ? cli_usage_error("get", "more than %d kinds", GET_MAX_KINDS) :
				     CLI_EXIT_USAGE;
	int nnames = argc - optind - 1;
	if (nnames && selector)
		return cli_usage_error("get", "names cannot be given with -l");
	if (nnames && c->all_ns)
		return cli_usage_error("get", "names cannot be given with -A");
	if (nkinds == 1)
		return get_one_kind(c, kinds[0], argv + optind + 1, nnames, selector, out);
	return get_kinds(c, kinds, nkinds, argv + optind + 1, nnames, selector, out);
}

/* ---- describe ---- */

static void describe_map(const char *title, const json_t *m)
{
	const char *key;
	const json_t *v;
	bool first = true;
	printf("%-13s", title);
	if (!json_is_object(m) || json_object_size(m) == 0) {
		printf("<none>\n");
		return;
	}
	json_object_foreach ((json_t *)m, key, v) {
		char *text = json_is_string(v) ? strdup(json_string_value(v)) :
						 json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		printf("%*s%s=%s\n", first ? 0 : 13, "", key, text ? text : "");
		free(text);
		first = false;
	}
}

/* Sizes of a Secret's values, never the values. */
static void describe_secret_data(const json_t *obj)
{
	const char *key;
	const json_t *v;
	const json_t *data = json_object_get(obj, "data");
	const json_t *sdata = json_object_get(obj, "stringData");
	printf("Type:        %s\n\nData\n====\n",
	       json_string_value(json_object_get(obj, "type")) ?: "Opaque");
	if (json_is_object(data))
		json_object_foreach ((json_t *)data, key, v) {
			/* base64: 4 characters carry 3 bytes, '=' pads */
			size_t n = json_string_length(v), pad = 0;
			const char *s = json_string_value(v);
			while (s && n > pad && s[n - 1 - pad] == '=' && pad < 2)
				pad++;
			printf("%s:  %zu bytes\n", key, n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0) - pad);
		}
	if (json_is_object(sdata))
		json_object_foreach ((json_t *)sdata, key, v)
			if (!json_object_get(data, key))
				printf("%s:  %zu bytes\n", key, json_string_length(v));
}

/* Prints the object's events, oldest first; only the last max of them
 * when max is not 0. */
static void describe_events(struct cli *c, const struct cli_kind *k, const char *ns,
			    const char *name, size_t max)
{
	struct buf path = BUF_INIT(8192);
	json_t *list = NULL, *ev;
	struct cli_table *t = NULL;
	long code;
	size_t i;
	int64_t now = (int64_t)time(NULL);
	if (buf_puts(&path, "/apis/ironbell.dev/v1/events") < 0 ||
	    cli_query_add(&path, "kind", k->kind) < 0 ||
	    cli_query_add(&path, "namespace", ns) < 0 || cli_query_add(&path, "name", name) < 0 ||
	    cli_query_add(&path, "limit", "10000") < 0)
		goto out;
	list = get_json(c, path.data, &code);
	json_t *items = json_object_get(list, "items");
	if (!list) {
		printf("Events:       <unavailable>\n");
		goto out;
	}
	if (json_array_size(items) == 0) {
		printf("Events:       <none>\n");
		goto out;
	}
	size_t skip = max && json_array_size(items) > max ? json_array_size(items) - max : 0;
	if (skip)
		printf("Events:       (the last %zu; %zu earlier: ironbell events %s %s)\n", max,
		       skip, k->singular, name);
	else
		printf("Events:\n");
	if (!(t = cli_table_new()))
		goto out;
	cli_table_row(t);
	cli_table_cell(t, "  TYPE");
	cli_table_cell(t, "REASON");
	cli_table_cell(t, "AGE");
	cli_table_cell(t, "MESSAGE");
	json_array_foreach (items, i, ev) {
		char age[32], type[64];
		int64_t when;
		if (i < skip)
			continue;
		snprintf(type, sizeof(type), "  %s",
			 json_string_value(json_object_get(ev, "type")) ?: "");
		if (cli_parse_time(json_string_value(json_object_get(ev, "time")), &when) == 0)
			cli_format_age(now - when, age);
		else
			snprintf(age, sizeof(age), "<unknown>");
		cli_table_row(t);
		cli_table_cell(t, type);
		cli_table_cell(t, json_string_value(json_object_get(ev, "reason")));
		cli_table_cell(t, age);
		cli_table_cell(t, json_string_value(json_object_get(ev, "message")));
	}
	cli_table_print(t, stdout);
out:
	cli_table_free(t);
	json_decref(list);
	buf_free(&path);
}

static void describe_object(struct cli *c, const struct cli_kind *k, const json_t *obj)
{
	const json_t *meta = json_object_get(obj, "metadata");
	static const char *const shown[] = { "name", "namespace", "labels", "annotations",
					     "managedFields" };
	const char *key;
	const json_t *v;
	printf("Name:        %s\n", cli_meta_string(obj, "name") ?: "");
	printf("Namespace:   %s\n", cli_meta_string(obj, "namespace") ?: "");
	describe_map("Labels:", json_object_get(meta, "labels"));
	describe_map("Annotations:", json_object_get(meta, "annotations"));
	printf("API Version: %s\n", json_string_value(json_object_get(obj, "apiVersion")) ?: "");
	printf("Kind:        %s\n", json_string_value(json_object_get(obj, "kind")) ?: "");
	printf("Metadata:\n");
	json_object_foreach ((json_t *)meta, key, v) {
		bool skip = false;
		for (size_t i = 0; i < ARRAY_SIZE(shown); i++)
			skip |= strcmp(key, shown[i]) == 0;
		if (skip)
			continue;
		json_t *one = json_pack("{s:O}", key, (json_t *)v);
		if (one)
			cli_print_yaml(one, stdout, 2);
		json_decref(one);
	}
	if (strcmp(k->kind, "Hardware") == 0)
		cli_bmc_describe_hardware(c, obj);
	if (strcmp(k->kind, "Secret") == 0) {
		describe_secret_data(obj);
	} else if (strcmp(k->kind, "Workflow") == 0) {
		cli_wf_describe(obj, stdout);
	} else {
		json_object_foreach ((json_t *)obj, key, v) {
			if (strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0 ||
			    strcmp(key, "metadata") == 0)
				continue;
			printf("%c%s:",
			       key[0] >= 'a' && key[0] <= 'z' ? key[0] - 'a' + 'A' : key[0],
			       key + 1);
			if (json_is_object(v) || json_is_array(v)) {
				printf("\n");
				cli_print_yaml(v, stdout, 2);
			} else {
				char *text = cli_json_path_text(obj, key);
				printf("  %s\n", text ? text : "<none>");
				free(text);
			}
		}
	}
	describe_events(c, k, cli_meta_string(obj, "namespace") ?: c->ns,
			cli_meta_string(obj, "name") ?: "",
			strcmp(k->kind, "Workflow") == 0 ? CLI_WF_DESCRIBE_EVENTS : 0);
}

int cli_cmd_describe(struct cli *c, int argc, char **argv)
{
	static const struct option opts[] = { CLI_GLOBAL_LONGOPTS, { 0 } };
	struct buf path = BUF_INIT(8192);
	int ret = CLI_EXIT_OK, o;
	long code;
	optind = 0;
	while ((o = getopt_long(argc, argv, CLI_GLOBAL_SHORTOPTS, opts, NULL)) != -1) {
		int r = cli_global_option(c, o, optarg);
		if (r <= 0)
			return r == 0 ? cli_help("describe") : cli_usage("describe");
	}
	if (argc - optind < 2)
		return cli_usage_error("describe", "describe needs KIND NAME");
	if (c->all_ns)
		return cli_usage_error("describe", "-A cannot be used with describe");
	const struct cli_kind *k = cli_kind_parse(argv[optind]);
	if (!k)
		return cli_usage_error("describe", "unknown kind \"%s\"", argv[optind]);
	for (int i = optind + 1; i < argc; i++) {
		buf_reset(&path);
		if (cli_kind_path(&path, k, c->ns, argv[i], NULL) < 0) {
			ret = cli_error("out of memory");
			break;
		}
		json_t *obj = get_json(c, path.data, &code);
		if (!obj) {
			ret = CLI_EXIT_ERROR;
			if (code == 0)
				break;
			continue;
		}
		if (i > optind + 1)
			printf("\n\n");
		describe_object(c, k, obj);
		json_decref(obj);
	}
	buf_free(&path);
	return ret;
}
