/* client — one Redfish call's state machine: what it asks of the BMC, in
 * which order, and what each answer means.
 *
 * DESIGN: a call runs alone on its endpoint (engine.c queues the others),
 * so it may fill in what the endpoint lacks, in this order, before its
 * command: the service root (GET /redfish/v1, no authentication: the
 * Systems and Sessions URIs, the Vendor), a session (POST Sessions with
 * UserName and Password: 201, X-Auth-Token, Location; skipped with Basic
 * authentication), the system (the Systems collection's member whose Id
 * is the endpoint's system name). The commands then:
 *
 *   POWER_GET, BOOT_GET  GET the system: PowerState, Boot
 *   POWER_SET            GET the system (the Reset action's target and
 *                        ResetType@Redfish.AllowableValues), POST the
 *                        Reset, twice for a cycle as ForceOff + On
 *   BOOT_SET             GET the system (ETag, allowed targets), PATCH
 *                        Boot with If-Match; on 412 once more from the GET
 *   MEDIA_SET            GET the system, its (or its manager's)
 *                        VirtualMedia and its members until a CD one, then
 *                        POST InsertMedia (after EjectMedia when a medium
 *                        is in) or EjectMedia
 *
 * A 202 with a Location is a task monitor (DSP0266 §12.2): it is polled
 * every RF_TASK_POLL_MS until it answers something else, at most
 * RF_TASK_MAX_POLLS times. A 401 on a session drops it and logs in again,
 * once per call, then sends the same request again. Any other failure
 * ends the call with a reason (enum bmc_fail) and a message naming the
 * request: "GET /redfish/v1/Systems/1: HTTP 500: ..."; a password that
 * the BMC's error text quotes is replaced there by "***". */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bmc/redfish/redfish.h"
#include "common/buf.h"

enum step {
	ST_ROOT,
	ST_LOGIN,
	ST_SYSTEMS,
	ST_SYSTEM,
	ST_RESET,
	ST_TASK,
	ST_PATCH,
	ST_MANAGERS,
	ST_MANAGER,
	ST_VM_COLL,
	ST_VM,
	ST_VM_EJECT,
	ST_VM_INSERT,
};

static void finish(struct rf_call *c, enum bmc_fail fail, const char *msg, enum bmc_power power,
		   const struct bmc_boot *boot, uint64_t now)
{
	struct bmc_reply r;

	memset(&r, 0, sizeof(r));
	r.fail = fail;
	r.power = power;
	if (boot) {
		r.boot = *boot;
		r.boot_known = true;
	}
	if (msg)
		snprintf(r.message, sizeof(r.message), "%s", msg);
	r.seconds = (double)(now - c->submit_ms) / 1000.0;
	rf_engine_call_done(c->e, c);
	c->done(&r, c->userdata);
	free(c->body);
	free(c->resend_body);
	free(c->media);
	explicit_bzero(&c->target, sizeof(c->target));
	free(c);
}

void rf_call_fail(struct rf_call *c, enum bmc_fail fail, const char *msg, uint64_t now)
{
	finish(c, fail, msg, BMC_POWER_UNKNOWN, NULL, now);
}

static void failf(struct rf_call *c, enum bmc_fail fail, uint64_t now, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void failf(struct rf_call *c, enum bmc_fail fail, uint64_t now, const char *fmt, ...)
{
	char msg[BMC_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rf_call_fail(c, fail, msg, now);
}

/* Sends a request for the call and remembers it (messages, re-send). */
static void send_req(struct rf_call *c, int state, const char *method, const char *path,
		     const char *body, const char *if_match, uint64_t now)
{
	int rc;

	c->req_state = c->state = state;
	snprintf(c->method, sizeof(c->method), "%s", method);
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->if_match, sizeof(c->if_match), "%s", if_match ? if_match : "");
	free(c->body);
	c->body = NULL;
	if (body && state != ST_LOGIN && !(c->body = strdup(body))) {
		rf_call_fail(c, BMC_FAIL_NETWORK, "out of memory", now);
		return;
	}
	rc = rf_http(c->e, c->ep, c, method, path, body, if_match);
	if (rc < 0) {
		failf(c, BMC_FAIL_NETWORK, now, "%s %s: cannot start: %s", method, path,
		      strerror(-rc));
		return;
	}
	c->busy = true;
}

/* The login body: {"UserName": u, "Password": p}; the caller wipes it. */
static int login_body(const struct bmc_endpoint *ep, struct buf *b)
{
	if (buf_puts(b, "{\"UserName\":") < 0 ||
	    buf_put_json_string(b, ep->user, strlen(ep->user)) < 0 ||
	    buf_puts(b, ",\"Password\":") < 0 ||
	    buf_put_json_string(b, ep->password, strlen(ep->password)) < 0 || buf_puts(b, "}") < 0)
		return -ENOMEM;
	return 0;
}

static void command(struct rf_call *c, uint64_t now);

/* Fills in what the endpoint lacks, then runs the command. */
static void next(struct rf_call *c, uint64_t now)
{
	struct rf_ep *ep = c->ep;

	if (!ep->root.systems[0]) {
		send_req(c, ST_ROOT, "GET", "/redfish/v1", NULL, NULL, now);
	} else if (!ep->ep.basic_auth && !ep->token[0]) {
		struct buf b = BUF_INIT(1024);
		if (login_body(&ep->ep, &b) < 0) {
			buf_free(&b);
			rf_call_fail(c, BMC_FAIL_NETWORK, "out of memory", now);
			return;
		}
		send_req(c, ST_LOGIN, "POST", ep->root.sessions, b.data, NULL, now);
		explicit_bzero(b.data, b.len);
		buf_free(&b);
	} else if (!ep->system[0]) {
		send_req(c, ST_SYSTEMS, "GET", ep->root.systems, NULL, NULL, now);
	} else {
		command(c, now);
	}
}

void rf_call_start(struct rf_call *c, uint64_t now)
{
	struct rf_ep *ep = c->ep;

	/* The endpoint as this call has it: a new password ends the session
	 * that the old one opened. */
	if (strcmp(ep->ep.password, c->target.password) != 0 ||
	    ep->ep.basic_auth != c->target.basic_auth)
		rf_engine_drop_session(c->e, ep);
	ep->ep = c->target;
	ep->used_ms = now;
	next(c, now);
}

static void command(struct rf_call *c, uint64_t now)
{
	send_req(c, ST_SYSTEM, "GET", c->ep->system, NULL, NULL, now);
}

/* ---- answers ---- */

static enum bmc_fail curl_fail(int code)
{
	switch (code) {
	case CURLE_OPERATION_TIMEDOUT: return BMC_FAIL_TIMEOUT;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CRL_BADFILE: return BMC_FAIL_TLS;
	case CURLE_WRITE_ERROR:
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_BAD_CONTENT_ENCODING: return BMC_FAIL_PROTOCOL;
	default: return BMC_FAIL_NETWORK;
	}
}

/* Replaces in msg (NUL-terminated, cap bytes) each occurrence of the
 * password, and a trailing part of msg that begins it (the BMC's text cut
 * short), with "***": a BMC's error may quote the value it was sent (the
 * Base registry's PropertyValueFormatError does). */
static void redact(char *msg, size_t cap, const char *pw)
{
	size_t pl = strlen(pw), len = strlen(msg);
	char out[RF_MSG_MAX + 8];
	size_t o = 0;

	if (pl == 0 || cap == 0)
		return;
	for (size_t i = 0; i < len && o + 1 < sizeof(out);) {
		size_t rest = len - i, k = rest < pl ? rest : pl;
		if (strncmp(msg + i, pw, k) == 0 && (rest >= pl || k >= 2)) {
			for (const char *r = "***"; *r && o + 1 < sizeof(out); r++)
				out[o++] = *r;
			i += k;
			continue;
		}
		out[o++] = msg[i++];
	}
	out[o] = '\0';
	snprintf(msg, cap, "%s", out);
}

/* Checks an answer: 0 when 2xx (with its body parsed into *json when it
 * has one and json is not NULL), 1 when the call was sent again after a
 * re-login, -1 when the call has ended. */
static int check(struct rf_call *c, const struct rf_resp *r, json_t **json, uint64_t now)
{
	char msg[RF_MSG_MAX + 8] = "";
	json_t *j = NULL;

	if (json)
		*json = NULL;
	if (r->too_big) {
		failf(c, BMC_FAIL_PROTOCOL, now, "%s %s: body larger than %u bytes", c->method,
		      c->path, RF_MAX_BODY);
		return -1;
	}
	if (r->curl_code != CURLE_OK) {
		failf(c, curl_fail(r->curl_code), now, "%s %s: %s", c->method, c->path,
		      r->curl_err);
		return -1;
	}
	if (r->status >= 300 && r->status < 400) {
		char loc[128];
		size_t i;
		/* The BMC's Location, printable only, into the message. */
		for (i = 0; r->location[i] && i + 1 < sizeof(loc); i++)
			loc[i] = (unsigned char)r->location[i] < ' ' ||
						 (unsigned char)r->location[i] >= 0x7f ?
					 '?' :
					 r->location[i];
		loc[i] = '\0';
		failf(c, BMC_FAIL_PROTOCOL, now, "%s %s: HTTP %ld: redirect to %s refused",
		      c->method, c->path, r->status, loc[0] ? loc : "(none)");
		return -1;
	}
	if (r->status == 401 && c->state != ST_LOGIN && !c->ep->ep.basic_auth && !c->relogged) {
		/* The session expired or the BMC restarted: once more. */
		c->relogged = true;
		c->resend = true;
		c->resend_state = c->req_state;
		memcpy(c->resend_method, c->method, sizeof(c->method));
		memcpy(c->resend_path, c->path, sizeof(c->path));
		memcpy(c->resend_if_match, c->if_match, sizeof(c->if_match));
		free(c->resend_body);
		c->resend_body = c->body;
		c->body = NULL;
		explicit_bzero(c->ep->token, sizeof(c->ep->token));
		c->ep->session[0] = '\0';
		next(c, now);
		return 1;
	}
	if (r->status < 200 || r->status >= 300) {
		json_t *e = NULL;
		char err[8];
		if (r->len && rf_json_parse(r->body, r->len, &e, err, sizeof(err)) == 0) {
			rf_parse_error(e, msg, sizeof(msg));
			json_decref(e);
			redact(msg, sizeof(msg), c->ep->ep.password);
		}
		failf(c, r->status == 401 || r->status == 403 ? BMC_FAIL_AUTH : BMC_FAIL_REFUSED,
		      now, "%s %s: HTTP %ld%s%s", c->method, c->path, r->status, msg[0] ? ": " : "",
		      msg);
		return -1;
	}
	if (json && r->len) {
		if (rf_json_parse(r->body, r->len, &j, msg, sizeof(msg)) < 0) {
			failf(c, BMC_FAIL_PROTOCOL, now, "%s %s: %s", c->method, c->path, msg);
			return -1;
		}
		*json = j;
	}
	return 0;
}

/* As check(), and a body is required. */
static int check_json(struct rf_call *c, const struct rf_resp *r, json_t **json, uint64_t now)
{
	int rc = check(c, r, json, now);

	if (rc == 0 && !*json) {
		failf(c, BMC_FAIL_PROTOCOL, now, "%s %s: HTTP %ld without a body", c->method,
		      c->path, r->status);
		return -1;
	}
	return rc;
}

/* A Location header as a path of the same BMC, into out (RF_URI_MAX). */
static int location_path(const struct rf_call *c, const char *loc, char *out)
{
	const char *p = loc;

	if (strncmp(p, "https://", 8) == 0 || strncmp(p, "http://", 7) == 0) {
		const char *host = strchr(p, '/') + 2;
		const char *slash = strchr(host, '/');
		size_t hl = strlen(c->ep->ep.host);
		/* Same host (any port): the BMC names itself. */
		if (!slash || strncmp(host, c->ep->ep.host, hl) != 0 ||
		    (host[hl] != ':' && host[hl] != '/'))
			return -EPERM;
		p = slash;
	}
	if (!rf_uri_ok(p, strlen(p)))
		return -EBADMSG;
	snprintf(out, RF_URI_MAX, "%s", p);
	return 0;
}

static void on_root(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	char err[BMC_MESSAGE_MAX];
	json_t *j;

	if (check_json(c, r, &j, now) != 0)
		return;
	int rc = rf_parse_root(j, &c->ep->root, err, sizeof(err));
	json_decref(j);
	if (rc < 0) {
		failf(c, BMC_FAIL_PROTOCOL, now, "GET /redfish/v1: %s", err);
		return;
	}
	if (c->ep->root.vendor[0])
		c->ep->vendor = rf_vendor_find(c->ep->root.vendor);
	next(c, now);
}

static void on_login(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	struct rf_ep *ep = c->ep;

	if (check(c, r, NULL, now) != 0)
		return;
	if (!r->token[0]) {
		failf(c, BMC_FAIL_PROTOCOL, now, "POST %s: HTTP %ld without an X-Auth-Token",
		      c->path, r->status);
		return;
	}
	snprintf(ep->token, sizeof(ep->token), "%s", r->token);
	if (r->location[0] && location_path(c, r->location, ep->session) < 0)
		ep->session[0] = '\0';
	if (c->resend) {
		char *body = c->resend_body;
		c->resend = false;
		c->resend_body = NULL;
		send_req(c, c->resend_state, c->resend_method, c->resend_path, body,
			 c->resend_if_match, now);
		free(body);
		return;
	}
	next(c, now);
}

static void on_systems(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	char err[BMC_MESSAGE_MAX];
	json_t *j;

	if (check_json(c, r, &j, now) != 0)
		return;
	int rc = rf_pick_member(j, c->ep->ep.system_name, c->ep->system, err, sizeof(err));
	json_decref(j);
	if (rc < 0) {
		failf(c, rc == -ENOENT ? BMC_FAIL_REFUSED : BMC_FAIL_PROTOCOL, now, "GET %s: %s",
		      c->path, err);
		return;
	}
	next(c, now);
}

void rf_call_wake(struct rf_call *c, uint64_t now)
{
	c->wake_ms = 0;
	if (c->xfer_failed) {
		failf(c, BMC_FAIL_NETWORK, now, "%s %s: the transfer could not start", c->method,
		      c->path);
		return;
	}
	send_req(c, ST_TASK, "GET", c->monitor, NULL, NULL, now);
}

/* A 202: polls the task monitor at its Location. */
static void start_task(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	if (!r->location[0] || location_path(c, r->location, c->monitor) < 0) {
		failf(c, BMC_FAIL_PROTOCOL, now, "%s %s: HTTP 202 without a usable task monitor",
		      c->method, c->path);
		return;
	}
	c->polls = 0;
	c->wake_ms = now + RF_TASK_POLL_MS;
	if (rf_engine_wait(c->e, c) < 0)
		rf_call_fail(c, BMC_FAIL_NETWORK, "out of memory", now);
}

static void step_done(struct rf_call *c, uint64_t now);

static void on_task(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	char msg[BMC_MESSAGE_MAX];
	json_t *j = NULL;
	int st = 1;

	if (check(c, r, &j, now) != 0)
		return;
	if (j) {
		st = rf_parse_task(j, msg, sizeof(msg));
		json_decref(j);
	}
	if (r->status == 202 || st == 0) {
		if (++c->polls >= RF_TASK_MAX_POLLS) {
			failf(c, BMC_FAIL_TIMEOUT, now, "task %s still running after %u polls",
			      c->monitor, c->polls);
			return;
		}
		c->wake_ms = now + RF_TASK_POLL_MS;
		if (rf_engine_wait(c->e, c) < 0)
			rf_call_fail(c, BMC_FAIL_NETWORK, "out of memory", now);
		return;
	}
	if (st < 0) {
		/* A 200 whose body is no Task (-EBADMSG) counts as done; a
		 * failed task is refused. */
		if (st == -1) {
			failf(c, BMC_FAIL_REFUSED, now, "%s: %s", c->monitor, msg);
			return;
		}
	}
	step_done(c, now);
}

/* ---- commands ---- */

static void post_reset(struct rf_call *c, uint64_t now)
{
	char path[RF_URI_MAX], body[64];
	int n;

	if (c->sys.reset_target[0])
		snprintf(path, sizeof(path), "%s", c->sys.reset_target);
	else if ((n = snprintf(path, sizeof(path), "%s/Actions/ComputerSystem.Reset",
			       c->ep->system)) < 0 ||
		 (size_t)n >= sizeof(path)) {
		rf_call_fail(c, BMC_FAIL_PROTOCOL, "the system's URI is too long", now);
		return;
	}
	snprintf(body, sizeof(body), "{\"ResetType\":\"%s\"}", rf_reset_name(c->resets[c->ireset]));
	send_req(c, ST_RESET, "POST", path, body, NULL, now);
}

static void power_set(struct rf_call *c, uint64_t now)
{
	static const char *const acts[] = { "on", "off", "soft", "cycle", "reset" };
	const char *act = (unsigned)c->call.action < 5 ? acts[c->call.action] : "?";
	int n = rf_choose_reset(c->call.action, c->sys.resets_known, c->sys.resets, c->ep->vendor,
				c->resets);

	if (n < 0) {
		failf(c, BMC_FAIL_UNSUPPORTED, now,
		      "power %s: no ResetType for it among the system's AllowableValues", act);
		return;
	}
	c->nresets = n;
	c->ireset = 0;
	post_reset(c, now);
}

static void boot_set(struct rf_call *c, const char *etag, uint64_t now)
{
	const struct rf_system *s = &c->sys;
	enum bmc_boot_device d = c->call.boot.device;
	const char *target = rf_boot_target_name(d);
	const char *path =
		c->ep->vendor->boot_on_settings && s->settings[0] ? s->settings : c->ep->system;
	char body[256];
	bool advertised = s->targets_known && (s->targets & (1u << d));

	if ((unsigned)d > BMC_BOOT_HTTP ||
	    (s->targets_known && !advertised && d != BMC_BOOT_NONE) ||
	    (d == BMC_BOOT_SAFE && !advertised)) {
		failf(c, BMC_FAIL_UNSUPPORTED, now,
		      "boot device %s: not among the system's BootSourceOverrideTarget values",
		      target);
		return;
	}
	if (!s->boot_present) {
		failf(c, BMC_FAIL_UNSUPPORTED, now, "GET %s: the system has no Boot override",
		      c->ep->system);
		return;
	}
	int n = snprintf(body, sizeof(body),
			 "{\"Boot\":{\"BootSourceOverrideTarget\":\"%s\","
			 "\"BootSourceOverrideEnabled\":\"%s\"%s%s%s}}",
			 target,
			 d == BMC_BOOT_NONE      ? "Disabled" :
			 c->call.boot.persistent ? "Continuous" :
						   "Once",
			 s->boot_mode[0] ? ",\"BootSourceOverrideMode\":\"" : "",
			 s->boot_mode[0] ? (c->call.boot.efi ? "UEFI" : "Legacy") : "",
			 s->boot_mode[0] ? "\"" : "");
	if (n < 0 || (size_t)n >= sizeof(body)) {
		rf_call_fail(c, BMC_FAIL_UNSUPPORTED, "boot override too long", now);
		return;
	}
	send_req(c, ST_PATCH, "PATCH", path, body, etag, now);
}

static void media_set(struct rf_call *c, uint64_t now)
{
	if (!c->media && !(c->media = calloc(1, sizeof(*c->media)))) {
		rf_call_fail(c, BMC_FAIL_NETWORK, "out of memory", now);
		return;
	}
	if (c->ep->vmedia[0]) {
		c->media->n = c->media->i = 0;
		send_req(c, ST_VM, "GET", c->ep->vmedia, NULL, NULL, now);
	} else if (c->sys.vmedia[0]) {
		/* Redfish 2021.1 puts VirtualMedia under the system too. */
		send_req(c, ST_VM_COLL, "GET", c->sys.vmedia, NULL, NULL, now);
	} else if (c->sys.manager[0]) {
		send_req(c, ST_MANAGER, "GET", c->sys.manager, NULL, NULL, now);
	} else if (c->ep->root.managers[0]) {
		send_req(c, ST_MANAGERS, "GET", c->ep->root.managers, NULL, NULL, now);
	} else {
		rf_call_fail(c, BMC_FAIL_UNSUPPORTED, "the BMC has no Managers", now);
	}
}

static void on_system(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	char err[BMC_MESSAGE_MAX];
	struct bmc_boot boot;
	json_t *j;

	if (check_json(c, r, &j, now) != 0)
		return;
	int rc = rf_parse_system(j, &c->sys, err, sizeof(err));
	json_decref(j);
	if (rc < 0) {
		failf(c, BMC_FAIL_PROTOCOL, now, "GET %s: %s", c->path, err);
		return;
	}
	if (!c->ep->root.vendor[0] && c->sys.manufacturer[0])
		c->ep->vendor = rf_vendor_find(c->sys.manufacturer);
	switch (c->call.cmd) {
	case BMC_CMD_POWER_GET: finish(c, BMC_FAIL_NONE, NULL, c->sys.power, NULL, now); return;
	case BMC_CMD_BOOT_GET:
		finish(c, BMC_FAIL_NONE, NULL, BMC_POWER_UNKNOWN,
		       rf_system_boot(&c->sys, &boot) ? &boot : NULL, now);
		return;
	case BMC_CMD_POWER_SET: power_set(c, now); return;
	case BMC_CMD_BOOT_SET:
		/* The ETag header, else the body's @odata.etag. */
		boot_set(c, r->etag[0] ? r->etag : c->sys.etag, now);
		return;
	case BMC_CMD_MEDIA_SET: media_set(c, now); return;
	default: rf_call_fail(c, BMC_FAIL_UNSUPPORTED, "unknown command", now);
	}
}

/* A request that changed something succeeded (at once or through its
 * task): the next one, or the end. */
static void step_done(struct rf_call *c, uint64_t now)
{
	if (c->task_for == ST_RESET && ++c->ireset < c->nresets) {
		post_reset(c, now);
		return;
	}
	if (c->task_for == ST_VM_EJECT && c->call.media_url[0]) {
		char body[BMC_MEDIA_URL_MAX + 64];
		struct buf b = BUF_INIT(sizeof(body));
		if (buf_puts(&b, "{\"Image\":") < 0 ||
		    buf_put_json_string(&b, c->call.media_url, strlen(c->call.media_url)) < 0 ||
		    buf_puts(&b, ",\"Inserted\":true,\"WriteProtected\":true}") < 0) {
			buf_free(&b);
			rf_call_fail(c, BMC_FAIL_UNSUPPORTED, "media URL too long", now);
			return;
		}
		if (c->media->vm.insert[0])
			snprintf(body, sizeof(body), "%s", c->media->vm.insert);
		else
			snprintf(body, sizeof(body), "%s/Actions/VirtualMedia.InsertMedia",
				 c->ep->vmedia);
		if (!rf_uri_ok(body, strlen(body))) {
			buf_free(&b);
			rf_call_fail(c, BMC_FAIL_PROTOCOL, "the InsertMedia URI is too long", now);
			return;
		}
		send_req(c, ST_VM_INSERT, "POST", body, b.data, NULL, now);
		buf_free(&b);
		return;
	}
	finish(c, BMC_FAIL_NONE, NULL, BMC_POWER_UNKNOWN, NULL, now);
}

/* The answer to a POST or PATCH that changes something. */
static void on_change(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	if (c->state == ST_PATCH && r->status == 412 && !c->etag_retried) {
		/* Changed behind us: fetch the new ETag and try once more. */
		c->etag_retried = true;
		command(c, now);
		return;
	}
	if (check(c, r, NULL, now) != 0)
		return;
	c->task_for = c->state;
	if (r->status == 202) {
		start_task(c, r, now);
		return;
	}
	step_done(c, now);
}

static void on_managers(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	char err[BMC_MESSAGE_MAX], uri[RF_URI_MAX];
	json_t *j;

	if (check_json(c, r, &j, now) != 0)
		return;
	int rc = rf_pick_member(j, "", uri, err, sizeof(err));
	json_decref(j);
	if (rc < 0) {
		failf(c, BMC_FAIL_UNSUPPORTED, now, "GET %s: no manager", c->path);
		return;
	}
	send_req(c, ST_MANAGER, "GET", uri, NULL, NULL, now);
}

static void on_manager(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	char uri[RF_URI_MAX];
	json_t *j;

	if (check_json(c, r, &j, now) != 0)
		return;
	int rc = rf_parse_manager_vmedia(j, uri);
	json_decref(j);
	if (rc < 0) {
		failf(c, BMC_FAIL_UNSUPPORTED, now, "GET %s: the manager has no VirtualMedia",
		      c->path);
		return;
	}
	send_req(c, ST_VM_COLL, "GET", uri, NULL, NULL, now);
}

static void on_vm_coll(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	const json_t *members;
	json_t *j;

	if (check_json(c, r, &j, now) != 0)
		return;
	members = json_object_get(j, "Members");
	struct rf_media *m = c->media;

	m->n = m->i = 0;
	for (size_t i = 0; i < json_array_size(members) && m->n < RF_MAX_VMEDIA; i++) {
		const json_t *id = json_object_get(json_array_get(members, i), "@odata.id");
		if (json_is_string(id) && rf_uri_ok(json_string_value(id), json_string_length(id)))
			snprintf(m->uris[m->n++], RF_URI_MAX, "%s", json_string_value(id));
	}
	json_decref(j);
	if (m->n == 0) {
		failf(c, BMC_FAIL_UNSUPPORTED, now, "GET %s: no virtual media", c->path);
		return;
	}
	send_req(c, ST_VM, "GET", m->uris[0], NULL, NULL, now);
}

static void on_vm(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	char err[BMC_MESSAGE_MAX], path[RF_URI_MAX];
	json_t *j;

	if (check_json(c, r, &j, now) != 0)
		return;
	struct rf_media *m = c->media;
	int rc = rf_parse_vmedia(j, &m->vm, err, sizeof(err));
	json_decref(j);
	if (rc < 0 || !m->vm.cd) {
		if (++m->i < m->n) {
			send_req(c, ST_VM, "GET", m->uris[m->i], NULL, NULL, now);
			return;
		}
		failf(c, BMC_FAIL_UNSUPPORTED, now, "GET %s: %s", c->path,
		      rc < 0 ? err : "no virtual media takes a CD");
		return;
	}
	snprintf(c->ep->vmedia, sizeof(c->ep->vmedia), "%s", c->path);
	if (!m->vm.inserted && c->call.media_url[0]) {
		c->task_for = ST_VM_EJECT; /* as if ejected: insert next */
		step_done(c, now);
		return;
	}
	if (m->vm.eject[0])
		snprintf(path, sizeof(path), "%s", m->vm.eject);
	else if (snprintf(path, sizeof(path), "%s/Actions/VirtualMedia.EjectMedia", c->path) >=
		 (int)sizeof(path)) {
		rf_call_fail(c, BMC_FAIL_PROTOCOL, "the EjectMedia URI is too long", now);
		return;
	}
	send_req(c, ST_VM_EJECT, "POST", path, "{}", NULL, now);
}

void rf_call_resp(struct rf_call *c, const struct rf_resp *r, uint64_t now)
{
	switch (c->state) {
	case ST_ROOT: on_root(c, r, now); break;
	case ST_LOGIN: on_login(c, r, now); break;
	case ST_SYSTEMS: on_systems(c, r, now); break;
	case ST_SYSTEM: on_system(c, r, now); break;
	case ST_RESET:
	case ST_PATCH:
	case ST_VM_EJECT:
	case ST_VM_INSERT: on_change(c, r, now); break;
	case ST_TASK: on_task(c, r, now); break;
	case ST_MANAGERS: on_managers(c, r, now); break;
	case ST_MANAGER: on_manager(c, r, now); break;
	case ST_VM_COLL: on_vm_coll(c, r, now); break;
	case ST_VM: on_vm(c, r, now); break;
	default: rf_call_fail(c, BMC_FAIL_PROTOCOL, "internal: unknown state", now);
	}
}
