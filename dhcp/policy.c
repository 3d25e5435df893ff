/* policy — what the DHCP server answers, as a pure function of the request,
 * the client's Hardware interface (struct dhcp_host) and the configuration.
 *
 * DESIGN: the server thread parses a datagram (codec.c), looks the MAC up
 * in its store reader, and calls dhcp_policy(); the decision says whether
 * to send, what (a struct dhcp_reply that dhcp_write serializes) and where
 * (RFC 2131 §4.1), and, when silent, why, for the log and the metrics. The
 * tests and the fuzzers call the same function with no socket. Nothing here
 * allocates, logs or keeps state.
 *
 * Two families of answers, following Tinkerbell's Smee (docs/compatibility.md, "DHCP"):
 *  - reservation mode: full DHCP for the MACs that have Hardware, with the
 *    address the Hardware reserves; no lease database is needed, because
 *    every address is a reservation;
 *  - proxy and auto-proxy modes: ProxyDHCP (PXE 2.1 §2.2.5) for netboot
 *    clients only: boot information without an address, another server
 *    leasing the address. Auto-proxy also answers machines with no
 *    Hardware, for discovery.
 *
 * The boot decision is taken in a fixed order (boot_choose): explicit
 * Hardware boot file; an iPXE client (user class iPXE or Tinkerbell) gets
 * its script URL; a UEFI HTTP Boot client gets the http:// URL of an iPXE
 * binary; a plain PXE ROM gets the binary over TFTP. The iPXE rule must come
 * before the others: iPXE also calls itself PXEClient, and answering it
 * with a binary makes it load itself again, forever.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/mac.h"
#include "dhcp/dhcp-policy.h"

#define DHCP_SERVER_PORT 67

/* ---- configuration ---- */

static const struct {
	uint16_t arch;
	const char *binary;
} default_arches[] = {
	/* RFC 4578 §2.1 and the IANA "Processor Architecture Types" registry;
	 * the mapping is Smee's. */
	{ 0, "undionly.kpxe" },  /* x86 BIOS */
	{ 1, "undionly.kpxe" },  /* NEC/PC98 */
	{ 2, "undionly.kpxe" },  /* Itanium */
	{ 3, "undionly.kpxe" },  /* DEC Alpha */
	{ 4, "undionly.kpxe" },  /* Arc x86 */
	{ 5, "undionly.kpxe" },  /* Intel Lean Client */
	{ 6, "ipxe.efi" },       /* x86 UEFI */
	{ 7, "ipxe.efi" },       /* x64 UEFI */
	{ 8, "ipxe.efi" },       /* EFI Xscale */
	{ 9, "ipxe.efi" },       /* EBC */
	{ 10, "snp-arm64.efi" }, /* ARM 32-bit UEFI */
	{ 11, "snp-arm64.efi" }, /* ARM 64-bit UEFI */
	{ 15, "ipxe.efi" },      /* x86 UEFI HTTP */
	{ 16, "ipxe.efi" },      /* x64 UEFI HTTP */
	{ 18, "snp-arm64.efi" }, /* ARM 32-bit UEFI HTTP */
	{ 19, "snp-arm64.efi" }, /* ARM 64-bit UEFI HTTP */
	{ 20, "undionly.kpxe" }, /* x86 BIOS HTTP */
	{ 41, "snp-arm64.efi" }, /* ARM 64-bit "uboot" (Raspberry Pi) */
};

void dhcp_policy_config_default(struct dhcp_policy_config *cfg, uint32_t public_ip)
{
	char ip[16];

	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = DHCP_MODE_RESERVATION;
	cfg->netboot = true;
	cfg->server_id = cfg->http_ip = cfg->tftp_ip = public_ip;
	cfg->lease_time = DHCP_DEFAULT_LEASE;
	for (size_t i = 0; i < sizeof(default_arches) / sizeof(default_arches[0]); i++) {
		cfg->arches[i].arch = default_arches[i].arch;
		snprintf(cfg->arches[i].binary, sizeof(cfg->arches[i].binary), "%s",
			 default_arches[i].binary);
	}
	cfg->narches = sizeof(default_arches) / sizeof(default_arches[0]);
	dhcp_ip_str(public_ip, ip);
	snprintf(cfg->script_url, sizeof(cfg->script_url),
		 "http://%s:7080/ipxe/script/{mac}/auto.ipxe", ip);
	snprintf(cfg->binary_url, sizeof(cfg->binary_url),
		 "http://%s:7080/ipxe/binary/{mac}/{binary}", ip);
}

int dhcp_policy_set_arch(struct dhcp_policy_config *cfg, uint16_t arch, const char *binary)
{
	size_t i;

	for (i = 0; i < cfg->narches && cfg->arches[i].arch != arch; i++)
		;
	if (i == cfg->narches) {
		if (cfg->narches == DHCP_POLICY_MAX_ARCHES)
			return -E2BIG;
		cfg->narches++;
	}
	cfg->arches[i].arch = arch;
	snprintf(cfg->arches[i].binary, sizeof(cfg->arches[i].binary), "%s", binary);
	return 0;
}

const char *dhcp_policy_arch_binary(const struct dhcp_policy_config *cfg, uint16_t arch)
{
	for (size_t i = 0; i < cfg->narches && i < DHCP_POLICY_MAX_ARCHES; i++)
		if (cfg->arches[i].arch == arch && cfg->arches[i].binary[0])
			return cfg->arches[i].binary;
	return NULL;
}

const char *dhcp_boot_name(enum dhcp_boot b)
{
	static const char *const names[DHCP_BOOT_MAX] = {
		[DHCP_BOOT_NONE] = "none",
		[DHCP_BOOT_EXPLICIT] = "explicit",
		[DHCP_BOOT_IPXE_SCRIPT] = "ipxe-script",
		[DHCP_BOOT_HTTP_BOOT] = "http-boot",
		[DHCP_BOOT_PXE_BINARY] = "pxe-binary",
		[DHCP_BOOT_NOT_ALLOWED] = "not-allowed",
	};
	return (unsigned)b < DHCP_BOOT_MAX ? names[b] : "unknown";
}

/* ---- helpers ---- */

struct ctx {
	const struct dhcp_packet *req;
	const struct dhcp_host *host; /* NULL: no Hardware (auto-proxy, or a NAK) */
	const struct dhcp_link *link; /* NULL: the interface's subnets unknown */
	const struct dhcp_policy_config *cfg;
	struct dhcp_reply *r;
	struct dhcp_decision *d;
	uint16_t port;
	bool proxy;
	char mac[MAC_STR_SIZE];
};

/* Appends n bytes of s to out (at *len, cap bytes with the NUL). */
static int put(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
	if (n >= cap - *len)
		return -ENAMETOOLONG;
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = '\0';
	return 0;
}

/* Expands "{mac}" and "{binary}" in pattern into out. */
static int expand(const char *pattern, const char *mac, const char *binary, char *out, size_t cap)
{
	size_t len = 0;
	int e = 0;

	out[0] = '\0';
	for (const char *p = pattern; *p && e == 0;) {
		if (strncmp(p, "{mac}", 5) == 0) {
			e = put(out, cap, &len, mac, strlen(mac));
			p += 5;
		} else if (binary && strncmp(p, "{binary}", 8) == 0) {
			e = put(out, cap, &len, binary, strlen(binary));
			p += 8;
		} else {
			e = put(out, cap, &len, p, 1);
			p++;
		}
	}
	return e;
}

/* Puts a boot file or URL into option 67 (required: never dropped to fit)
 * and, when it fits, into the header's file field, which old PXE ROMs read
 * instead of 67 (RFC 2132 §9.5). Records it in the decision. */
static int set_bootfile(struct ctx *c, const char *file)
{
	size_t n = strlen(file);
	int e;

	if (n >= sizeof(c->d->file))
		return -ENAMETOOLONG;
	memcpy(c->d->file, file, n + 1);
	memset(c->r->file, 0, sizeof(c->r->file));
	if (n < sizeof(c->r->file))
		memcpy(c->r->file, file, n);
	if ((e = dhcp_reply_set_string(c->r, DHCP_OPT_BOOTFILE, file)) < 0)
		return e;
	dhcp_reply_require(c->r, DHCP_OPT_BOOTFILE);
	return 0;
}

static int silent(struct ctx *c, const char *why)
{
	c->d->why = why;
	return 0;
}

/* Raspberry Pi Trading's OUIs (the IEEE registry). The Pi's network
 * bootloader calls itself "PXEClient:Arch:00000" like an x86 BIOS, so
 * Smee recognises it by its MAC: it gets arch 41 (ARM 64-bit "uboot") and
 * the two PXE menu sub-options its firmware waits for. */
static bool raspberry_pi(const uint8_t mac[6])
{
	static const uint8_t ouis[][3] = {
		{ 0xb8, 0x27, 0xeb }, { 0xdc, 0xa6, 0x32 }, { 0xe4, 0x5f, 0x01 },
		{ 0x28, 0xcd, 0xc1 }, { 0xd8, 0x3a, 0xdd }, { 0x2c, 0xcf, 0x67 },
	};
	for (size_t i = 0; i < sizeof(ouis) / sizeof(ouis[0]); i++)
		if (memcmp(mac, ouis[i], 3) == 0)
			return true;
	return false;
}

#define DHCP_ARCH_RPI 41

/* A netboot client (docs/compatibility.md, "DHCP"): option 60 starts with PXEClient or
 * HTTPClient, options 93 and 94 present, and 97 absent or well formed
 * (RFC 4578 §2.3: type 0 and 16 bytes). A Raspberry Pi's arch is 41,
 * whatever it sends. */
static bool netboot_client(const struct dhcp_packet *req, uint16_t *ret_arch)
{
	uint16_t arch;
	size_t n = 0;
	uint8_t guid[16];

	if (!dhcp_vendor_class_prefix(req, "PXEClient") &&
	    !dhcp_vendor_class_prefix(req, "HTTPClient"))
		return false;
	if (dhcp_client_arch(req, &arch, 1, &n) < 0 || n == 0)
		return false;
	if (!dhcp_opt_present(req, DHCP_OPT_CLIENT_NDI))
		return false;
	if (dhcp_opt_present(req, DHCP_OPT_CLIENT_GUID) && dhcp_client_guid(req, guid) < 0)
		return false;
	*ret_arch = raspberry_pi(req->chaddr) ? DHCP_ARCH_RPI : arch;
	return true;
}

/* ---- the boot decision ---- */

/* Hardware tftp_server_name / boot_file_name: options 66 and 67 and the
 * header's siaddr (when the name is an address), sname and file. */
static int boot_explicit(struct ctx *c)
{
	const struct dhcp_host *h = c->host;
	uint32_t a = 0;
	int e;

	c->d->boot = DHCP_BOOT_EXPLICIT;
	if (h->tftp_server_name[0]) {
		size_t n = strlen(h->tftp_server_name);
		struct in_addr in;
		/* A dotted quad becomes siaddr too, for PXE ROMs that ignore
		 * option 66; a host name cannot. */
		if (inet_pton(AF_INET, h->tftp_server_name, &in) == 1)
			a = ntohl(in.s_addr);
		c->r->siaddr = a;
		if (n < sizeof(c->r->sname))
			memcpy(c->r->sname, h->tftp_server_name, n);
		if ((e = dhcp_reply_set_string(c->r, DHCP_OPT_TFTP_SERVER, h->tftp_server_name)) <
		    0)
			return e;
		dhcp_reply_require(c->r, DHCP_OPT_TFTP_SERVER);
	}
	return set_bootfile(c, h->boot_file_name);
}

/* Option 43 with PXE discovery control = 8 (PXE 2.1 §2.2.5: boot from the
 * file name, no boot server discovery), and option 60 when it is to be
 * sent; both required. A Raspberry Pi also gets a boot menu (9: type 0,
 * one 17-byte entry) and a prompt (10: no timeout, "PXE"), without which
 * its bootloader does not go on (Smee sends the same). */
static int netboot_options(struct ctx *c, const char *vendor_class)
{
	static const uint8_t eight = 0x08;
	static const uint8_t menu[] = "\0\0\x11Raspberry Pi Boot";
	static const uint8_t prompt[] = "\0PXE";
	const struct dhcp_subopt subs[] = {
		{ DHCP_PXE_DISCOVERY_CONTROL, 1, &eight },
		{ DHCP_PXE_BOOT_MENU, sizeof(menu) - 1, menu },
		{ DHCP_PXE_MENU_PROMPT, sizeof(prompt) - 1, prompt },
	};
	int e;

	if ((e = dhcp_reply_set_suboptions(c->r, DHCP_OPT_VENDOR_SPECIFIC, subs,
					   raspberry_pi(c->req->chaddr) ? 3 : 1)) < 0)
		return e;
	dhcp_reply_require(c->r, DHCP_OPT_VENDOR_SPECIFIC);
	if (vendor_class) {
		if ((e = dhcp_reply_set_string(c->r, DHCP_OPT_VENDOR_CLASS, vendor_class)) < 0)
			return e;
		dhcp_reply_require(c->r, DHCP_OPT_VENDOR_CLASS);
	}
	return 0;
}

/* Returns 0 with the boot information in the reply (or none), 1 when the
 * request must go unanswered (c->d->why set), or a negative errno. */
static int boot_choose(struct ctx *c)
{
	const struct dhcp_packet *req = c->req;
	const struct dhcp_host *h = c->host;
	char url[DHCP_POLICY_URL_MAX + 1];
	const char *bin;
	uint16_t arch = 0;
	bool http, allowed;
	int e;

	/* (a) Explicit boot information is plain DHCP configuration: it
	 * applies to every client and replaces the netboot defaults. */
	if (h && h->boot_file_name[0])
		return boot_explicit(c);
	if (!c->cfg->netboot || !netboot_client(req, &arch))
		return 0;

	/* UEFI HTTP Boot: OVMF sends "HTTPClient:Arch:00016:..." and ignores
	 * an offer that does not echo "HTTPClient" (docs/compatibility.md,
	 * "Client quirks"). Matched by
	 * prefix, or by the x64 HTTP arch alone. */
	http = dhcp_vendor_class_prefix(req, "HTTPClient") || arch == 16;
	/* In proxy mode the vendor class is always sent (PXE 2.1 §2.2.5: a
	 * proxy offer is recognised by it); in reservation mode only the
	 * HTTPClient echo, as Smee does. */
	if ((e = netboot_options(c, http ? "HTTPClient" : c->proxy ? "PXEClient" : NULL)) < 0)
		return e;

	/* allowPXE must be true; auto-proxy answers machines without
	 * Hardware (discovery). */
	allowed = h ? h->allow_pxe == DHCP_TRUE : c->cfg->mode == DHCP_MODE_AUTO_PROXY;
	if (!allowed) {
		c->d->boot = DHCP_BOOT_NOT_ALLOWED;
		c->r->siaddr = 0;
		if (c->proxy) {
			snprintf(url, sizeof(url), "/%s/netboot-not-allowed", c->mac);
			return set_bootfile(c, url);
		}
		return set_bootfile(c, "/netboot-not-allowed");
	}

	/* (b) iPXE, ours ("Tinkerbell", set by the embedded script) or any
	 * other (QEMU's NIC ROM, a chained ipxe.efi): the script. This rule
	 * comes before (c) and (d), or iPXE loops loading itself. */
	if (dhcp_has_user_class(req, "iPXE") || dhcp_has_user_class(req, "Tinkerbell")) {
		c->d->boot = DHCP_BOOT_IPXE_SCRIPT;
		c->r->siaddr = c->cfg->http_ip;
		if (h && h->ipxe_url[0])
			return set_bootfile(c, h->ipxe_url);
		if ((e = expand(c->cfg->script_url, c->mac, NULL, url, sizeof(url))) < 0)
			return e;
		return set_bootfile(c, url);
	}

	/* (c) and (d) need a binary for the client's architecture: the
	 * Hardware's own, else the table's. Smee: an unknown arch gets no
	 * reply at all. */
	bin = h && h->ipxe_binary[0] ? h->ipxe_binary : dhcp_policy_arch_binary(c->cfg, arch);
	if (!bin) {
		c->d->why = "unknown-arch";
		return 1;
	}
	if (http) {
		c->d->boot = DHCP_BOOT_HTTP_BOOT;
		c->r->siaddr = c->cfg->http_ip;
		if ((e = expand(c->cfg->binary_url, c->mac, bin, url, sizeof(url))) < 0)
			return e;
		return set_bootfile(c, url);
	}
	/* (d) A PXE ROM: the binary over TFTP from siaddr / option 66. */
	c->d->boot = DHCP_BOOT_PXE_BINARY;
	c->r->siaddr = c->cfg->tftp_ip;
	dhcp_ip_str(c->cfg->tftp_ip, url);
	if ((e = dhcp_reply_set_string(c->r, DHCP_OPT_TFTP_SERVER, url)) < 0)
		return e;
	return set_bootfile(c, bin);
}

/* ---- reservation mode ---- */

/* The network configuration of the host (docs/compatibility.md, "DHCP", options). */
static int host_options(struct ctx *c)
{
	const struct dhcp_host *h = c->host;
	struct dhcp_reply *r = c->r;
	int e = 0;

	if (h->netmask && (e = dhcp_reply_set_ip(r, DHCP_OPT_SUBNET_MASK, h->netmask)) < 0)
		return e;
	if (h->gateway && (e = dhcp_reply_set_ips(r, DHCP_OPT_ROUTER, &h->gateway, 1)) < 0)
		return e;
	if (h->ndns && (e = dhcp_reply_set_ips(r, DHCP_OPT_DNS, h->dns, h->ndns)) < 0)
		return e;
	if (h->hostname[0] && (e = dhcp_reply_set_string(r, DHCP_OPT_HOSTNAME, h->hostname)) < 0)
		return e;
	if (h->domain[0]) {
		const char *search = h->domain;
		if ((e = dhcp_reply_set_string(r, DHCP_OPT_DOMAIN_NAME, h->domain)) < 0)
			return e;
		/* 119 = the domain, as Smee does. A domain that is not a
		 * valid DNS name (-EINVAL) still goes out as option 15,
		 * which is free text, but cannot be encoded as 119. */
		e = dhcp_reply_set_domain_search(r, &search, 1);
		if (e < 0 && e != -EINVAL)
			return e;
	}
	if (h->netmask && h->ip &&
	    (e = dhcp_reply_set_ip(r, DHCP_OPT_BROADCAST, (h->ip & h->netmask) | ~h->netmask)) < 0)
		return e;
	if (h->nntp && (e = dhcp_reply_set_ips(r, DHCP_OPT_NTP, h->ntp, h->nntp)) < 0)
		return e;
	/* RFC 3442 §2: a client that takes 121 ignores option 3; the routes
	 * are sent as the Hardware gives them, as Smee does. */
	if (h->nroutes && (e = dhcp_reply_set_routes(r, h->routes, h->nroutes)) < 0)
		return e;
	if (c->cfg->syslog_ip &&
	    (e = dhcp_reply_set_ips(r, DHCP_OPT_LOG_SERVER, &c->cfg->syslog_ip, 1)) < 0)
		return e;
	return 0;
}

/* Echoes the relay agent information (RFC 3046 §2.2) of a relayed
 * request. Only a relay adds option 82, and it sets giaddr (§2.1): one
 * that a client put in a request of its own is not echoed. The relay
 * takes the option out before it forwards the reply (§2.1), so the room
 * the client can receive (option 57, or 576) is not charged for it: the
 * message to the relay may be that much longer, up to DHCP_MAX_PACKET. */
static int echo_relay_info(struct ctx *c)
{
	const uint8_t *d;
	size_t n;
	int e;

	if (!c->req->giaddr || dhcp_opt_get(c->req, DHCP_OPT_RELAY_AGENT, &d, &n) < 0)
		return 0;
	if ((e = dhcp_reply_echo(c->r, c->req, DHCP_OPT_RELAY_AGENT)) < 0)
		return e;
	size_t room = (c->r->max_ip_len ? c->r->max_ip_len : DHCP_MIN_MAX_MESSAGE) + n +
		      2 * ((n + 254) / 255);
	c->r->max_ip_len = (uint16_t)(room < DHCP_MAX_PACKET ? room : DHCP_MAX_PACKET);
	return 0;
}

/* Echoes the client identifier (RFC 6842 §3) and relay agent information
 * when the request has them. */
static int echo_ids(struct ctx *c)
{
	int e = dhcp_reply_echo(c->r, c->req, DHCP_OPT_CLIENT_ID);

	if (e < 0 && e != -ENOENT)
		return e;
	return echo_relay_info(c);
}

/* Where a reply goes, RFC 2131 §4.1: to the relay, else a NAK broadcast,
 * else to ciaddr, else broadcast if the client asked, else to yiaddr. */
static void route_reply(struct ctx *c)
{
	const struct dhcp_packet *req = c->req;
	struct dhcp_decision *d = c->d;

	if (c->port == DHCP_PROXY_PORT) {
		d->dest = DHCP_DEST_SOURCE;
		d->dest_ip = req->ciaddr;
	} else if (req->giaddr) {
		d->dest = DHCP_DEST_RELAY;
		d->dest_ip = req->giaddr;
	} else if (d->type != DHCP_NAK && req->ciaddr) {
		d->dest = DHCP_DEST_CIADDR;
		d->dest_ip = req->ciaddr;
	} else if (d->type == DHCP_NAK || (req->flags & DHCP_FLAG_BROADCAST) || !c->r->yiaddr) {
		d->dest = DHCP_DEST_BROADCAST;
		d->dest_ip = 0xffffffffu;
	} else {
		d->dest = DHCP_DEST_UNICAST;
		d->dest_ip = c->r->yiaddr;
	}
}

static int finish(struct ctx *c, enum dhcp_msg_type type, const char *why)
{
	c->d->type = type;
	c->d->why = why;
	c->d->yiaddr = c->r->yiaddr;
	route_reply(c);
	return 1;
}

/* RFC 2131 §4.3.2: a DHCPNAK carries only 53, 54 and a message (table 3),
 * plus the echoed identifiers; through a relay it has the broadcast bit. */
static int nak(struct ctx *c, const char *why, const char *message)
{
	int e;

	dhcp_reply_init(c->r, c->req, DHCP_NAK);
	if ((e = dhcp_reply_set_ip(c->r, DHCP_OPT_SERVER_ID, c->cfg->server_id)) < 0 ||
	    (e = dhcp_reply_set_string(c->r, DHCP_OPT_MESSAGE, message)) < 0 ||
	    (e = echo_ids(c)) < 0)
		return e;
	if (c->req->giaddr)
		c->r->flags |= DHCP_FLAG_BROADCAST;
	return finish(c, DHCP_NAK, why);
}

/* OFFER or ACK of the reserved address; INFORM's ACK (RFC 2131 §4.3.5)
 * without yiaddr and lease times and without netboot. */
static int lease_reply(struct ctx *c, enum dhcp_msg_type type, bool inform, const char *why)
{
	const struct dhcp_host *h = c->host;
	struct dhcp_reply *r = c->r;
	uint32_t lease = h->lease_time ? h->lease_time : c->cfg->lease_time;
	int e;

	if (!lease)
		lease = DHCP_DEFAULT_LEASE;
	dhcp_reply_init(r, c->req, type);
	if ((e = dhcp_reply_set_ip(r, DHCP_OPT_SERVER_ID, c->cfg->server_id)) < 0)
		return e;
	if (!inform) {
		r->yiaddr = h->ip;
		if ((e = dhcp_reply_set_lease(r, lease)) < 0)
			return e;
		c->d->lease_time = lease;
	}
	if ((e = host_options(c)) < 0 || (e = echo_ids(c)) < 0)
		return e;
	if (inform) {
		if (h->boot_file_name[0] && (e = boot_explicit(c)) < 0)
			return e;
	} else if ((e = boot_choose(c)) != 0) {
		c->d->lease_time = 0;
		return e < 0 ? e : 0; /* 1: silent, why already set */
	}
	return finish(c, type, why);
}

static int reservation(struct ctx *c)
{
	const struct dhcp_packet *req = c->req;
	const struct dhcp_host *h = c->host;
	uint32_t sid = 0, want = 0;
	bool has_sid = dhcp_opt_ip(req, DHCP_OPT_SERVER_ID, &sid) == 0;
	bool has_want = dhcp_opt_ip(req, DHCP_OPT_REQUESTED_IP, &want) == 0;

	if (!h) {
		/* RFC 2131 §4.3.2: a client in SELECTING state that chose us
		 * (option 54 = ours) while its reservation went away gets a
		 * NAK, so that it starts over at once. In INIT-REBOOT the
		 * server "MUST remain silent" when it has no record of the
		 * client; in RENEWING/REBINDING we cannot tell, without the
		 * destination address, whether the request was meant for us,
		 * so we stay silent too and let the lease run out. Every
		 * other message from an unknown MAC is ignored (Smee). */
		if (req->msg_type == DHCP_REQUEST && has_sid && sid == c->cfg->server_id)
			return nak(c, "nak-no-reservation", "no address is reserved for this client");
		return silent(c, "unknown-mac");
	}
	if (!h->ip)
		return silent(c, "no-address");
	/* Through a relay, giaddr is an address on the client's network
	 * (RFC 2131 §4.3.1); a directly attached client that has no address
	 * yet (DISCOVER, and a REQUEST with option 50: SELECTING, INIT-REBOOT)
	 * broadcast on the link of the interface its request came in on. A
	 * reservation elsewhere (the machine was moved, two relays share a
	 * segment by mistake, a cable in the wrong port) would give the
	 * client an address it cannot use: no offer, and a REQUEST for it is
	 * on the wrong network (§4.3.2: "SHOULD send a DHCPNAK"). A renewal
	 * (ciaddr, no option 50) is not checked against the interface: it is
	 * unicast, and from a client behind a router it arrives on whichever
	 * interface faces that router; §4.3.2 has the server trust ciaddr. */
	bool wrong_net;
	if (req->giaddr)
		wrong_net = h->netmask && ((req->giaddr ^ h->ip) & h->netmask);
	else
		wrong_net = (req->msg_type == DHCP_DISCOVER || has_want) &&
			    dhcp_link_off(c->link, h->ip, h->netmask);

	switch (req->msg_type) {
	case DHCP_DISCOVER:
		if (wrong_net)
			return silent(c, "wrong-subnet");
		return lease_reply(c, DHCP_OFFER, false, "offer");
	case DHCP_REQUEST:
		if (has_sid) {
			/* SELECTING (§4.3.2): the client chose a server; if
			 * not us, our offer is declined: stay silent. */
			if (sid != c->cfg->server_id)
				return silent(c, "wrong-server-id");
			if (!has_want)
				want = req->ciaddr;
		} else if (!has_want) {
			/* RENEWING (unicast) or REBINDING (broadcast):
			 * ciaddr is the address in use. */
			if (!req->ciaddr)
				return silent(c, "bad-request");
			want = req->ciaddr;
		}
		/* INIT-REBOOT (50 without 54) lands here with want = 50.
		 * The reservation is the only address this client may
		 * have: any other address, on this subnet or another, is
		 * wrong and gets a NAK (§4.3.2 "SHOULD send a DHCPNAK"). */
		if (want != h->ip)
			return nak(c, "nak-wrong-address",
				   "requested address is not reserved for this client");
		if (wrong_net)
			return nak(c, "nak-wrong-subnet",
				   req->giaddr ? "the reserved address is not on the relay's network"
					       : "the reserved address is not on this interface's "
						 "subnets");
		return lease_reply(c, DHCP_ACK, false, "ack");
	case DHCP_DECLINE:
	case DHCP_RELEASE:
		/* No answer is defined (§4.3.3, §4.3.4); the caller records
		 * them when they are for us. */
		if (has_sid && sid != c->cfg->server_id)
			return silent(c, "wrong-server-id");
		return silent(c, req->msg_type == DHCP_DECLINE ? "decline" : "release");
	case DHCP_INFORM: return lease_reply(c, DHCP_ACK, true, "inform");
	default: return silent(c, "unsupported-type");
	}
}

/* ---- proxy modes ---- */

/* PXE 2.1 §2.2.5 (ProxyDHCP): a DISCOVER on port 67 gets an OFFER, a
 * REQUEST to port 4011 an ACK; neither has an address or lease options,
 * both name us in 54 and carry 60, 43 and the client's 97. A REQUEST on
 * port 67 is the client taking the address another server offered: not
 * ours to answer. iPXE and EDK2 use the proxy offer when no ACK from 4011
 * comes back, which is why Smee works without that port. */
static int proxy(struct ctx *c)
{
	const struct dhcp_packet *req = c->req;
	enum dhcp_msg_type type;
	uint16_t arch;
	int e;

	if (!c->host && c->cfg->mode == DHCP_MODE_PROXY)
		return silent(c, "unknown-mac");
	if (req->msg_type == DHCP_DISCOVER && c->port == DHCP_SERVER_PORT)
		type = DHCP_OFFER;
	else if (req->msg_type == DHCP_REQUEST && c->port == DHCP_PROXY_PORT)
		type = DHCP_ACK;
	else
		return silent(c, "not-for-proxy");
	if (!netboot_client(req, &arch))
		return silent(c, "not-netboot");
	if (!c->cfg->netboot)
		return silent(c, "netboot-disabled");

	dhcp_reply_init(c->r, req, type);
	if ((e = dhcp_reply_set_ip(c->r, DHCP_OPT_SERVER_ID, c->cfg->server_id)) < 0)
		return e;
	e = dhcp_reply_echo(c->r, req, DHCP_OPT_CLIENT_GUID);
	if (e < 0 && e != -ENOENT)
		return e;
	if ((e = echo_relay_info(c)) < 0)
		return e;
	if ((e = boot_choose(c)) != 0)
		return e < 0 ? e : 0;
	/* Explicit boot files skip netboot_options: a proxy offer still
	 * needs 60 and 43 to be taken as one. */
	if (!dhcp_reply_has(c->r, DHCP_OPT_VENDOR_CLASS) &&
	    (e = netboot_options(c, "PXEClient")) < 0)
		return e;
	return finish(c, type, type == DHCP_OFFER ? "proxy-offer" : "proxy-ack");
}

/* ---- entry point ---- */

bool dhcp_link_off(const struct dhcp_link *link, uint32_t ip, uint32_t netmask)
{
	if (!link || !link->n)
		return false;
	/* On the link when either subnet holds the other's address: the
	 * interface's subnet holds ip, or the reservation's (ip/netmask)
	 * holds the interface's address, so that the client reaches us
	 * directly either way. */
	for (size_t i = 0; i < link->n && i < DHCP_LINK_MAX_NETS; i++) {
		uint32_t mask = link->net[i].mask & (netmask ? netmask : 0xffffffffu);
		if (((ip ^ link->net[i].addr) & mask) == 0)
			return false;
	}
	return true;
}

int dhcp_policy(const struct dhcp_packet *req, uint16_t port, const struct dhcp_host *host,
		const struct dhcp_link *link, const struct dhcp_policy_config *cfg,
		struct dhcp_reply *reply, struct dhcp_decision *ret)
{
	struct ctx c;

	if (!ret)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->why = "internal-error";
	if (!req || !cfg || !reply || (unsigned)cfg->mode >= DHCP_MODE_MAX ||
	    (port != DHCP_SERVER_PORT && port != DHCP_PROXY_PORT))
		return -EINVAL;
	c = (struct ctx){ .req = req,
			  .host = host,
			  .link = link,
			  .cfg = cfg,
			  .r = reply,
			  .d = ret,
			  .port = port,
			  .proxy = cfg->mode != DHCP_MODE_RESERVATION };
	if (req->op != DHCP_BOOTREQUEST)
		return silent(&c, "not-a-request");
	if (req->htype != 1 || req->hlen != 6)
		return silent(&c, "not-ethernet");
	if (host && memcmp(host->mac, req->chaddr, 6) != 0)
		return -EINVAL;
	mac_format(req->chaddr, c.mac);
	/* Port 4011 is the PXE boot server port: only a proxy listens there. */
	if (port == DHCP_PROXY_PORT && !c.proxy)
		return silent(&c, "not-proxy-mode");
	/* disableDhcp: this interface gets nothing from us, in any mode. */
	if (host && host->disable_dhcp)
		return silent(&c, "dhcp-disabled");
	return c.proxy ? proxy(&c) : reservation(&c);
}

int dhcp_lease_reuse(const struct dhcp_lease_mark *m, const struct dhcp_policy_config *cfg,
		     int64_t now, int64_t expired_by, struct dhcp_reply *reply,
		     struct dhcp_decision *d)
{
	uint32_t lease = d->lease_time;
	int64_t left;
	int e;

	if (!m || !m->ip || !cfg->lease_reuse || cfg->lease_reuse > DHCP_LEASE_REUSE_MAX ||
	    (d->type != DHCP_OFFER && d->type != DHCP_ACK) || !lease || d->yiaddr != m->ip)
		return 0;
	if (lease == UINT32_MAX)
		return m->expires == DHCP_INFINITE_EXPIRY;
	/* The clock stepped back after an expiry sweep: the disk may have
	 * lost what expired by then, so time is counted from there. */
	if (now < expired_by)
		now = expired_by;
	/* A clock stepped back past the lease's start: its age is unknown. */
	if (m->expires == DHCP_INFINITE_EXPIRY || now < m->starts)
		return 0;
	left = m->expires - now;
	if (left > (int64_t)lease || left * 100 < (int64_t)lease * (100 - (int64_t)cfg->lease_reuse))
		return 0;
	if ((e = dhcp_reply_set_lease(reply, (uint32_t)left)) < 0)
		return e;
	d->lease_time = (uint32_t)left;
	return 1;
}
