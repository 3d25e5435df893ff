/* conf — ironbell.yaml, read with libyaml into an immutable snapshot. (The
 * header is conf.h, not config.h, so that "config.h" always names
 * autoheader's.)
 *
 * The snapshot is built whole and never changed: a reload builds a new one
 * and swaps the pointer (daemon/main.c), so a thread that holds a snapshot
 * reads consistent values. An unknown key, a wrong type or a bad value is an
 * error reported as "file:line:column: message" (1-based line and column of
 * the offending key or value), and nothing is returned. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/log.h"
#include "common/net.h"
#include "store/store.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/ironbell/ironbell.yaml"
#define CONFIG_MAX_SIZE (1024 * 1024)
#define CONFIG_EXIT_STATUS 78 /* EX_CONFIG */

#define CONFIG_DHCP_MAX_INTERFACES 64 /* dhcp.interfaces entries */
#define CONFIG_IFNAME_MAX 15          /* bytes of an interface name (IFNAMSIZ - 1) */
#define CONFIG_DHCP_MAX_ARCH 32       /* dhcp.arch entries; with the 17 built-in
				       * ones they fit DHCP_POLICY_MAX_ARCHES */
#define CONFIG_BINARY_MAX 63          /* bytes of a binary file name (DHCP_HOST_BINARY_MAX) */
#define CONFIG_URL_MAX 160            /* bytes of dhcp.http_base_url: room for
				       * "/ipxe/binary/<mac>/<binary>" in a
				       * 255-byte URL */

/* dhcp.mode; the same order as enum dhcp_mode (dhcp/dhcp-policy.h). */
enum config_dhcp_mode {
	CONFIG_DHCP_RESERVATION,
	CONFIG_DHCP_PROXY,
	CONFIG_DHCP_AUTO_PROXY,
	CONFIG_DHCP_MODE_MAX
};

/* A bounded list of interface names, stored inline (nothing to free). */
struct config_ifnames {
	unsigned n;
	char name[CONFIG_DHCP_MAX_INTERFACES][CONFIG_IFNAME_MAX + 1];
};

#define CONFIG_MAX_CIDRS NET_MAX_CIDRS /* metadata.trusted_proxies entries */

/* Overrides of the built-in option 93 -> binary table, in file order. */
struct config_arch_map {
	unsigned n;
	struct config_arch_binary {
		uint16_t code; /* option 93 value (RFC 4578 §2.1) */
		char binary[CONFIG_BINARY_MAX + 1];
	} e[CONFIG_DHCP_MAX_ARCH];
};

struct ib_config {
	char *path; /* the file it was read from */
	enum log_level log_level;  /* log_level, default info */
	char *state_dir;           /* state_dir, default /var/lib/ironbell */

	struct {
		char *socket;         /* api.socket, default /run/ironbell/api.sock */
		unsigned socket_mode; /* api.socket_mode, default 0660 (a YAML string "0660") */
		char *listen;         /* api.listen "host:port" for TCP, NULL: no TCP */
		char *token_file;     /* api.token_file; required when api.listen is set */
		char *token;          /* its contents, trailing newline stripped; at
				       * least 32 bytes, the file mode 0600 or less */
		char *tls_cert;       /* api.tls_cert, PEM; NULL: the TCP listener is
				       * plain HTTP (allowed on loopback only) */
		char *tls_key;        /* api.tls_key, PEM; set with tls_cert */
		char *tls_cert_pem;   /* their contents */
		char *tls_key_pem;
	} api;

	struct {
		char *listen;         /* http.listen, default "0.0.0.0:7080" */
		unsigned threads;     /* http.threads, 0..64, default 0: one per CPU */
		bool pin_threads;     /* http.pin_threads, default true: with one thread
				       * per CPU, each on its own (daemon/http/http.c) */
		size_t max_body;      /* http.max_body, bytes, default 8 MiB (admin uploads) */
		unsigned idle_timeout; /* http.idle_timeout, seconds a connection may be idle
					* (both listeners; watches exempt), default 120 */
		bool public_metrics;   /* http.public_metrics, default true: /metrics on
				       * the public listener too */
		bool answer_cache;     /* http.answer_cache, default true: machines' answers
				       * from the in-memory cache (daemon/public/answers.c) */
		bool answer_prebuild;  /* http.answer_prebuild, default true: boot answers
				       * made when a Hardware is indexed (daemon/public/public.c) */
		uint32_t listen_ipv4;  /* derived: http.listen's address when it is one
				       * IPv4 address (host order), else 0 (any
				       * address, a name, IPv6) */
	} http;

	struct store_options store; /* store.changes_retention (100000),
				     * store.events_retention (10000),
				     * store.batch_max (1024),
				     * store.commit_delay (500 µs) */

	/* The DHCP server; it reads these at start, so a change needs a
	 * restart. IPv4 addresses are in host byte order, 0 meaning unset. */
	struct {
		bool enabled;               /* dhcp.enabled, default false */
		enum config_dhcp_mode mode; /* dhcp.mode, default reservation */
		struct config_ifnames interfaces; /* dhcp.interfaces; empty: every interface */
		uint32_t server_address;    /* option 54 / siaddr; 0: the receiving
					     * interface's address */
		uint32_t public_address;    /* in URLs; 0: server_address */
		uint32_t tftp_address;      /* TFTP server; 0: public_address */
		char *http_base_url;        /* http:// or https://, NULL:
					     * http://<public_address>:<http.listen port> */
		uint32_t syslog_address;    /* option 7; 0: not sent */
		uint32_t lease_time;        /* seconds, 60..31536000, default 86400 */
		unsigned lease_reuse;       /* percent, 0..49, default 25; 0: off */
		struct config_arch_map arch; /* overrides of the built-in arch table */
		bool subnet_check;          /* dhcp.subnet_check, default true: a
					     * directly attached client's reservation
					     * must be on its interface's subnets */
	} dhcp;

	/* The TFTP server (tftp/); read at start. */
	struct {
		bool enabled;            /* tftp.enabled, default false */
		char *listen;            /* tftp.listen, default "0.0.0.0:69" */
		unsigned max_transfers;  /* tftp.max_transfers, 1..10000, default 256 */
		unsigned blksize_max;    /* tftp.blksize_max, 512..65464, default 1468;
					  * also clamped to the path MTU */
		unsigned windowsize_max; /* tftp.windowsize_max, 1..64, default 16 */
		unsigned timeout;        /* tftp.timeout, seconds before the first
					  * retransmission, 1..255, default 1 */
		unsigned retries;        /* tftp.retries, 1..20, default 5 */
	} tftp;

	/* iPXE binaries and scripts (ipxe/), served over HTTP and TFTP. */
	struct {
		char *binary_dir;      /* ipxe.binary_dir, default /usr/lib/ipxe: the
					* TFTP root and /ipxe/binary/ */
		char *script_template; /* ipxe.script_template, a file; NULL: built in */
		char *script;          /* that file's contents, checked; NULL: built in */
		size_t script_len;
		char *osie_dir;        /* ipxe.osie_dir: served at /osie/; NULL: not served */
		char *osie_url;        /* ipxe.osie_url, base URL of kernel and initrd;
					* NULL: <http base URL>/osie */
		char *kernel;          /* ipxe.kernel, default "vmlinuz-{{arch}}" */
		char *initrd;          /* ipxe.initrd, default "initramfs-{{arch}}" */
		char *kernel_args;     /* ipxe.kernel_args: appended to every command line */
		char *grpc_authority;  /* ipxe.grpc_authority "host:port"; NULL:
					* <public_address>:42113 */
		char *syslog_host;     /* ipxe.syslog_host; NULL: dhcp.syslog_address,
					* else the public address */
		bool tinkerbell_tls;   /* ipxe.tinkerbell_tls, default false */
		bool tinkerbell_insecure_tls; /* ipxe.tinkerbell_insecure_tls, default false */
		unsigned retries;      /* ipxe.retries, 0..100, default 3: kernel/initrd fetches */
		unsigned max_downloads_per_client; /* ipxe.max_downloads_per_client,
						    * 0..10000, default 4; 0: no bound */
	} ipxe;

	/* Instance metadata (metadata/), on the public listener. */
	struct {
		struct net_cidrs trusted_proxies; /* metadata.trusted_proxies: peers
						   * whose X-Forwarded-For counts */
	} metadata;

	/* The syslog receiver (syslog/). */
	struct {
		bool enabled;        /* syslog.enabled, default false */
		char *listen;        /* syslog.listen, default "0.0.0.0:514" */
		unsigned rate;       /* syslog.rate, messages per second per source, default 50 */
		unsigned burst;      /* syslog.burst, default 200 */
		size_t max_message;  /* syslog.max_message, bytes, 480..65535, default 8KiB */
	} syslog;

	/* The worker API (workflow/, gRPC on :42113): struct
	 * wf_grpc_settings, read at start. */
	struct {
		bool enabled;             /* grpc.enabled, default true */
		char *listen;             /* grpc.listen, default ":42113" */
		char *tls_cert;           /* grpc.tls_cert; NULL: h2c only */
		char *tls_key;            /* grpc.tls_key, with tls_cert */
		unsigned max_connections; /* grpc.max_connections, 1..65536, default 4096 */
		size_t max_message;       /* grpc.max_message, bytes, 1KiB..64MiB, default 1MiB */
		unsigned max_streams;     /* grpc.max_streams, 1..1024, default 16 */
		unsigned long_poll_s;     /* grpc.long_poll, 1..3600, default 20 */
		unsigned idle_timeout_s;  /* grpc.idle_timeout, 1..86400, default 300 */
	} grpc;

	/* BMC control (bmc/): struct bmc_settings, read at start. Durations
	 * carry their unit in the field's name. */
	struct {
		bool enabled; /* bmc.enabled, default true */
		struct {
			unsigned cipher_suite; /* bmc.ipmi.cipher_suite, 3 or 17, default 3 */
			unsigned timeout_ms;   /* bmc.ipmi.timeout, 100..60000, default 1000 */
			unsigned retries;      /* bmc.ipmi.retries, 1..10, default 3 */
			unsigned max_sessions; /* bmc.ipmi.max_sessions, 1..65536, default 4096 */
		} ipmi;
		struct {
			unsigned timeout_ms;      /* bmc.redfish.timeout, 1000..600000, default 20000 */
			unsigned max_connections; /* bmc.redfish.max_connections, 1..65536,
						   * default 256 */
			char *ca_file;            /* bmc.redfish.ca_file; NULL: the system's */
		} redfish;
		unsigned poll_interval_s;    /* bmc.poll_interval, 1..86400, default 30 */
		unsigned task_timeout_s;     /* bmc.task_timeout, 1..86400, default 600 */
		unsigned max_jobs;           /* bmc.max_jobs, 1..100000, default 64 */
		unsigned verify_interval_ms; /* bmc.verify_interval, 100..60000, default 1000 */
	} bmc;

	/* The workflow controller (workflow/): struct wf_settings, read at
	 * start. Durations in seconds. */
	struct {
		bool enabled;                      /* workflow.enabled, default true */
		unsigned resync_s;                 /* workflow.resync_interval, 1..86400, default 60 */
		unsigned default_action_timeout_s; /* workflow.default_action_timeout,
						    * 1..31536000, default 3600 */
		unsigned action_grace_s;           /* workflow.action_grace, 1..86400, default 30 */
		unsigned retry_base_s;             /* workflow.retry_backoff, 1..86400, default 5,
						    * at most retry_max_s */
		unsigned retry_max_s;              /* workflow.retry_backoff_max, 1..86400,
						    * default 300 */
	} workflow;

	/* Kubernetes mode (kube/): struct kube_settings, read at start.
	 * Durations carry their unit in the field's name. */
	struct {
		bool enabled;             /* kube.enabled, default false */
		char *kubeconfig;         /* kube.kubeconfig; NULL: in-cluster */
		char *context;            /* kube.context; NULL: current-context */
		char *namespace_;         /* kube.namespace; NULL: every namespace */
		unsigned qps;             /* kube.qps, 1..10000, default 5 */
		unsigned burst;           /* kube.burst, 1..10000, default 10 */
		unsigned page_size;       /* kube.page_size, 1..10000, default 500 */
		unsigned watch_timeout_s; /* kube.watch_timeout, 10..3600, default 300 */
		unsigned backoff_min_ms;  /* kube.backoff_min, 10..60000, default 800 */
		unsigned backoff_max_ms;  /* kube.backoff_max, 100..600000, default 30000 */
		unsigned request_timeout_ms; /* kube.request_timeout, 1000..600000, default 30000 */
		unsigned write_delay_ms;  /* kube.write_delay, 1..60000, default 100 */
		bool leader_election;     /* kube.leader_election, default true */
		char *lease_name;         /* kube.lease_name, default "ironbelld" */
		char *lease_namespace;    /* kube.lease_namespace; NULL: kube.namespace,
					   * the context's, or "default" */
		char *identity;           /* kube.identity; NULL: host name and pid */
		unsigned lease_duration_s; /* kube.lease_duration, 2..3600, default 15 */
		unsigned renew_deadline_s; /* kube.renew_deadline, 1..3600, default 10,
					    * less than lease_duration */
		unsigned retry_period_s;   /* kube.retry_period, 1..3600, default 2,
					    * less than renew_deadline */
		char *status_schema;       /* kube.status_schema: auto, monorepo or legacy */
	} kube;
};

/* Reads and checks the file at path. On success returns 0 and a new
 * snapshot. On failure returns a negative errno and writes to err a message
 * of the form "path:line:column: message" (or "path: message" when the file
 * cannot be read). */
int config_load(const char *path, struct ib_config **ret, char *err, size_t errlen);
/* The same from memory; name is used in messages as the file name. */
int config_load_string(const char *name, const char *text, size_t len, struct ib_config **ret,
		       char *err, size_t errlen);
/* A snapshot with every default (as from an empty file). NULL on ENOMEM. */
struct ib_config *config_new_default(void);
/* Accepts NULL. */
void config_free(struct ib_config *c);
