/* kubeconfig — where the API server is and who we are: a kubeconfig file
 * (YAML) or the pod's service account (in-cluster).
 *
 * DESIGN: the file is read whole (at most KUBE_MAX_KUBECONFIG bytes),
 * turned into a JSON tree by common/yamljson.h and walked with jansson:
 * the context named (or current-context) gives a cluster and a user by
 * name, and from those come the server, the CA, the client certificate
 * and key, the token. Names are looked up as client-go's loader does
 * (clientcmd/api/v1 conversion): a name given twice in one list is an
 * error, unknown keys are ignored, both `X` and `X-data` given is an
 * error (client-go's validation says "-data will override" and refuses).
 * Everything that would let the client talk to the server without
 * verifying it, or that would run a program (exec, auth-provider), is
 * refused here with the field's path, so that the daemon stops at start
 * instead of failing later or, worse, working insecurely. Files the
 * kubeconfig names are read now, relative to the kubeconfig's directory,
 * each bounded (KUBE_MAX_PEM, KUBE_MAX_TOKEN), regular files only (a FIFO
 * or a device would block or never end). The token file's name is kept:
 * client.c reads it again when the server answers 401, as client-go does
 * for projected service-account tokens that rotate. The parse from
 * memory (kube_conn_parse) is what the fuzz target drives; it reads no
 * file when given no directory. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base64.h"
#include "common/buf.h"
#include "common/num.h"
#include "common/yamljson.h"
#include "kube/kube-internal.h"

#define KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_MAX_NAME 253    /* a context's, cluster's or user's name */
#define KUBE_MAX_SERVER 2048 /* bytes of a server URL */

/* ---- small helpers ---- */

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Reads the regular file path, at most max bytes, into a NUL-terminated
 * heap string (*ret, length *ret_len). -EFBIG when larger, -EISDIR when
 * not a regular file, -errno else. */
static int read_bounded(const char *path, size_t max, char **ret, size_t *ret_len)
{
	struct stat st;
	char *data = NULL;
	size_t len = 0;
	int rc, fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EISDIR;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		rc = -EFBIG;
		goto out;
	}
	rc = -ENOMEM;
	if (!(data = malloc(max + 1)))
		goto out;
	/* The file may grow after fstat: read to max + 1 at most. */
	for (;;) {
		ssize_t n = read(fd, data + len, max + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			rc = -EFBIG;
			goto out;
		}
	}
	data[len] = '\0';
	*ret = data;
	*ret_len = len;
	data = NULL;
	rc = 0;
out:
	free(data);
	close(fd);
	return rc;
}

static const char *read_error(int rc, size_t max, char *tmp, size_t tmplen)
{
	if (rc == -EFBIG)
		snprintf(tmp, tmplen, "larger than %zu bytes", max);
	else if (rc == -EISDIR)
		snprintf(tmp, tmplen, "not a regular file");
	else
		snprintf(tmp, tmplen, "%s", strerror(-rc));
	return tmp;
}


/* A token's text: surrounding white space trimmed (client-go's
 * strings.TrimSpace), then 1 to KUBE_MAX_TOKEN printable ASCII bytes (it
 * goes into an HTTP header). */
static int token_check(char *s, size_t len, char **ret, const char **why)
{
	size_t a = 0;
	while (a < len && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r' || s[a] == '\n'))
		a++;
	while (len > a && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r' ||
			   s[len - 1] == '\n'))
		len--;
	if (len == a) {
		*why = "the token is empty";
		return -EINVAL;
	}
	if (len - a > KUBE_MAX_TOKEN) {
		*why = "the token is too long";
		return -E2BIG;
	}
	for (size_t i = a; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) {
			*why = "the token has a byte that cannot go in an HTTP header";
			return -EINVAL;
		}
	if (!(*ret = strndup(s + a, len - a))) {
		*why = "out of memory";
		return -ENOMEM;
	}
	return 0;
}

int kube_token_read(const char *path, char **ret, char *err, size_t errlen)
{
	char *data = NULL, tmp[128];
	const char *why = NULL;
	size_t len = 0;
	/* some slack for the white space around it */
	int rc = read_bounded(path, KUBE_MAX_TOKEN + 64, &data, &len);

	if (rc < 0) {
		seterr(err, errlen, "token file %s: %s", path,
		       read_error(rc, KUBE_MAX_TOKEN, tmp, sizeof(tmp)));
		return rc;
	}
	rc = token_check(data, len, ret, &why);
	if (rc < 0)
		seterr(err, errlen, "token file %s: %s", path, why);
	explicit_bzero(data, len);
	free(data);
	return rc;
}

/* PEM text: no NUL byte, and a "-----BEGIN " line somewhere. */
static bool pem_like(const char *s, size_t len)
{
	return memchr(s, '\0', len) == NULL && memmem(s, len, "-----BEGIN ", 11) != NULL;
}

/* ---- the walk ---- */

struct walk {
	const char *file; /* for messages */
	const char *dir;  /* relative names resolve here; NULL: no file read */
	char *err;
	size_t errlen;
};

static int fail(struct walk *w, int rc, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct walk *w, int rc, const char *field, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	seterr(w->err, w->errlen, "%s: %s: %s", w->file, field, msg);
	return rc;
}

/* The string member key of obj (absent or null: NULL, 0); another type
 * is -EINVAL. */
static int get_str(struct walk *w, const json_t *obj, const char *path, const char *key,
		   const char **ret)
{
	const json_t *v = json_object_get(obj, key);
	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		char f[256];
		snprintf(f, sizeof(f), "%s.%s", path, key);
		return fail(w, -EINVAL, f, "not a string");
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		char f[256];
		snprintf(f, sizeof(f), "%s.%s", path, key);
		return fail(w, -EINVAL, f, "has a NUL byte");
	}
	*ret = json_string_value(v);
	if (!**ret)
		*ret = NULL; /* client-go treats "" as absent */
	return 0;
}

/* The list key of root: the element whose name is name, and what it
 * holds under inner; its path in field (e.g. "users[2].user"). */
static int find_named(struct walk *w, const json_t *root, const char *key, const char *inner,
		      const char *name, const json_t **ret, char *field, size_t fieldlen)
{
	const json_t *list = json_object_get(root, key);
	json_t *seen = NULL;
	size_t i;
	int rc = 0;

	*ret = NULL;
	if (list && !json_is_null(list) && !json_is_array(list))
		return fail(w, -EINVAL, key, "not a list");
	if (!(seen = json_object()))
		return fail(w, -ENOMEM, key, "out of memory");
	for (i = 0; i < json_array_size(list); i++) {
		const json_t *e = json_array_get(list, i);
		const char *n = NULL;
		char f[64];
		snprintf(f, sizeof(f), "%s[%zu]", key, i);
		if (!json_is_object(e)) {
			rc = fail(w, -EINVAL, f, "not a mapping");
			goto out;
		}
		if ((rc = get_str(w, e, f, "name", &n)) < 0)
			goto out;
		if (!n) {
			rc = fail(w, -EINVAL, f, "has no name");
			goto out;
		}
		if (json_object_get(seen, n)) {
			rc = fail(w, -EINVAL, f, "the name \"%.*s\" is given twice", KUBE_MAX_NAME,
				  n);
			goto out;
		}
		if (json_object_set_new(seen, n, json_true()) < 0) {
			rc = fail(w, -ENOMEM, f, "out of memory");
			goto out;
		}
		if (strcmp(n, name) != 0 || *ret)
			continue;
		*ret = json_object_get(e, inner);
		snprintf(field, fieldlen, "%s.%s", f, inner);
		if (!json_is_object(*ret)) {
			rc = fail(w, -EINVAL, field, "missing or not a mapping");
			goto out;
		}
	}
	if (!*ret)
		rc = fail(w, -ENOENT, key, "no entry named \"%.*s\"", KUBE_MAX_NAME, name);
out:
	json_decref(seen);
	return rc;
}

/* A file name from the kubeconfig, made relative to its directory. */
static int resolve(struct walk *w, const char *field, const char *name, char **ret)
{
	if (!w->dir)
		return fail(w, -EPERM, field, "files are not read here");
	if (name[0] == '/')
		*ret = strdup(name);
	else if (asprintf(ret, "%s/%s", w->dir, name) < 0)
		*ret = NULL;
	return *ret ? 0 : fail(w, -ENOMEM, field, "out of memory");
}

/* PEM from `key` (a file) or `key-data` (base64) of obj at path, into
 * *ret (NULL when neither is there). */
static int get_pem(struct walk *w, const json_t *obj, const char *path, const char *key, char **ret)
{
	char field[256], dkey[64], tmp[128];
	const char *file, *data;
	char *full = NULL, *text = NULL;
	size_t len = 0;
	int rc;

	*ret = NULL;
	snprintf(dkey, sizeof(dkey), "%s-data", key);
	if ((rc = get_str(w, obj, path, key, &file)) < 0 ||
	    (rc = get_str(w, obj, path, dkey, &data)) < 0)
		return rc;
	if (file && data) {
		snprintf(field, sizeof(field), "%s.%s", path, dkey);
		return fail(w, -EINVAL, field, "%s and %s are both given: give one", key, dkey);
	}
	if (data) {
		size_t dlen = strlen(data);
		snprintf(field, sizeof(field), "%s.%s", path, dkey);
		if (dlen > KUBE_MAX_PEM * 2)
			return fail(w, -E2BIG, field, "larger than %u bytes", KUBE_MAX_PEM);
		if (!(text = malloc(KUBE_MAX_PEM + 1)))
			return fail(w, -ENOMEM, field, "out of memory");
		rc = base64_decode(data, dlen, text, KUBE_MAX_PEM, &len);
		if (rc < 0) {
			rc = fail(w, rc, field,
				  rc == -E2BIG ? "larger than %u bytes decoded" :
						 "not valid base64 (%u bytes at most)",
				  KUBE_MAX_PEM);
			goto out;
		}
		text[len] = '\0';
	} else if (file) {
		snprintf(field, sizeof(field), "%s.%s", path, key);
		if ((rc = resolve(w, field, file, &full)) < 0)
			goto out;
		rc = read_bounded(full, KUBE_MAX_PEM, &text, &len);
		if (rc < 0) {
			rc = fail(w, rc, field, "cannot read %s: %s", full,
				  read_error(rc, KUBE_MAX_PEM, tmp, sizeof(tmp)));
			goto out;
		}
	} else {
		return 0;
	}
	if (!pem_like(text, len)) {
		rc = fail(w, -EINVAL, field, "not PEM text (no \"-----BEGIN \" line)");
		goto out;
	}
	*ret = text;
	text = NULL;
	rc = 0;
out:
	if (text) {
		explicit_bzero(text, len);
		free(text);
	}
	free(full);
	return rc;
}

static bool host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

/* "https://" then a host (a name, or an IPv6 address in brackets), an
 * optional ":port" and an optional path; no user info, query or
 * fragment. The trailing '/'s are dropped. */
static int server_check(struct walk *w, const char *field, const char *s, char **ret)
{
	size_t len = strlen(s), i = 8;

	if (len > KUBE_MAX_SERVER)
		return fail(w, -EINVAL, field, "longer than %u bytes", KUBE_MAX_SERVER);
	if (strncasecmp(s, "https://", 8) != 0)
		return fail(w, -EINVAL, field,
			    "\"%.200s\" is not an https:// URL (only TLS is spoken)", s);
	if (s[i] == '[') {
		while (i < len && s[i] != ']') {
			char c = s[i];
			if (i > 8 && !(c == ':' || c == '.' || host_char(c)))
				goto bad;
			i++;
		}
		if (i >= len || i == 9)
			goto bad;
		i++;
	} else {
		size_t start = i;
		while (i < len && host_char(s[i]))
			i++;
		if (i == start)
			goto bad;
	}
	if (s[i] == ':') {
		uint64_t port;
		size_t start = ++i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (num_parse_u64(s + start, i - start, 65535, &port) < 0 || port == 0)
			goto bad;
	}
	if (s[i] != '\0' && s[i] != '/')
		goto bad;
	for (size_t j = i; j < len; j++)
		if ((unsigned char)s[j] <= 0x20 || (unsigned char)s[j] >= 0x7f || s[j] == '?' ||
		    s[j] == '#')
			goto bad;
	while (len > i && s[len - 1] == '/')
		len--;
	if (!(*ret = strndup(s, len)))
		return fail(w, -ENOMEM, field, "out of memory");
	return 0;
bad:
	return fail(w, -EINVAL, field,
		    "\"%.200s\" is not a URL of the form https://host[:port][/path]", s);
}

static int walk_cluster(struct walk *w, const json_t *c, const char *path, struct kube_conn *k)
{
	const json_t *insecure = json_object_get(c, "insecure-skip-tls-verify");
	const char *server, *tsn, *proxy;
	char field[256];
	int rc;

	snprintf(field, sizeof(field), "%s.insecure-skip-tls-verify", path);
	if (insecure && !json_is_null(insecure) && !json_is_boolean(insecure))
		return fail(w, -EINVAL, field, "not a boolean");
	if (json_is_true(insecure))
		return fail(w, -EPERM, field,
			    "true is refused: the server's certificate is always verified "
			    "(give its CA in certificate-authority or certificate-authority-data)");
	if ((rc = get_str(w, c, path, "server", &server)) < 0 ||
	    (rc = get_str(w, c, path, "tls-server-name", &tsn)) < 0 ||
	    (rc = get_str(w, c, path, "proxy-url", &proxy)) < 0)
		return rc;
	snprintf(field, sizeof(field), "%s.proxy-url", path);
	if (proxy)
		return fail(w, -EINVAL, field, "not supported");
	snprintf(field, sizeof(field), "%s.server", path);
	if (!server)
		return fail(w, -EINVAL, field, "missing");
	if ((rc = server_check(w, field, server, &k->server)) < 0)
		return rc;
	if (tsn) {
		snprintf(field, sizeof(field), "%s.tls-server-name", path);
		for (const char *p = tsn; *p; p++)
			if (!host_char(*p))
				return fail(w, -EINVAL, field, "not a host name");
		if (strlen(tsn) > KUBE_MAX_NAME)
			return fail(w, -EINVAL, field, "longer than %u bytes", KUBE_MAX_NAME);
		if (!(k->tls_server_name = strdup(tsn)))
			return fail(w, -ENOMEM, field, "out of memory");
	}
	return get_pem(w, c, path, "certificate-authority", &k->ca_pem);
}

static int walk_user(struct walk *w, const json_t *u, const char *path, struct kube_conn *k)
{
	static const char *const refused[] = { "exec", "auth-provider", "username",     "password",
					       "as",   "as-groups",     "as-user-extra" };
	const char *token, *token_file;
	char field[256], tmp[512];
	int rc;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const json_t *v = json_object_get(u, refused[i]);
		if (!v || json_is_null(v))
			continue;
		snprintf(field, sizeof(field), "%s.%s", path, refused[i]);
		return fail(w, -EPERM, field,
			    i < 2 ? "credential plugins are not supported (no "
				    "program is run): give a token, a tokenFile "
				    "or a client certificate" :
				    "not supported");
	}
	if ((rc = get_pem(w, u, path, "client-certificate", &k->cert_pem)) < 0 ||
	    (rc = get_pem(w, u, path, "client-key", &k->key_pem)) < 0)
		return rc;
	if (!!k->cert_pem != !!k->key_pem) {
		snprintf(field, sizeof(field), "%s.%s", path,
			 k->cert_pem ? "client-key" : "client-certificate");
		return fail(w, -EINVAL, field,
			    k->cert_pem ? "missing: a client certificate needs its key" :
					  "missing: a client key needs its certificate");
	}
	if ((rc = get_str(w, u, path, "token", &token)) < 0 ||
	    (rc = get_str(w, u, path, "tokenFile", &token_file)) < 0)
		return rc;
	if (token_file) {
		/* client-go: the file's last value wins over token */
		snprintf(field, sizeof(field), "%s.tokenFile", path);
		if ((rc = resolve(w, field, token_file, &k->token_file)) < 0)
			return rc;
		if ((rc = kube_token_read(k->token_file, &k->token, tmp, sizeof(tmp))) < 0)
			return fail(w, rc, field, "%s", tmp);
	} else if (token) {
		const char *why = NULL;
		char *copy = strdup(token);
		snprintf(field, sizeof(field), "%s.token", path);
		if (!copy)
			return fail(w, -ENOMEM, field, "out of memory");
		rc = token_check(copy, strlen(copy), &k->token, &why);
		explicit_bzero(copy, strlen(copy));
		free(copy);
		if (rc < 0)
			return fail(w, rc, field, "%s", why);
	}
	return 0;
}

int kube_conn_parse(const char *data, size_t len, const char *file, const char *dir,
		    const char *context, struct kube_conn *ret, char *err, size_t errlen)
{
	struct walk w = { .file = file, .dir = dir, .err = err, .errlen = errlen };
	struct kube_conn k = { 0 };
	struct yj_error ye;
	const json_t *ctx, *cluster, *user;
	const char *name, *cname, *uname, *ns;
	char cpath[128], upath[128], xpath[128];
	json_t *root = NULL;
	int rc;

	memset(ret, 0, sizeof(*ret));
	if (err && errlen)
		err[0] = '\0';
	if (len > KUBE_MAX_KUBECONFIG) {
		seterr(err, errlen, "%s: larger than %u bytes", file, KUBE_MAX_KUBECONFIG);
		return -EFBIG;
	}
	rc = yj_load_one(data, len, &root, &ye);
	if (rc < 0) {
		if (rc == -ENOMEM)
			seterr(err, errlen, "%s: out of memory", file);
		else
			seterr(err, errlen, "%s:%zu:%zu: %s", file, ye.line, ye.column, ye.message);
		return rc;
	}
	if (!json_is_object(root)) {
		rc = fail(&w, -EINVAL, "(top)", "not a mapping");
		goto out;
	}
	name = context;
	if (!name && (rc = get_str(&w, root, "(top)", "current-context", &name)) < 0)
		goto out;
	if (!name) {
		rc = fail(&w, -EINVAL, "current-context", "not set, and no context was named");
		goto out;
	}
	if ((rc = find_named(&w, root, "contexts", "context", name, &ctx, xpath, sizeof(xpath))) <
	    0)
		goto out;
	if ((rc = get_str(&w, ctx, xpath, "cluster", &cname)) < 0 ||
	    (rc = get_str(&w, ctx, xpath, "user", &uname)) < 0 ||
	    (rc = get_str(&w, ctx, xpath, "namespace", &ns)) < 0)
		goto out;
	if (!cname || !uname) {
		char f[160];
		snprintf(f, sizeof(f), "%s.%s", xpath, cname ? "user" : "cluster");
		rc = fail(&w, -EINVAL, f, "missing");
		goto out;
	}
	if ((rc = find_named(&w, root, "clusters", "cluster", cname, &cluster, cpath,
			     sizeof(cpath))) < 0 ||
	    (rc = find_named(&w, root, "users", "user", uname, &user, upath, sizeof(upath))) < 0)
		goto out;
	if ((rc = walk_cluster(&w, cluster, cpath, &k)) < 0 ||
	    (rc = walk_user(&w, user, upath, &k)) < 0)
		goto out;
	rc = -ENOMEM;
	if (ns && !(k.namespace_ = strdup(ns)))
		goto out;
	if (asprintf(&k.origin, "kubeconfig %s, context %.*s", file, KUBE_MAX_NAME, name) < 0) {
		k.origin = NULL;
		goto out;
	}
	*ret = k;
	memset(&k, 0, sizeof(k));
	rc = 0;
out:
	if (rc == -ENOMEM && err && errlen && !err[0])
		seterr(err, errlen, "%s: out of memory", file);
	kube_conn_clear(&k);
	json_decref(root);
	return rc;
}

int kube_conn_from_kubeconfig(const char *path, const char *context, struct kube_conn *ret,
			      char *err, size_t errlen)
{
	char *data = NULL, *dir = NULL, tmp[128];
	size_t len = 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	if (err && errlen)
		err[0] = '\0';
	rc = read_bounded(path, KUBE_MAX_KUBECONFIG, &data, &len);
	if (rc < 0) {
		seterr(err, errlen, "kubeconfig %s: %s", path,
		       read_error(rc, KUBE_MAX_KUBECONFIG, tmp, sizeof(tmp)));
		return rc;
	}
	const char *slash = strrchr(path, '/');
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir) {
		seterr(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = kube_conn_parse(data, len, path, dir, context, ret, err, errlen);
out:
	free(dir);
	explicit_bzero(data, len);
	free(data);
	return rc;
}

/* KUBERNETES_SERVICE_HOST/PORT into https://host:port (client-go's
 * rest.InClusterConfig, net.JoinHostPort). */
static int in_cluster_server(char **ret, char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	uint64_t p;

	if (!host || !*host || !port || !*port) {
		seterr(err, errlen,
		       "in-cluster: KUBERNETES_SERVICE_HOST and "
		       "KUBERNETES_SERVICE_PORT must be set (or give a kubeconfig)");
		return -ENOENT;
	}
	if (strlen(host) > KUBE_MAX_NAME) {
		seterr(err, errlen, "in-cluster: KUBERNETES_SERVICE_HOST is too long");
		return -EINVAL;
	}
	for (const char *c = host; *c; c++)
		if (!host_char(*c) && *c != ':') {
			seterr(err, errlen,
			       "in-cluster: KUBERNETES_SERVICE_HOST \"%s\" is not a "
			       "host name or address",
			       host);
			return -EINVAL;
		}
	if (num_parse_u64_str(port, 65535, &p) < 0 || p == 0) {
		seterr(err, errlen, "in-cluster: KUBERNETES_SERVICE_PORT \"%.32s\" is not a port",
		       port);
		return -EINVAL;
	}
	bool v6 = strchr(host, ':') != NULL;
	if (asprintf(ret, "https://%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)p) <
	    0) {
		*ret = NULL;
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int kube_conn_in_cluster(const char *dir, struct kube_conn *ret, char *err, size_t errlen)
{
	struct kube_conn k = { 0 };
	char *path = NULL, *data = NULL, tmp[128];
	size_t len = 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	if (err && errlen)
		err[0] = '\0';
	if (!dir)
		dir = KUBE_SA_DIR;
	if ((rc = in_cluster_server(&k.server, err, errlen)) < 0)
		goto out;
	rc = -ENOMEM;
	if (asprintf(&k.token_file, "%s/token", dir) < 0) {
		k.token_file = NULL;
		goto out;
	}
	if ((rc = kube_token_read(k.token_file, &k.token, err, errlen)) < 0)
		goto out;
	rc = -ENOMEM;
	if (asprintf(&path, "%s/ca.crt", dir) < 0) {
		path = NULL;
		goto out;
	}
	rc = read_bounded(path, KUBE_MAX_PEM, &k.ca_pem, &len);
	if (rc < 0) {
		seterr(err, errlen, "in-cluster: %s: %s", path,
		       read_error(rc, KUBE_MAX_PEM, tmp, sizeof(tmp)));
		goto out;
	}
	if (!pem_like(k.ca_pem, len)) {
		seterr(err, errlen, "in-cluster: %s: not PEM text", path);
		rc = -EINVAL;
		goto out;
	}
	free(path);
	rc = -ENOMEM;
	if (asprintf(&path, "%s/namespace", dir) < 0) {
		path = NULL;
		goto out;
	}
	rc = read_bounded(path, KUBE_MAX_NAME + 64, &data, &len);
	if (rc == 0) {
		while (len &&
		       (data[len - 1] == '\n' || data[len - 1] == ' ' || data[len - 1] == '\r'))
			data[--len] = '\0';
		if (len && memchr(data, '\0', len) == NULL && len <= KUBE_MAX_NAME) {
			k.namespace_ = data;
			data = NULL;
		}
	} else if (rc != -ENOENT) {
		seterr(err, errlen, "in-cluster: %s: %s", path,
		       read_error(rc, KUBE_MAX_NAME + 64, tmp, sizeof(tmp)));
		goto out;
	}
	rc = -ENOMEM;
	if (!(k.origin = strdup("in-cluster")))
		goto out;
	*ret = k;
	memset(&k, 0, sizeof(k));
	rc = 0;
out:
	if (rc == -ENOMEM && err && errlen && !err[0])
		seterr(err, errlen, "out of memory");
	free(data);
	free(path);
	kube_conn_clear(&k);
	return rc;
}

static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void kube_conn_clear(struct kube_conn *c)
{
	if (!c)
		return;
	free(c->server);
	free(c->tls_server_name);
	free(c->ca_pem);
	free(c->cert_pem);
	free_secret(c->key_pem);
	free_secret(c->token);
	free(c->token_file);
	free(c->namespace_);
	free(c->origin);
	memset(c, 0, sizeof(*c));
}
