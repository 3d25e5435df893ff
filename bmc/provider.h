/* provider — private to bmc/: what the controllers ask of a BMC, and how
 * an engine (bmc/ipmi/engine.c, bmc/redfish/engine.c) answers.
 *
 * DESIGN: every engine is non-blocking and owns one file descriptor that
 * the bmc thread polls (the IPMI engine its UDP socket; the Redfish engine
 * an epoll fd holding libcurl's sockets). The thread's loop, for each
 * engine E:
 *
 *     poll(E.fd(), POLLIN, min(E.timeout_ms(now), ...));
 *     E.process(now);          // reads, retransmits, times out, and
 *                              // calls the done callbacks
 *
 * A call is submitted with submit(); its callback runs later, always from
 * process() (never from inside submit()), exactly once, whatever happens:
 * answered, refused, timed out or the engine freed (then with
 * BMC_FAIL_CANCELED). So the caller's per-call state lives until its
 * callback and no longer. Engines keep what they learned about a BMC
 * (IPMI session, Redfish session token, system URI, ETag) between calls,
 * keyed by the endpoint's host, port and user, and reuse it while the BMC
 * allows.
 *
 * Engines never log a password, and a reply's message never holds one. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Times are CLOCK_MONOTONIC milliseconds (bmc_now_ms()). */
uint64_t bmc_now_ms(void);

enum bmc_power {
	BMC_POWER_UNKNOWN,
	BMC_POWER_ON,
	BMC_POWER_OFF,
};

/* A Rufio Action's powerAction. */
enum bmc_power_action {
	BMC_ACT_ON,    /* IPMI chassis up;        Redfish On */
	BMC_ACT_OFF,   /* IPMI chassis down;      Redfish ForceOff */
	BMC_ACT_SOFT,  /* IPMI soft (ACPI);       Redfish GracefulShutdown */
	BMC_ACT_CYCLE, /* IPMI cycle;             Redfish PowerCycle (else
			* ForceOff + On where the vendor lacks it) */
	BMC_ACT_RESET, /* IPMI hard reset;        Redfish ForceRestart */
};

/* A Rufio bootDevice's device. */
enum bmc_boot_device {
	BMC_BOOT_NONE, /* no override */
	BMC_BOOT_PXE,
	BMC_BOOT_DISK,
	BMC_BOOT_BIOS,
	BMC_BOOT_CDROM,
	BMC_BOOT_SAFE,
	BMC_BOOT_HTTP, /* Redfish UefiHttp; IPMI has none */
};

struct bmc_boot {
	enum bmc_boot_device device;
	bool persistent; /* Continuous / persistent; else one time */
	bool efi;        /* UEFI boot mode; else legacy */
};

enum bmc_cmd {
	BMC_CMD_POWER_GET, /* reply.power */
	BMC_CMD_POWER_SET, /* call.action; reply.power unknown */
	BMC_CMD_BOOT_SET,  /* call.boot */
	BMC_CMD_BOOT_GET,  /* reply.boot, reply.boot_known */
	BMC_CMD_MEDIA_SET, /* call.media_url ("" ejects), Redfish only */
	BMC_CMD_MAX
};

/* Why a call failed: the label of ironbell_bmc_failures_total. */
enum bmc_fail {
	BMC_FAIL_NONE,
	BMC_FAIL_TIMEOUT,     /* no answer within the retries */
	BMC_FAIL_AUTH,        /* credentials refused (RAKP status, HTTP 401/403) */
	BMC_FAIL_TLS,         /* the certificate did not verify */
	BMC_FAIL_NETWORK,     /* connection refused, host unreachable, DNS */
	BMC_FAIL_PROTOCOL,    /* a reply that does not parse, a bad HMAC, a
			       * redirect to another host, a body not JSON */
	BMC_FAIL_REFUSED,     /* the BMC understood and said no: a completion
			       * code, an HTTP 4xx/5xx, a failed task */
	BMC_FAIL_UNSUPPORTED, /* the BMC or the provider cannot do it */
	BMC_FAIL_CANCELED,    /* the engine was freed first */
	BMC_FAIL_MAX
};
/* "timeout", "auth", ... ("none" for BMC_FAIL_NONE). */
const char *bmc_fail_name(enum bmc_fail f);

/* Where a BMC is and how to speak to it: what the Machine and its Secret
 * say. Copied by submit(); the caller may reuse it once submit returns. */
#define BMC_HOST_MAX 256
#define BMC_USER_MAX 64
#define BMC_PASSWORD_MAX 128
#define BMC_NAME_MAX 128
struct bmc_endpoint {
	char host[BMC_HOST_MAX]; /* name or address, no port */
	uint16_t port;           /* 0: the provider's default (623, 443) */
	char user[BMC_USER_MAX];
	char password[BMC_PASSWORD_MAX];
	/* IPMI */
	unsigned cipher_suite; /* 3 or 17; 0: the engine's default */
	/* Redfish */
	bool insecure_tls;            /* do not verify the certificate */
	bool basic_auth;              /* Basic on every request, no session */
	char system_name[BMC_NAME_MAX]; /* Systems member Id; "": the only one
					 * (or the first) */
};

#define BMC_MEDIA_URL_MAX 2048
struct bmc_call {
	enum bmc_cmd cmd;
	enum bmc_power_action action;  /* POWER_SET */
	struct bmc_boot boot;          /* BOOT_SET */
	char media_url[BMC_MEDIA_URL_MAX]; /* MEDIA_SET */
};

#define BMC_MESSAGE_MAX 256
struct bmc_reply {
	enum bmc_fail fail;
	char message[BMC_MESSAGE_MAX]; /* on failure: what and why, for the
					* Contactable condition or the Task,
					* e.g. "RAKP 2: unauthorized name (status
					* 0x0d)", "connect to 10.0.0.5:443:
					* certificate verify failed" */
	enum bmc_power power;          /* POWER_GET */
	struct bmc_boot boot;          /* BOOT_GET */
	bool boot_known;               /* BOOT_GET: the BMC said what is set */
	double seconds;                /* round trip of the call, session set-up
					* included, for the latency metric */
};

typedef void (*bmc_done_fn)(const struct bmc_reply *reply, void *userdata);

struct bmc_settings; /* bmc/bmc.h */

/* An engine, as the controllers see it. */
struct bmc_engine_ops {
	const char *name; /* the provider's name in preferredOrder and in
			   * metric labels: "ipmitool", "redfish" */
	/* Makes an engine from the part's settings (the fields of its
	 * provider). 0, or a negative errno with a message in err. */
	int (*new)(const struct bmc_settings *settings, void **ret, char *err, size_t errlen);
	/* The fd to poll for POLLIN. */
	int (*fd)(void *engine);
	/* Milliseconds until process() must run even without input (-1:
	 * nothing pending). */
	int (*timeout_ms)(void *engine, uint64_t now_ms);
	/* Reads what is ready, retransmits and times out; calls callbacks. */
	void (*process)(void *engine, uint64_t now_ms);
	/* Queues a call. 0, or a negative errno (-EINVAL for a call the
	 * provider cannot express, -ENOMEM, -EAGAIN when full, -ECANCELED
	 * once free() has begun) with no callback to come. */
	int (*submit)(void *engine, const struct bmc_endpoint *ep, const struct bmc_call *call,
		      bmc_done_fn done, void *userdata);
	/* Sessions (IPMI) or logins (Redfish) open now. */
	size_t (*sessions)(void *engine);
	/* Closes every session (IPMI Close Session, Redfish DELETE), waiting
	 * at most timeout_ms, then frees; pending calls get
	 * BMC_FAIL_CANCELED. */
	void (*free)(void *engine, unsigned timeout_ms);
};

/* The engines (bmc/ipmi/engine.c, bmc/redfish/engine.c). */
extern const struct bmc_engine_ops bmc_ipmi_ops;
extern const struct bmc_engine_ops bmc_redfish_ops;
