/* check_api — the pure half of the admin API (daemon/api/api.c): the route
 * parser with tables of good and malformed paths, the query-string parser,
 * percent-decoding, errno -> status mapping, Status rendering, Content-Type
 * classification, the token compare and host:port splitting. */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "common/net.h"
#include "daemon/api/api.h"
#include "tests/unit/unit.h"

/* ---- routes ---- */

static const struct {
	const char *path;
	enum api_route_type type;
	enum store_kind kind; /* STORE_KIND_MAX for special routes */
	const char *ns, *name;
	const char *template_;
} good_routes[] = {
	{ "/apis/tinkerbell.org/v1alpha1/hardware", API_ROUTE_LIST_ALL, STORE_KIND_HARDWARE, "", "",
	  "/apis/{group}/{version}/{plural}" },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/default/hardware", API_ROUTE_LIST_NS,
	  STORE_KIND_HARDWARE, "default", "", "/apis/{group}/{version}/namespaces/{ns}/{plural}" },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/default/hardware/sm01", API_ROUTE_OBJECT,
	  STORE_KIND_HARDWARE, "default", "sm01",
	  "/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}" },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/tink-system/workflows/wf.a-1/status",
	  API_ROUTE_STATUS, STORE_KIND_WORKFLOW, "tink-system", "wf.a-1",
	  "/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}/status" },
	{ "/apis/tinkerbell.org/v1alpha1/templates", API_ROUTE_LIST_ALL, STORE_KIND_TEMPLATE, "",
	  "", "/apis/{group}/{version}/{plural}" },
	{ "/apis/bmc.tinkerbell.org/v1alpha1/namespaces/a/machines/m", API_ROUTE_OBJECT,
	  STORE_KIND_MACHINE, "a", "m", "/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}" },
	{ "/apis/bmc.tinkerbell.org/v1alpha1/jobs", API_ROUTE_LIST_ALL, STORE_KIND_JOB, "", "",
	  "/apis/{group}/{version}/{plural}" },
	{ "/apis/bmc.tinkerbell.org/v1alpha1/namespaces/x/tasks", API_ROUTE_LIST_NS,
	  STORE_KIND_TASK, "x", "", "/apis/{group}/{version}/namespaces/{ns}/{plural}" },
	{ "/api/v1/secrets", API_ROUTE_LIST_ALL, STORE_KIND_SECRET, "", "",
	  "/api/{version}/{plural}" },
	{ "/api/v1/namespaces/default/secrets/bmc-creds", API_ROUTE_OBJECT, STORE_KIND_SECRET,
	  "default", "bmc-creds", "/api/{version}/namespaces/{ns}/{plural}/{name}" },
	{ "/apis/ironbell.dev/v1/apply", API_ROUTE_APPLY, STORE_KIND_MAX, "", "",
	  "/apis/ironbell.dev/v1/apply" },
	{ "/apis/ironbell.dev/v1/events", API_ROUTE_EVENTS, STORE_KIND_MAX, "", "",
	  "/apis/ironbell.dev/v1/events" },
	{ "/apis/ironbell.dev/v1/leases", API_ROUTE_LEASES, STORE_KIND_MAX, "", "",
	  "/apis/ironbell.dev/v1/leases" },
	{ "/version", API_ROUTE_VERSION, STORE_KIND_MAX, "", "", "/version" },
	{ "/healthz", API_ROUTE_HEALTHZ, STORE_KIND_MAX, "", "", "/healthz" },
	{ "/readyz", API_ROUTE_READYZ, STORE_KIND_MAX, "", "", "/readyz" },
	{ "/metrics", API_ROUTE_METRICS, STORE_KIND_MAX, "", "", "/metrics" },
	/* a 63-byte namespace and a 253-byte name are the limits */
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/"
	  "a23456789012345678901234567890123456789012345678901234567890123/hardware",
	  API_ROUTE_LIST_NS, STORE_KIND_HARDWARE,
	  "a23456789012345678901234567890123456789012345678901234567890123", "",
	  "/apis/{group}/{version}/namespaces/{ns}/{plural}" },
};

START_TEST(test_route_good)
{
	for (size_t i = 0; i < sizeof(good_routes) / sizeof(good_routes[0]); i++) {
		struct api_route r;
		const char *p = good_routes[i].path;
		ck_assert_msg(api_route_parse(p, strlen(p), &r) == 0, "%s", p);
		ck_assert_int_eq(r.type, good_routes[i].type);
		if (good_routes[i].kind != STORE_KIND_MAX) {
			ck_assert_int_eq(r.kind, good_routes[i].kind);
			ck_assert_str_eq(r.group, store_kind_info(r.kind)->group);
			ck_assert_str_eq(r.version, store_kind_info(r.kind)->version);
		}
		ck_assert_str_eq(r.ns, good_routes[i].ns);
		ck_assert_str_eq(r.name, good_routes[i].name);
		ck_assert_str_eq(api_route_template(&r), good_routes[i].template_);
		ck_assert_int_eq(r.status, r.type == API_ROUTE_STATUS);
	}
}
END_TEST

START_TEST(test_route_long_name)
{
	/* 253 bytes: four labels of 62 and one of 1, joined by dots */
	char name[254], path[512];
	memset(name, 'a', 253);
	name[253] = '\0';
	for (int i = 62; i < 253; i += 63)
		name[i] = '.';
	snprintf(path, sizeof(path), "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/%s",
		 name);
	struct api_route r;
	ck_assert_int_eq(api_route_parse(path, strlen(path), &r), 0);
	ck_assert_str_eq(r.name, name);
	/* 254 bytes is one too many */
	snprintf(path, sizeof(path), "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/%sa",
		 name);
	ck_assert_int_eq(api_route_parse(path, strlen(path), &r), -EINVAL);
}
END_TEST

static const struct {
	const char *path;
	int err;
} bad_routes[] = {
	{ "", -EINVAL },
	{ "healthz", -EINVAL },
	{ "/", -EINVAL },
	{ "//healthz", -EINVAL },
	{ "/healthz/", -EINVAL },
	{ "/healthzz", -ENOENT },
	{ "/apis", -ENOENT },
	{ "/apis/tinkerbell.org", -ENOENT },
	{ "/apis/tinkerbell.org/v1alpha1", -ENOENT },
	{ "/apis/tinkerbell.org/v1alpha2/hardware", -ENOENT },  /* unknown version */
	{ "/apis/tinkerbell.com/v1alpha1/hardware", -ENOENT },  /* unknown group */
	{ "/apis/tinkerbell.org/v1alpha1/machines", -ENOENT },  /* plural of another group */
	{ "/apis/tinkerbell.org/v1alpha1/hardwares", -ENOENT }, /* unknown plural */
	{ "/apis/tinkerbell.org/v1alpha1/Hardware", -ENOENT },  /* kinds are not plurals */
	{ "/apis//v1/secrets", -EINVAL },                       /* empty segment */
	{ "/apis/tinkerbell.org/v1alpha1/hardware/", -EINVAL }, /* trailing slash */
	{ "/apis/tinkerbell.org/v1alpha1//hardware", -EINVAL },
	{ "/api/v1/hardware", -ENOENT }, /* not in the core group */
	{ "/api/v2/secrets", -ENOENT },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/default", -ENOENT },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/Default/hardware", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/-a/hardware", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/a.b/hardware", -EINVAL }, /* ns is a label */
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/"
	  "a234567890123456789012345678901234567890123456789012345678901234/hardware",
	  -EINVAL }, /* 64 bytes */
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/..", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/.", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/../hardware", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/a..b", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/.a", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/a.", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/A", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/a_b", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/a%2Fb",
	  -EINVAL }, /* never decoded */
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/%61", -EINVAL },
	{ "/apis/tinkerbell%2Eorg/v1alpha1/hardware", -EINVAL },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/x/scale", -ENOENT },
	{ "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/x/status/y", -ENOENT },
	{ "/apis/ironbell.dev/v1", -ENOENT },
	{ "/apis/ironbell.dev/v1/apply/x", -ENOENT },
	{ "/apis/ironbell.dev/v2/apply", -ENOENT },
	{ "/apis/ironbell.dev/v1/hardware", -ENOENT },
	{ "/a/b/c/d/e/f/g/h/i/j", -ENOENT }, /* more segments than any route */
};

START_TEST(test_route_bad)
{
	for (size_t i = 0; i < sizeof(bad_routes) / sizeof(bad_routes[0]); i++) {
		struct api_route r = { .type = API_ROUTE_MAX };
		const char *p = bad_routes[i].path;
		int e = api_route_parse(p, strlen(p), &r);
		ck_assert_msg(e == bad_routes[i].err, "%s: %d", p, e);
		ck_assert_int_eq(r.type, API_ROUTE_MAX); /* untouched on failure */
	}
}
END_TEST

START_TEST(test_route_embedded_nul_and_length)
{
	struct api_route r;
	static const char p[] = "/healthz\0/x";
	ck_assert_int_eq(api_route_parse(p, sizeof(p) - 1, &r), -EINVAL);
	ck_assert_int_eq(api_route_parse(p, 8, &r), 0); /* only len bytes count */
	char big[API_MAX_PATH + 2];
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(api_route_parse(big, strlen(big), &r), -EINVAL);
	ck_assert_str_eq(api_route_template(NULL), "other");
}
END_TEST

START_TEST(test_route_methods)
{
	struct api_route r;
	const char *p = "/apis/tinkerbell.org/v1alpha1/hardware";
	ck_assert_int_eq(api_route_parse(p, strlen(p), &r), 0);
	unsigned m = api_route_methods(&r);
	ck_assert(m & API_METHOD_BIT(API_METHOD_GET));
	ck_assert(!(m & API_METHOD_BIT(API_METHOD_POST))); /* create needs a namespace */
	p = "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware";
	ck_assert_int_eq(api_route_parse(p, strlen(p), &r), 0);
	ck_assert(api_route_methods(&r) & API_METHOD_BIT(API_METHOD_POST));
	ck_assert(!(api_route_methods(&r) & API_METHOD_BIT(API_METHOD_DELETE)));
	p = "/apis/tinkerbell.org/v1alpha1/namespaces/d/hardware/x/status";
	ck_assert_int_eq(api_route_parse(p, strlen(p), &r), 0);
	m = api_route_methods(&r);
	ck_assert(m & API_METHOD_BIT(API_METHOD_PATCH));
	ck_assert(!(m & API_METHOD_BIT(API_METHOD_DELETE)));
	p = "/apis/ironbell.dev/v1/apply";
	ck_assert_int_eq(api_route_parse(p, strlen(p), &r), 0);
	ck_assert_uint_eq(api_route_methods(&r), API_METHOD_BIT(API_METHOD_POST));
	ck_assert_int_eq(api_method_parse("GET"), API_METHOD_GET);
	ck_assert_int_eq(api_method_parse("PATCH"), API_METHOD_PATCH);
	ck_assert_int_eq(api_method_parse("get"), API_METHOD_OTHER);
	ck_assert_int_eq(api_method_parse("OPTIONS"), API_METHOD_OTHER);
	ck_assert_int_eq(api_method_parse(NULL), API_METHOD_OTHER);
}
END_TEST

/* ---- query strings ---- */

START_TEST(test_query_good)
{
	struct api_query q;
	char err[256];
	api_query_init(&q);
	ck_assert(!q.watch && !q.have_rv && !q.have_selector);
	ck_assert_uint_eq(q.limit, API_EVENTS_LIMIT_DEFAULT);
	static const char s[] =
		"watch=1&resourceVersion=42&labelSelector=env%3Dprod%2Ctier+in+(a%2Cb)"
		"&pretty=1&&kind=hw&namespace=default&name=sm01&after=7&limit=99999";
	ck_assert_int_eq(api_query_parse(&q, s, strlen(s), err, sizeof(err)), 0);
	ck_assert(q.watch);
	ck_assert(q.have_rv);
	ck_assert_uint_eq(q.resource_version, 42);
	ck_assert(q.have_selector);
	ck_assert_str_eq(q.label_selector, "env=prod,tier in (a,b)");
	ck_assert_str_eq(q.kind, "hw");
	ck_assert_str_eq(q.namespace_, "default");
	ck_assert_str_eq(q.name, "sm01");
	ck_assert_uint_eq(q.after, 7);
	ck_assert_uint_eq(q.limit, API_EVENTS_LIMIT_MAX); /* clamped */

	api_query_init(&q);
	ck_assert_int_eq(api_query_set(&q, "watch", "true", err, sizeof(err)), 0);
	ck_assert(q.watch);
	ck_assert_int_eq(api_query_set(&q, "watch", "false", err, sizeof(err)), 0);
	ck_assert(!q.watch);
	ck_assert_int_eq(api_query_set(&q, "watch", NULL, err, sizeof(err)), 0);
	ck_assert(q.watch);
	ck_assert_int_eq(api_query_set(&q, "resourceVersion", "", err, sizeof(err)), 0);
	ck_assert(!q.have_rv);
	ck_assert_int_eq(api_query_set(&q, "resourceVersion", "0", err, sizeof(err)), 0);
	ck_assert(q.have_rv);
	ck_assert_uint_eq(q.resource_version, 0);
	ck_assert_int_eq(api_query_set(&q, "limit", "0", err, sizeof(err)), 0);
	ck_assert_uint_eq(q.limit, API_EVENTS_LIMIT_DEFAULT);
	ck_assert_int_eq(api_query_set(&q, "unknown%ZZ", "x", err, sizeof(err)), 0); /* ignored */
	ck_assert_int_eq(api_query_set(&q, "timeoutSeconds", "abc", err, sizeof(err)), 0);
}
END_TEST

static const struct {
	const char *key, *value;
} bad_queries[] = {
	{ "watch", "yes" },
	{ "watch", "%" },
	{ "resourceVersion", "-1" },
	{ "resourceVersion", "12a" },
	{ "resourceVersion", "99999999999999999999999" },
	{ "after", "x" },
	{ "limit", "1e3" },
	{ "labelSelector", "a%3" },
	{ "labelSelector", "a%00b" },
	{ "labelSelector", "%zz" },
	{ "namespace", "a2345678901234567890123456789012345678901234567890123456789012345" },
};

START_TEST(test_query_bad)
{
	for (size_t i = 0; i < sizeof(bad_queries) / sizeof(bad_queries[0]); i++) {
		struct api_query q;
		char err[256] = "";
		api_query_init(&q);
		ck_assert_msg(api_query_set(&q, bad_queries[i].key, bad_queries[i].value, err,
					    sizeof(err)) == -EINVAL,
			      "%s=%s", bad_queries[i].key, bad_queries[i].value);
		ck_assert_msg(err[0] != '\0', "no message for %s", bad_queries[i].key);
	}
	/* an overlong selector */
	static char big[3 * API_MAX_SELECTOR];
	memset(big, 'a', sizeof(big) - 1);
	struct api_query q;
	char err[256];
	api_query_init(&q);
	ck_assert_int_eq(api_query_set(&q, "labelSelector", big, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_pct_decode)
{
	char out[8];
	ck_assert_int_eq(api_pct_decode("a%2Fb+c", 7, out, sizeof(out)), 5);
	ck_assert_str_eq(out, "a/b c");
	ck_assert_int_eq(api_pct_decode("%41%6a", 6, out, sizeof(out)), 2);
	ck_assert_str_eq(out, "Aj");
	ck_assert_int_eq(api_pct_decode("", 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(api_pct_decode("%4", 2, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(api_pct_decode("%g1", 3, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(api_pct_decode("%00", 3, out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(api_pct_decode("1234567", 7, out, sizeof(out)), 7);
	ck_assert_int_eq(api_pct_decode("12345678", 8, out, sizeof(out)), -E2BIG);
}
END_TEST

/* ---- statuses ---- */

START_TEST(test_errno_status)
{
	static const struct {
		int err, code;
		const char *reason;
	} t[] = {
		{ -ENOENT, 404, "NotFound" },      { -EEXIST, 409, "AlreadyExists" },
		{ -ESTALE, 409, "Conflict" },      { -EADDRINUSE, 409, "Conflict" },
		{ -EINVAL, 422, "Invalid" },       { -EPERM, 403, "Forbidden" },
		{ -ETIME, 410, "Expired" },        { -E2BIG, 413, "RequestEntityTooLarge" },
		{ -ENOMEM, 500, "InternalError" }, { -EIO, 500, "InternalError" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int code;
		const char *reason;
		api_errno_status(t[i].err, &code, &reason);
		ck_assert_int_eq(code, t[i].code);
		ck_assert_str_eq(reason, t[i].reason);
	}
	ck_assert_str_eq(api_code_reason(400), "BadRequest");
	ck_assert_str_eq(api_code_reason(401), "Unauthorized");
	ck_assert_str_eq(api_code_reason(405), "MethodNotAllowed");
	ck_assert_str_eq(api_code_reason(415), "UnsupportedMediaType");
	ck_assert_str_eq(api_code_reason(413), "RequestEntityTooLarge");
}
END_TEST

START_TEST(test_status_render)
{
	struct buf b = BUF_INIT(4096);
	ck_assert_int_eq(api_status_render(&b, 409, "Conflict", "hardware \"d/x\": \"quoted\"\n",
					   "items[3]"),
			 0);
	json_error_t je;
	json_t *v = json_loads(b.data, 0, &je);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(json_string_value(json_object_get(v, "kind")), "Status");
	ck_assert_str_eq(json_string_value(json_object_get(v, "apiVersion")), "v1");
	ck_assert_str_eq(json_string_value(json_object_get(v, "status")), "Failure");
	ck_assert_str_eq(json_string_value(json_object_get(v, "reason")), "Conflict");
	ck_assert_str_eq(json_string_value(json_object_get(v, "message")),
			 "hardware \"d/x\": \"quoted\"\n");
	ck_assert_int_eq(json_integer_value(json_object_get(v, "code")), 409);
	ck_assert(json_is_object(json_object_get(v, "metadata")));
	json_t *c0 = json_array_get(json_object_get(json_object_get(v, "details"), "causes"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(c0, "field")), "items[3]");
	json_decref(v);
	buf_reset(&b);
	ck_assert_int_eq(api_status_render(&b, 404, "NotFound", "x", NULL), 0);
	v = json_loads(b.data, 0, &je);
	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_null(json_object_get(v, "details"));
	json_decref(v);
	buf_free(&b);
}
END_TEST

/* ---- bodies, tokens, addresses ---- */

START_TEST(test_content_type)
{
	ck_assert_int_eq(api_content_type_parse(NULL), API_CT_NONE);
	ck_assert_int_eq(api_content_type_parse(""), API_CT_NONE);
	ck_assert_int_eq(api_content_type_parse("application/json"), API_CT_JSON);
	ck_assert_int_eq(api_content_type_parse("Application/JSON; charset=utf-8"), API_CT_JSON);
	ck_assert_int_eq(api_content_type_parse(" application/yaml "), API_CT_YAML);
	ck_assert_int_eq(api_content_type_parse("application/x-yaml"), API_CT_YAML);
	ck_assert_int_eq(api_content_type_parse("text/yaml"), API_CT_YAML);
	ck_assert_int_eq(api_content_type_parse("application/merge-patch+json"),
			 API_CT_MERGE_PATCH);
	ck_assert_int_eq(api_content_type_parse("application/strategic-merge-patch+json"),
			 API_CT_STRATEGIC);
	ck_assert_int_eq(api_content_type_parse("application/json-patch+json"), API_CT_JSON_PATCH);
	ck_assert_int_eq(api_content_type_parse("application/jsonx"), API_CT_OTHER);
	ck_assert_int_eq(api_content_type_parse("application/x-www-form-urlencoded"), API_CT_OTHER);
}
END_TEST

START_TEST(test_token_equal)
{
	ck_assert(api_token_equal("abc", 3, "abc", 3));
	ck_assert(!api_token_equal("abd", 3, "abc", 3));
	ck_assert(!api_token_equal("ab", 2, "abc", 3));
	ck_assert(!api_token_equal("abcd", 4, "abc", 3));
	ck_assert(!api_token_equal("", 0, "", 0)); /* an empty token never matches */
}
END_TEST

START_TEST(test_split_hostport)
{
	char host[64];
	uint16_t port = 0;
	ck_assert_int_eq(net_split_hostport("0.0.0.0:7080", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "0.0.0.0");
	ck_assert_uint_eq(port, 7080);
	ck_assert_int_eq(net_split_hostport("[::1]:9", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_uint_eq(port, 9);
	ck_assert_int_eq(net_split_hostport(":8080", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "");
	ck_assert_int_eq(net_split_hostport("*:8080", host, sizeof(host), &port), 0);
	ck_assert_str_eq(host, "");
	ck_assert_int_eq(net_split_hostport("localhost:65535", host, sizeof(host), &port), 0);
	ck_assert_uint_eq(port, 65535);
	static const char *const bad[] = { "",       "host",    "host:", "host:0", "host:65536",
					   "::1:80", "[::1]80", "[]:80", "h:8x",   NULL };
	for (int i = 0; bad[i]; i++)
		ck_assert_msg(net_split_hostport(bad[i], host, sizeof(host), &port) == -EINVAL,
			      "%s", bad[i]);
	ck_assert_int_eq(net_split_hostport("averyveryverylonghostname:1", host, 8, &port),
			 -EINVAL);
}
END_TEST

static Suite *api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");
	UNIT_TEST(tc, test_route_good);
	UNIT_TEST(tc, test_route_long_name);
	UNIT_TEST(tc, test_route_bad);
	UNIT_TEST(tc, test_route_embedded_nul_and_length);
	UNIT_TEST(tc, test_route_methods);
	UNIT_TEST(tc, test_query_good);
	UNIT_TEST(tc, test_query_bad);
	UNIT_TEST(tc, test_pct_decode);
	UNIT_TEST(tc, test_errno_status);
	UNIT_TEST(tc, test_status_render);
	UNIT_TEST(tc, test_content_type);
	UNIT_TEST(tc, test_token_equal);
	UNIT_TEST(tc, test_split_hostport);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(api_suite());
}
