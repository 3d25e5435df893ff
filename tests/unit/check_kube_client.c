/* check_kube_client — kube/kubeconfig.c: kubeconfigs that work (a client
 * certificate, a token, a tokenFile, -data fields, relative file names,
 * the current context or one named, the namespace) and a table of
 * malformed ones, each with the message that must name the file and the
 * YAML line and column or the field; the in-cluster settings from a
 * temporary directory and the environment; the base64 decoder; and
 * kube_api_new's checks (no network). Files are written under a mkdtemp
 * directory, removed at the end of each test. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/metrics.h"
#include "common/base64.h"
#include "kube/kube-internal.h"
#include "tests/unit/unit.h"

#define CA_PEM "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n"
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n"
#define KEY_PEM "-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n"
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClEwRT0KLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define CERT_B64 \
	"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClEwVlNWQT09Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"
#define KEY_B64 "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tClMwVloKLS0tLS1FTkQgUFJJVkFURSBLRVktLS0tLQo="
#define NOT_PEM_B64 "bm90IHBlbSBhdCBhbGw="

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_kube_client.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Writes text to dir/name. */
static void put(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

/* Writes the kubeconfig text to dir/config and parses it. */
static int load(const char *text, const char *context, struct kube_conn *k, char *err,
		size_t errlen)
{
	char path[256];
	put("config", text);
	snprintf(path, sizeof(path), "%s/config", dir);
	return kube_conn_from_kubeconfig(path, context, k, err, errlen);
}

#define HEAD                                   \
	"apiVersion: v1\n"                     \
	"kind: Config\n"                       \
	"current-context: dev\n"               \
	"contexts:\n"                          \
	"- name: dev\n"                        \
	"  context: {cluster: c1, user: u1}\n" \
	"- name: prod\n"                       \
	"  context:\n"                         \
	"    cluster: c2\n"                    \
	"    user: u2\n"                       \
	"    namespace: tink-system\n"

START_TEST(test_cert_files)
{
	struct kube_conn k;
	char err[512];
	put("ca.crt", CA_PEM);
	put("client.crt", CERT_PEM);
	put("client.key", KEY_PEM);
	int rc = load(HEAD "clusters:\n"
			   "- name: c1\n"
			   "  cluster:\n"
			   "    server: https://10.0.0.1:6443/\n"
			   "    certificate-authority: ca.crt\n"
			   "    insecure-skip-tls-verify: false\n"
			   "users:\n"
			   "- name: u1\n"
			   "  user:\n"
			   "    client-certificate: client.crt\n"
			   "    client-key: client.key\n",
		      NULL, &k, err, sizeof(err));
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_str_eq(k.server, "https://10.0.0.1:6443");
	ck_assert_str_eq(k.ca_pem, CA_PEM);
	ck_assert_str_eq(k.cert_pem, CERT_PEM);
	ck_assert_str_eq(k.key_pem, KEY_PEM);
	ck_assert_ptr_null(k.token);
	ck_assert_ptr_null(k.token_file);
	ck_assert_ptr_null(k.namespace_);
	ck_assert_ptr_null(k.tls_server_name);
	ck_assert_ptr_nonnull(strstr(k.origin, "context dev"));
	ck_assert_ptr_nonnull(strstr(k.origin, "/config"));
	kube_conn_clear(&k);
	ck_assert_ptr_null(k.server);
	kube_conn_clear(NULL);
}
END_TEST

START_TEST(test_data_and_token_named_context)
{
	struct kube_conn k;
	char err[512];
	int rc = load(HEAD "clusters:\n"
			   "- name: c2\n"
			   "  cluster:\n"
			   "    server: https://[fd00::1]:443\n"
			   "    certificate-authority-data: " CA_B64 "\n"
			   "    tls-server-name: kubernetes.default\n"
			   "users:\n"
			   "- name: u2\n"
			   "  user:\n"
			   "    client-certificate-data: " CERT_B64 "\n"
			   "    client-key-data: " KEY_B64 "\n"
			   "    token: \"  abc.def  \"\n",
		      "prod", &k, err, sizeof(err));
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_str_eq(k.server, "https://[fd00::1]:443");
	ck_assert_str_eq(k.tls_server_name, "kubernetes.default");
	ck_assert_str_eq(k.ca_pem, CA_PEM);
	ck_assert_str_eq(k.cert_pem, CERT_PEM);
	ck_assert_str_eq(k.key_pem, KEY_PEM);
	ck_assert_str_eq(k.token, "abc.def");
	ck_assert_str_eq(k.namespace_, "tink-system");
	ck_assert_ptr_nonnull(strstr(k.origin, "context prod"));
	kube_conn_clear(&k);
}
END_TEST

/* tokenFile, relative to the kubeconfig's directory, wins over token;
 * no CA: the system's roots. */
START_TEST(test_token_file)
{
	struct kube_conn k;
	char err[512], want[256];
	put("tok", "from-the-file\n");
	int rc = load(HEAD "clusters:\n"
			   "- {name: c1, cluster: {server: \"https://api.example.com\"}}\n"
			   "users:\n"
			   "- name: u1\n"
			   "  user: {token: inline, tokenFile: tok}\n",
		      NULL, &k, err, sizeof(err));
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_str_eq(k.server, "https://api.example.com");
	ck_assert_ptr_null(k.ca_pem);
	ck_assert_str_eq(k.token, "from-the-file");
	snprintf(want, sizeof(want), "%s/tok", dir);
	ck_assert_str_eq(k.token_file, want);
	kube_conn_clear(&k);

	/* read again, as client.c does after a 401 */
	char *t = NULL;
	put("tok", "second\n");
	ck_assert_int_eq(kube_token_read(want, &t, err, sizeof(err)), 0);
	ck_assert_str_eq(t, "second");
	free(t);
	put("tok", " \n");
	ck_assert_int_eq(kube_token_read(want, &t, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "empty"));
	put("tok", "a\x01z");
	ck_assert_int_eq(kube_token_read(want, &t, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "header"));
}
END_TEST

/* A JSON kubeconfig is YAML too. */
START_TEST(test_json)
{
	struct kube_conn k;
	char err[512];
	int rc = load("{\"current-context\":\"x\",\"contexts\":[{\"name\":\"x\",\"context\":"
		      "{\"cluster\":\"c\",\"user\":\"u\",\"namespace\":\"n\"}}],"
		      "\"clusters\":[{\"name\":\"c\",\"cluster\":{\"server\":\"https://h\"}}],"
		      "\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"t\"}}]}",
		      NULL, &k, err, sizeof(err));
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_str_eq(k.namespace_, "n");
	ck_assert_str_eq(k.token, "t");
	kube_conn_clear(&k);
}
END_TEST

struct bad {
	const char *name;
	const char *text;
	const char *context;
	int rc;
	const char *message; /* a part of the error */
};

#define C1 "clusters:\n- name: c1\n  cluster:\n    server: https://h:6443\n"
#define U1 "users:\n- name: u1\n  user: {token: t}\n"
#define CTX "current-context: dev\ncontexts:\n- {name: dev, context: {cluster: c1, user: u1}}\n"

static const struct bad bads[] = {
	{ "yaml syntax", CTX C1 "users:\n- name: u1\n  user: {token: [t}\n", NULL, -EINVAL,
	  "/config:10:19: " },
	{ "not a mapping", "- a\n- b\n", NULL, -EINVAL, "(top): not a mapping" },
	{ "no current context", "contexts: []\n" C1 U1, NULL, -EINVAL, "current-context" },
	{ "missing context", CTX C1 U1, "nope", -ENOENT, "contexts: no entry named \"nope\"" },
	{ "missing cluster", CTX U1, NULL, -ENOENT, "clusters: no entry named \"c1\"" },
	{ "missing user", CTX C1, NULL, -ENOENT, "users: no entry named \"u1\"" },
	{ "context without user",
	  "current-context: dev\ncontexts:\n- {name: dev, context: "
	  "{cluster: c1}}\n" C1 U1,
	  NULL, -EINVAL, "contexts[0].context.user: missing" },
	{ "duplicate name", CTX C1 "- name: c1\n  cluster: {server: https://x}\n" U1, NULL, -EINVAL,
	  "clusters[1]: the name \"c1\" is given twice" },
	{ "insecure",
	  CTX "clusters:\n- name: c1\n  cluster:\n    server: https://h\n"
	      "    insecure-skip-tls-verify: true\n" U1,
	  NULL, -EPERM, "clusters[0].cluster.insecure-skip-tls-verify: true is refused" },
	{ "exec plugin", CTX C1 "users:\n- name: u1\n  user:\n    exec:\n      command: aws\n",
	  NULL, -EPERM, "users[0].user.exec: credential plugins are not supported" },
	{ "auth provider", CTX C1 "users:\n- name: u1\n  user:\n    auth-provider: {name: gcp}\n",
	  NULL, -EPERM, "users[0].user.auth-provider" },
	{ "http server", CTX "clusters:\n- {name: c1, cluster: {server: \"http://h:8080\"}}\n" U1,
	  NULL, -EINVAL, "clusters[0].cluster.server: \"http://h:8080\" is not an https:// URL" },
	{ "server with user info",
	  CTX "clusters:\n- {name: c1, cluster: {server: "
	      "\"https://u@h\"}}\n" U1,
	  NULL, -EINVAL, "is not a URL of the form" },
	{ "server missing", CTX "clusters:\n- {name: c1, cluster: {}}\n" U1, NULL, -EINVAL,
	  "clusters[0].cluster.server: missing" },
	{ "bad base64",
	  CTX "clusters:\n- name: c1\n  cluster:\n    server: https://h\n"
	      "    certificate-authority-data: \"QQ=Q\"\n" U1,
	  NULL, -EINVAL, "clusters[0].cluster.certificate-authority-data: not valid base64" },
	{ "not pem",
	  CTX "clusters:\n- name: c1\n  cluster:\n    server: https://h\n"
	      "    certificate-authority-data: " NOT_PEM_B64 "\n" U1,
	  NULL, -EINVAL, "not PEM text" },
	{ "cert without key",
	  CTX C1 "users:\n- name: u1\n  user:\n    client-certificate-data: " CERT_B64 "\n", NULL,
	  -EINVAL, "users[0].user.client-key: missing: a client certificate needs its key" },
	{ "key without cert",
	  CTX C1 "users:\n- name: u1\n  user:\n    client-key-data: " KEY_B64 "\n", NULL, -EINVAL,
	  "users[0].user.client-certificate: missing" },
	{ "both file and data",
	  CTX "clusters:\n- name: c1\n  cluster:\n    server: https://h\n"
	      "    certificate-authority: ca.crt\n"
	      "    certificate-authority-data: " CA_B64 "\n" U1,
	  NULL, -EINVAL, "are both given" },
	{ "missing file",
	  CTX "clusters:\n- name: c1\n  cluster:\n    server: https://h\n"
	      "    certificate-authority: nothere.crt\n" U1,
	  NULL, -ENOENT, "clusters[0].cluster.certificate-authority: cannot read" },
	{ "token not a string", CTX C1 "users:\n- name: u1\n  user: {token: [a]}\n", NULL, -EINVAL,
	  "users[0].user.token: not a string" },
	{ "token with a newline", CTX C1 "users:\n- name: u1\n  user: {token: \"a\\nb\"}\n", NULL,
	  -EINVAL, "users[0].user.token: the token has a byte" },
	{ "basic auth", CTX C1 "users:\n- name: u1\n  user: {username: a, password: b}\n", NULL,
	  -EPERM, "users[0].user.username: not supported" },
};

START_TEST(test_malformed)
{
	const struct bad *b = &bads[_i];
	struct kube_conn k;
	char err[512], file[128];
	int rc = load(b->text, b->context, &k, err, sizeof(err));
	ck_assert_msg(rc == b->rc, "%s: rc %d, want %d (%s)", b->name, rc, b->rc, err);
	ck_assert_msg(strstr(err, b->message), "%s: \"%s\" lacks \"%s\"", b->name, err, b->message);
	snprintf(file, sizeof(file), "%s/config", dir);
	ck_assert_msg(strncmp(err, file, strlen(file)) == 0, "%s: \"%s\" names no file", b->name,
		      err);
	ck_assert_ptr_null(k.server);
	ck_assert_ptr_null(k.token);
	ck_assert_ptr_null(k.origin);
}
END_TEST

/* The YAML error's line and column. */
START_TEST(test_yaml_position)
{
	struct kube_conn k;
	char err[512], want[160];
	int rc = load("current-context: a\nclusters:\n  - name: x\n bad: [\n", NULL, &k, err,
		      sizeof(err));
	ck_assert_int_eq(rc, -EINVAL);
	snprintf(want, sizeof(want), "%s/config:4:", dir);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
}
END_TEST

START_TEST(test_oversized)
{
	struct kube_conn k;
	char err[512], path[256];
	size_t n = KUBE_MAX_PEM + 100;
	char *big = malloc(n + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, 'A', n);
	memcpy(big, "-----BEGIN CERTIFICATE-----\n", 28);
	big[n] = '\0';
	put("big.crt", big);
	free(big);
	int rc = load(CTX "clusters:\n- name: c1\n  cluster:\n    server: https://h\n"
			  "    certificate-authority: big.crt\n" U1,
		      NULL, &k, err, sizeof(err));
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_msg(strstr(err, "larger than"), "%s", err);

	/* a -data field over the bound */
	struct buf b = BUF_INIT(4u << 20);
	ck_assert_int_eq(buf_puts(&b, CTX "clusters:\n- name: c1\n  cluster:\n    server: "
					  "https://h\n    certificate-authority-data: "),
			 0);
	for (size_t i = 0; i < (KUBE_MAX_PEM / 3 + 10); i++)
		ck_assert_int_eq(buf_puts(&b, "QUFB"), 0);
	ck_assert_int_eq(buf_puts(&b, "\n" U1), 0);
	rc = load(b.data, NULL, &k, err, sizeof(err));
	buf_free(&b);
	ck_assert_int_eq(rc, -E2BIG);
	ck_assert_msg(strstr(err, "certificate-authority-data: larger than"), "%s", err);

	/* the kubeconfig itself, and a directory where a file should be */
	snprintf(path, sizeof(path), "%s/nothere", dir);
	rc = kube_conn_from_kubeconfig(path, NULL, &k, err, sizeof(err));
	ck_assert_int_eq(rc, -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, path));
	rc = kube_conn_from_kubeconfig(dir, NULL, &k, err, sizeof(err));
	ck_assert_int_eq(rc, -EISDIR);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
}
END_TEST

/* From memory with no directory (the fuzz target's mode): no file read. */
START_TEST(test_parse_no_dir)
{
	static const char text[] = CTX "clusters:\n- name: c1\n  cluster:\n    server: https://h\n"
				       "    certificate-authority: /etc/passwd\n" U1;
	struct kube_conn k;
	char err[512];
	int rc = kube_conn_parse(text, strlen(text), "mem.yaml", NULL, NULL, &k, err, sizeof(err));
	ck_assert_int_eq(rc, -EPERM);
	ck_assert_msg(strstr(err, "mem.yaml: clusters[0].cluster.certificate-authority: files"),
		      "%s", err);
}
END_TEST

START_TEST(test_base64)
{
	char out[16];
	size_t n = 99;
	ck_assert_int_eq(base64_decode("YWRtaW4=", 8, out, sizeof(out), &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(memcmp(out, "admin", 5), 0);
	ck_assert_int_eq(base64_decode("YW\nRt\r\naW4=\n", 12, out, sizeof(out), &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(base64_decode("", 0, out, sizeof(out), &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(base64_decode("YQ==", 4, out, sizeof(out), &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(base64_decode("YWI=", 4, out, sizeof(out), &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(base64_decode("YWRtaW4", 7, out, sizeof(out), &n), -EINVAL);
	ck_assert_int_eq(base64_decode("YW=t", 4, out, sizeof(out), &n), -EINVAL);
	ck_assert_int_eq(base64_decode("Y===", 4, out, sizeof(out), &n), -EINVAL);
	ck_assert_int_eq(base64_decode("YQ==YQ==", 8, out, sizeof(out), &n), -EINVAL);
	ck_assert_int_eq(base64_decode("YW*t", 4, out, sizeof(out), &n), -EINVAL);
	ck_assert_int_eq(base64_decode("YWRtaW4=", 8, out, 4, &n), -E2BIG);
}
END_TEST

START_TEST(test_in_cluster)
{
	struct kube_conn k;
	char err[512], want[256];
	put("token", "sa-token\n");
	put("ca.crt", CA_PEM);
	put("namespace", "tink-system");
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	int rc = kube_conn_in_cluster(dir, &k, err, sizeof(err));
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_str_eq(k.server, "https://10.96.0.1:443");
	ck_assert_str_eq(k.token, "sa-token");
	snprintf(want, sizeof(want), "%s/token", dir);
	ck_assert_str_eq(k.token_file, want);
	ck_assert_str_eq(k.ca_pem, CA_PEM);
	ck_assert_str_eq(k.namespace_, "tink-system");
	ck_assert_str_eq(k.origin, "in-cluster");
	kube_conn_clear(&k);

	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	rc = kube_conn_in_cluster(dir, &k, err, sizeof(err));
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_str_eq(k.server, "https://[fd00:10:96::1]:443");
	kube_conn_clear(&k);

	setenv("KUBERNETES_SERVICE_PORT", "0", 1);
	ck_assert_int_eq(kube_conn_in_cluster(dir, &k, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "KUBERNETES_SERVICE_PORT"));
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	setenv("KUBERNETES_SERVICE_HOST", "h/x", 1);
	ck_assert_int_eq(kube_conn_in_cluster(dir, &k, err, sizeof(err)), -EINVAL);
	unsetenv("KUBERNETES_SERVICE_HOST");
	ck_assert_int_eq(kube_conn_in_cluster(dir, &k, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "KUBERNETES_SERVICE_HOST"));
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);

	/* no namespace file: none; no token: an error naming it */
	snprintf(want, sizeof(want), "%s/namespace", dir);
	ck_assert_int_eq(unlink(want), 0);
	rc = kube_conn_in_cluster(dir, &k, err, sizeof(err));
	ck_assert_msg(rc == 0, "%d %s", rc, err);
	ck_assert_ptr_null(k.namespace_);
	kube_conn_clear(&k);
	snprintf(want, sizeof(want), "%s/ca.crt", dir);
	ck_assert_int_eq(unlink(want), 0);
	ck_assert_int_eq(kube_conn_in_cluster(dir, &k, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "ca.crt"));
	snprintf(want, sizeof(want), "%s/token", dir);
	ck_assert_int_eq(unlink(want), 0);
	ck_assert_int_eq(kube_conn_in_cluster(dir, &k, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, want));
	ck_assert_ptr_null(k.server);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}
END_TEST

/* kube_api_new copies what it is given and makes no connection; a
 * request with a bad path fails before any. */
START_TEST(test_api_new)
{
	struct kube_conn c = { .server = "https://127.0.0.1:1",
			       .tls_server_name = "k.test",
			       .token = "t" };
	struct kube_api *a = NULL;
	struct kube_response r;
	char err[256];
	ck_assert_int_eq(kube_api_new(&c, NULL, &a, err, sizeof(err)), 0);
	ck_assert_str_eq(kube_api_origin(a), "https://127.0.0.1:1");
	struct kube_session *s = kube_session_new(a);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(kube_request(s, "GET", "version", NULL, NULL, 0, &r), -EINVAL);
	buf_free(&r.body);
	kube_session_cancel(s);
	ck_assert_int_eq(kube_request(s, "GET", "/version", NULL, NULL, 0, &r), -ECANCELED);
	ck_assert_ptr_nonnull(strstr(r.error, "cancelled"));
	ck_assert_int_eq(r.status, 0);
	buf_free(&r.body);
	kube_session_free(s);
	kube_api_free(a);
	kube_api_free(NULL);
	struct kube_conn none = { 0 };
	ck_assert_int_eq(kube_api_new(&none, NULL, &a, err, sizeof(err)), -EINVAL);
}
END_TEST

/* No server (a refused connection): an error naming the URL, counted in
 * the metrics as code "error"; the rate limit refuses at once a request
 * that would wait longer than its timeout. */
START_TEST(test_refused_and_rate_limit)
{
	struct kube_conn c = { .server = "https://127.0.0.1:1" };
	struct kube_api_opts o = { .qps = 1, .burst = 1, .timeout_ms = 100 };
	struct kube_api *a = NULL;
	struct kube_response r;
	struct buf m = BUF_INIT(1u << 20);
	char err[256];
	ck_assert_int_eq(kube_api_new(&c, &o, &a, err, sizeof(err)), 0);
	struct kube_session *s = kube_session_new(a);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(kube_request(s, "GET", "/version", NULL, NULL, 0, &r), -ECONNREFUSED);
	ck_assert_msg(strstr(r.error, "GET https://127.0.0.1:1/version: "), "%s", r.error);
	ck_assert_int_eq(r.status, 0);
	buf_free(&r.body);
	ck_assert_int_eq(metrics_render(&m), 0);
	ck_assert_msg(strstr(m.data, "ironbell_kube_requests_total{verb=\"GET\",code=\"error\"} 1"),
		      "%s", m.data);
	ck_assert_ptr_nonnull(
		strstr(m.data, "ironbell_kube_request_seconds_count{verb=\"GET\"} 1"));
	buf_free(&m);
	/* the bucket is empty and refills in 1 s, over the 100 ms timeout */
	ck_assert_int_eq(kube_request(s, "GET", "/version", NULL, NULL, 0, &r), -ETIMEDOUT);
	ck_assert_msg(strstr(r.error, "client rate limit"), "%s", r.error);
	buf_free(&r.body);
	kube_session_free(s);
	kube_api_free(a);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("kube_client");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	UNIT_TEST(tc, test_cert_files);
	UNIT_TEST(tc, test_data_and_token_named_context);
	UNIT_TEST(tc, test_token_file);
	UNIT_TEST(tc, test_json);
	tcase_add_loop_test(tc, test_malformed, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	UNIT_TEST(tc, test_yaml_position);
	UNIT_TEST(tc, test_oversized);
	UNIT_TEST(tc, test_parse_no_dir);
	UNIT_TEST(tc, test_base64);
	UNIT_TEST(tc, test_in_cluster);
	UNIT_TEST(tc, test_api_new);
	UNIT_TEST(tc, test_refused_and_rate_limit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
