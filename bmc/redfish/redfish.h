/* redfish — private to bmc/redfish/: the Redfish client engine's parts.
 *
 *   engine.c   libcurl's multi interface on an epoll fd, the transfer
 *              queue (settings.max_connections), the endpoint cache, the
 *              ops table (bmc_redfish_ops)
 *   client.c   one call's state machine: service root, login, Systems,
 *              then the command; re-login on 401, If-Match retry on 412,
 *              the 202 task monitor
 *   parse.c    the JSON readers: pure functions of a body, for the tests
 *              and the fuzz target
 *   vendors.c  what one BMC make does differently, as data
 *
 * Everything a BMC sends is untrusted: a body is at most RF_MAX_BODY
 * bytes, a URI from a body or a header is checked (rf_uri_ok()) before it
 * goes into a request line, and a collection is read up to RF_MAX_MEMBERS
 * members. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bmc/provider.h"

#define RF_MAX_BODY (1024u * 1024u) /* a response body; larger: PROTOCOL */
#define RF_MAX_MEMBERS 1024         /* members read from a collection */
#define RF_URI_MAX 512              /* a path we request */
#define RF_TOKEN_MAX 512            /* X-Auth-Token */
#define RF_ETAG_MAX 128
#define RF_VENDOR_MAX 64
#define RF_MSG_MAX 200        /* a BMC's error text kept */
#define RF_TASK_POLL_MS 300   /* between two GETs of a task monitor */
#define RF_TASK_MAX_POLLS 400 /* then the task counts as timed out */
#define RF_MAX_ENDPOINTS 8192 /* BMCs whose session is cached */
#define RF_WARM_MS 1000       /* a BMC answered this recently: its connection is open */

/* ComputerSystem.Reset's ResetType values (Redfish Resource.ResetType). */
enum rf_reset {
	RF_RESET_ON,
	RF_RESET_FORCE_ON,
	RF_RESET_FORCE_OFF,
	RF_RESET_GRACEFUL_SHUTDOWN,
	RF_RESET_GRACEFUL_RESTART,
	RF_RESET_FORCE_RESTART,
	RF_RESET_POWER_CYCLE,
	RF_RESET_NMI,
	RF_RESET_PUSH_BUTTON,
	RF_RESET_MAX
};
#define RF_RESET_BIT(r) (1u << (r))
/* "On", "ForceOff", ... */
const char *rf_reset_name(enum rf_reset r);

/* The boot override's targets we speak, by enum bmc_boot_device: Pxe,
 * Hdd, BiosSetup, Cd, SafeMode (no standard name: only where a BMC
 * advertises it), UefiHttp; "None" for BMC_BOOT_NONE. */
const char *rf_boot_target_name(enum bmc_boot_device d);
/* The device of a BootSourceOverrideTarget; -ENOENT for one we do not
 * know (Usb, Floppy, ...). */
int rf_boot_target_parse(const char *s, enum bmc_boot_device *ret);

/* What a vendor does differently (vendors.c). */
struct rf_vendor {
	const char *name;      /* for tests and messages */
	const char *match;     /* a case-insensitive substring of the
				   * service root's Vendor, its Oem key or the
				   * system's Manufacturer; NULL: generic */
	unsigned lacks_resets; /* RF_RESET_BIT()s it lacks even where it
				   * advertises them, or when it advertises
				   * nothing */
	bool boot_on_settings; /* PATCH the boot override to the system's
				   * @Redfish.Settings SettingsObject */
};
/* The entry for a vendor string ("" or NULL: generic); never NULL. */
const struct rf_vendor *rf_vendor_find(const char *vendor);
/* The table, for the tests: *n entries. */
const struct rf_vendor *rf_vendor_table(size_t *n);

/* ---- parse.c: the JSON readers ---- */

/* Parses a body as a JSON object. 0, or -EBADMSG with jansson's reason in
 * err ("not JSON: ..." / "not a JSON object"). The caller json_decref()s
 * *ret. */
int rf_json_parse(const char *body, size_t len, json_t **ret, char *err, size_t errlen);

/* True when s (n bytes) is a path we may request: starts with "/", at most
 * RF_URI_MAX - 1 bytes, printable ASCII without spaces, quotes, '\\'. */
bool rf_uri_ok(const char *s, size_t n);

/* The service root (DSP0266 §10.1 Service root). */
struct rf_root {
	char systems[RF_URI_MAX]; /* "" when absent */
	char managers[RF_URI_MAX];
	char sessions[RF_URI_MAX];  /* Links.Sessions; default when absent */
	char vendor[RF_VENDOR_MAX]; /* Vendor, else the first Oem key, else "" */
};
int rf_parse_root(const json_t *root, struct rf_root *ret, char *err, size_t errlen);

/* Picks a member of a collection (Members[].@odata.id): the one whose Id
 * (its "Id" when inlined, else the URI's last segment) is name, or with
 * name "" the only one (the first when several). 0 with its URI in ret
 * (RF_URI_MAX bytes); -ENOENT with the Ids in err ("no system \"x\";
 * Ids: 1, 2"); -EBADMSG for a collection that does not parse. */
int rf_pick_member(const json_t *coll, const char *name, char *ret, char *err, size_t errlen);

/* A ComputerSystem, what BMC control reads of it. */
struct rf_system {
	char id[BMC_NAME_MAX];
	enum bmc_power power;          /* On, Off; else unknown */
	bool boot_present;             /* a Boot object */
	char boot_target[32];          /* BootSourceOverrideTarget */
	char boot_enabled[16];         /* Disabled, Once, Continuous */
	char boot_mode[16];            /* UEFI, Legacy; "" when absent */
	bool targets_known;            /* Target@Redfish.AllowableValues */
	uint32_t targets;              /* bits 1 << bmc_boot_device */
	char reset_target[RF_URI_MAX]; /* "" when not advertised */
	bool resets_known;             /* ResetType@Redfish.AllowableValues */
	unsigned resets;               /* RF_RESET_BIT()s */
	char etag[RF_ETAG_MAX];        /* @odata.etag, "" when absent */
	char manufacturer[RF_VENDOR_MAX];
	char settings[RF_URI_MAX]; /* @Redfish.Settings.SettingsObject */
	char manager[RF_URI_MAX];  /* Links.ManagedBy[0] */
	char vmedia[RF_URI_MAX];   /* its own VirtualMedia collection */
};
int rf_parse_system(const json_t *sys, struct rf_system *ret, char *err, size_t errlen);

/* The boot override that a system holds, as bmc_reply reads it: false
 * when none is set (Enabled Disabled) or its target is one we do not
 * know. */
bool rf_system_boot(const struct rf_system *s, struct bmc_boot *ret);

/* The message of a Redfish error body: error.@Message.ExtendedInfo[0]
 * .Message, else error.message; "" when none. Into out (RF_MSG_MAX),
 * control characters replaced. */
void rf_parse_error(const json_t *body, char *out, size_t outlen);

/* A Task (TaskMonitor's body): 1 when it completed, 0 while it runs, -1
 * when it failed (Exception, Killed, Cancelled) with its first message in
 * msg; -EBADMSG without a TaskState. */
int rf_parse_task(const json_t *task, char *msg, size_t msglen);

/* A Manager: its VirtualMedia collection's URI. -ENOENT when none. */
int rf_parse_manager_vmedia(const json_t *mgr, char *ret);

/* A VirtualMedia member: whether it takes CDs (MediaTypes CD or DVD, or
 * no MediaTypes at all), and its InsertMedia / EjectMedia targets ("" when
 * not advertised). */
struct rf_vmedia {
	bool cd;
	bool inserted;
	char insert[RF_URI_MAX];
	char eject[RF_URI_MAX];
};
int rf_parse_vmedia(const json_t *vm, struct rf_vmedia *ret, char *err, size_t errlen);

/* The ResetTypes that do action: one, or two in order (a cycle as
 * ForceOff then On where PowerCycle is lacking). allowed is what the
 * system advertises (when known), less what the vendor lacks. Returns
 * the count, or -ENOTSUP when nothing allowed does it. */
int rf_choose_reset(enum bmc_power_action action, bool known, unsigned allowed,
		    const struct rf_vendor *vendor, enum rf_reset out[2]);

/* ---- engine.c <-> client.c ---- */

struct rf_engine;
struct rf_call;
struct rf_ep;

/* One HTTP exchange's outcome, handed to client.c. */
struct rf_resp {
	int curl_code;        /* CURLcode */
	const char *curl_err; /* curl's error text, "" when none */
	long status;          /* HTTP status; 0 without one */
	const char *body;     /* NUL-terminated, len bytes */
	size_t len;
	bool too_big;         /* the body passed RF_MAX_BODY */
	const char *location; /* headers, "" when absent */
	const char *token;
	const char *etag;
};

/* Starts a request for call (NULL: a detached one, a session DELETE).
 * method "GET", "POST", "PATCH", "DELETE"; path from rf_uri_ok(); body
 * JSON or NULL; if_match or NULL. The answer goes to rf_call_resp() from
 * process(). 0, or a negative errno. */
int rf_http(struct rf_engine *e, struct rf_ep *ep, struct rf_call *call, const char *method,
	    const char *path, const char *body, const char *if_match);

/* What engine.c keeps per BMC (host, port, user, system name). */
struct rf_ep {
	struct bmc_endpoint ep;   /* password included; never logged */
	char token[RF_TOKEN_MAX]; /* "" when no session */
	char session[RF_URI_MAX]; /* the session's URI, for its DELETE */
	struct rf_root root;
	char system[RF_URI_MAX];
	char vmedia[RF_URI_MAX]; /* the CD VirtualMedia member, once found */
	const struct rf_vendor *vendor;
	struct rf_call *head, *tail; /* calls, run one at a time in order */
	struct rf_ep *next;          /* engine's list */
	uint64_t used_ms;
	uint64_t answer_ms; /* its last answer came; 0: none yet */
};

/* One call (client.c's state machine; engine.c queues it). */
#define RF_MAX_VMEDIA 8 /* VirtualMedia members looked at */
/* What a MEDIA_SET call finds, apart: 5 KB that the thousand power polls
 * submitted at once need not carry. */
struct rf_media {
	struct rf_vmedia vm;
	char uris[RF_MAX_VMEDIA][RF_URI_MAX];
	size_t n, i;
};
struct rf_call {
	struct rf_engine *e;
	struct rf_ep *ep;
	struct bmc_endpoint target; /* the endpoint as submitted */
	struct bmc_call call;
	bmc_done_fn done;
	void *userdata;
	uint64_t submit_ms;
	int state;                /* the answer awaited (client.c) */
	bool busy;                /* a transfer in flight */
	bool relogged;            /* re-login after a 401 done */
	bool etag_retried;        /* a 412 refetched once */
	bool xfer_failed;         /* a transfer could not start */
	unsigned polls;           /* task monitor GETs */
	uint64_t wake_ms;         /* a wait ends; 0: none */
	char monitor[RF_URI_MAX]; /* the task monitor */
	enum rf_reset resets[2];
	int nresets, ireset;
	struct rf_system sys;
	struct rf_media *media; /* MEDIA_SET's, owned; NULL before */
	/* The request in flight, for messages and a re-send after re-login. */
	int req_state;
	char method[8];
	char path[RF_URI_MAX];
	char *body; /* owned, NULL when none */
	char if_match[RF_ETAG_MAX];
	/* The request a 401 interrupted, sent again after the login. */
	bool resend;
	int resend_state;
	char resend_method[8];
	char resend_path[RF_URI_MAX];
	char *resend_body;
	char resend_if_match[RF_ETAG_MAX];
	int task_for;               /* the step a task monitor finishes */
	struct rf_call *next;       /* on its endpoint */
	struct rf_call *ready_next; /* engine's list of calls to start */
};

/* client.c: a call's life. Starts the call, now at the head of its
 * endpoint (from process()). */
void rf_call_start(struct rf_call *c, uint64_t now_ms);
/* A transfer of the call ended. */
void rf_call_resp(struct rf_call *c, const struct rf_resp *r, uint64_t now_ms);
/* A wait of the call (task monitor poll) is over. */
void rf_call_wake(struct rf_call *c, uint64_t now_ms);
/* Ends the call with fail and message (CANCELED from free()): calls its
 * callback and frees it. */
void rf_call_fail(struct rf_call *c, enum bmc_fail fail, const char *msg, uint64_t now_ms);

/* engine.c, for client.c: the call is leaving its endpoint's queue (its
 * callback runs next); the next call there is made ready. */
void rf_engine_call_done(struct rf_engine *e, struct rf_call *c);
/* The call waits until c->wake_ms. */
int rf_engine_wait(struct rf_engine *e, struct rf_call *c);
/* The endpoint's session ends (a new password, an eviction, free()): its
 * DELETE is sent, detached, when it had one; the token is cleared. */
void rf_engine_drop_session(struct rf_engine *e, struct rf_ep *ep);
