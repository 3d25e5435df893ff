/* script — the iPXE script of one Hardware interface, and the /httpboot
 * answer.
 *
 * DESIGN: pure functions of the Hardware's JSON and the settings. The
 * choice follows Smee (docs/compatibility.md, "iPXE scripts and binaries"):
 * netboot.allowPXE must be true;
 * netboot.ipxe.url makes a chain script, netboot.ipxe.contents is served
 * as it is, otherwise the template is rendered. The kernel command line is
 * assembled here, argument by argument, in Smee's order, so that an unset
 * value drops its argument rather than leaving "facility=" behind:
 *
 *   [vlan_id=] facility= syslog_host= grpc_authority= tinkerbell_tls=
 *   tinkerbell_insecure_tls= worker_id= hw_addr= modules=... intel_iommu=on
 *   iommu=pt initrd=<initrd> console=tty0 console=ttyS1,115200
 *   <ipxe.kernel_args> <netboot.osie.kernelParams...>
 *
 * Last value wins on duplicate keys (the kernel's rule), so the operator's
 * arguments, which come last, override the defaults. Values from the
 * Hardware go into a script that iPXE will parse without quoting: one with
 * a space, '$', a quote, a backslash or a control character is refused
 * (-EINVAL naming the field); URLs are percent-encoded instead. The
 * operator's own configuration (kernel_args, the template) is trusted: it
 * may use iPXE's ${...} settings on purpose.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/mac.h"
#include "ipxe/ipxe-internal.h"

#define DEFAULT_ARCH "x86_64"
#define FIXED_ARGS                                                                       \
	"modules=loop,squashfs,sd-mod,usb-storage intel_iommu=on iommu=pt"
#define CONSOLE_ARGS "console=tty0 console=ttyS1,115200"

bool ipxe_token_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c >= 0x7f || c == '$' || c == '"' || c == '\'' || c == '\\')
			return false;
	}
	return true;
}

static const char *str_at(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s && s[0] ? s : NULL;
}

/* The interface of hw whose dhcp.mac is mac, or NULL. */
static const json_t *find_iface(const json_t *hw, const uint8_t mac[6])
{
	const json_t *ifs = json_object_get(json_object_get(hw, "spec"), "interfaces");
	size_t i;
	const json_t *it;
	json_array_foreach(ifs, i, it)
	{
		const char *m = str_at(json_object_get(it, "dhcp"), "mac");
		uint8_t b[6];
		if (m && mac_parse(m, strlen(m), MAC_COLON | MAC_DASH, b) == 0 &&
		    memcmp(b, mac, 6) == 0)
			return it;
	}
	return NULL;
}

static void mac_text(const uint8_t mac[6], char out[18])
{
	mac_format(mac, out);
}

/* Appends s to out percent-encoding every byte that is not safe in an
 * iPXE token. */
static int put_url(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int e = ipxe_token_ok(s, 1) ? buf_putc(out, (char)c) :
					      buf_printf(out, "%%%c%c", hex[c >> 4], hex[c & 15]);
		if (e < 0)
			return -E2BIG;
	}
	return 0;
}

/* Appends " key=value" (or " value" when key is NULL) when value is set;
 * -EINVAL naming field when value is not a safe token. */
static int put_arg(struct buf *cl, const char *key, const char *value, const char *field,
		   char *err, size_t errlen)
{
	if (!value || !value[0])
		return 0;
	if (!ipxe_token_ok(value, strlen(value))) {
		snprintf(err, errlen,
			 "%s: \"%.64s\" cannot go into an iPXE script (a space, '$', a quote, "
			 "a backslash or a control character)",
			 field, value);
		return -EINVAL;
	}
	int e = key ? buf_printf(cl, "%s%s=%s", cl->len ? " " : "", key, value) :
		      buf_printf(cl, "%s%s", cl->len ? " " : "", value);
	return e < 0 ? -E2BIG : 0;
}

/* {{arch}} in a file name pattern (from the configuration or the
 * Hardware) replaced by arch. */
static int expand_name(const char *pattern, const char *arch, char *out, size_t outlen)
{
	size_t o = 0;
	for (const char *p = pattern; *p;) {
		const char *piece = p;
		size_t n = 1;
		if (strncmp(p, "{{arch}}", 8) == 0) {
			piece = arch;
			n = strlen(arch);
			p += 8;
		} else {
			p++;
		}
		if (o + n >= outlen)
			return -E2BIG;
		memcpy(out + o, piece, n);
		o += n;
	}
	out[o] = '\0';
	return 0;
}

static int chain_script(const char *url, struct buf *out, char *err, size_t errlen)
{
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
		snprintf(err, errlen, "netboot.ipxe.url: \"%.64s\" is not an http:// or https:// URL",
			 url);
		return -EINVAL;
	}
	if (buf_puts(out, "#!ipxe\nchain --autofree ") < 0 || put_url(out, url) < 0 ||
	    buf_putc(out, '\n') < 0)
		return -E2BIG;
	return 0;
}

/* What the default script is made of: the facts read from the Hardware and
 * the values built from them and the settings. The pointers borrow from
 * the Hardware's JSON (or the settings) and live as long as they do; the
 * four buffers are owned and freed by script_parts_free(). */
struct script_parts {
	const json_t *dhcp; /* the interface's dhcp */
	const json_t *os;   /* the interface's netboot.osie, or NULL */
	const char *arch, *name, *ns, *worker, *facility;
	char mactext[18], vlan[16], kernel[256], initrd[256], retries[16];
	struct buf osie;       /* the base URL of the kernel and initrd, no trailing '/' */
	struct buf kurl, iurl; /* the kernel's and the initrd's URLs */
	struct buf cl;         /* the kernel command line */
};

static void script_parts_free(struct script_parts *sp)
{
	buf_free(&sp->cl);
	buf_free(&sp->osie);
	buf_free(&sp->kurl);
	buf_free(&sp->iurl);
}

/* Reads into sp what the script says of the machine: its architecture
 * (DEFAULT_ARCH when unset), name, namespace, agentID, facility code,
 * the MAC as text and the VLAN id ("" when unset or 0) of the interface
 * whose netboot is nb. Nothing is checked here; template_values() and
 * put_arg() refuse what cannot go into a script. */
static void read_hardware(struct script_parts *sp, const json_t *hw, const json_t *iface,
			  const json_t *nb, const uint8_t mac[6])
{
	const json_t *spec = json_object_get(hw, "spec");
	const json_t *meta = json_object_get(hw, "metadata");
	const json_t *dhcp = json_object_get(iface, "dhcp");

	sp->dhcp = dhcp;
	sp->os = json_object_get(nb, "osie");
	sp->arch = str_at(dhcp, "arch") ? str_at(dhcp, "arch") : DEFAULT_ARCH;
	sp->name = str_at(meta, "name");
	sp->ns = str_at(meta, "namespace");
	sp->worker = str_at(spec, "agentID");
	sp->facility = str_at(json_object_get(json_object_get(spec, "metadata"), "facility"),
			      "facility_code");
	const json_t *vid = json_object_get(dhcp, "vlan_id");
	mac_text(mac, sp->mactext);
	if (json_is_string(vid) && json_string_length(vid) > 0 &&
	    strcmp(json_string_value(vid), "0") != 0)
		snprintf(sp->vlan, sizeof(sp->vlan), "%.15s", json_string_value(vid));
	else if (json_is_integer(vid) && json_integer_value(vid) > 0)
		snprintf(sp->vlan, sizeof(sp->vlan), "%lld", (long long)json_integer_value(vid));
}

/* Writes into sp->osie where the kernel and initrd come from: the
 * Hardware's netboot.osie.baseURL (percent-encoded), else the configured
 * osie_url with {{arch}} replaced, else base_url + "/osie"; without
 * trailing '/'. 0, or -E2BIG when the URL is too long. */
static int osie_base(struct script_parts *sp, const struct ipxe_settings *s)
{
	struct buf *osie = &sp->osie;
	const char *base = str_at(sp->os, "baseURL");
	int e;

	if (base) {
		if ((e = put_url(osie, base)) < 0)
			return e;
	} else if (s->osie_url) {
		/* {{arch}} in the configured URL: one base per architecture
		 * (the operator's own text is kept; the arch, from the
		 * Hardware, is encoded). */
		const char *u = s->osie_url, *m;
		e = 0;
		while (e == 0 && (m = strstr(u, "{{arch}}"))) {
			e = buf_printf(osie, "%.*s", (int)(m - u), u) < 0 ||
					    put_url(osie, sp->arch) < 0 ?
				    -E2BIG :
				    0;
			u = m + 8;
		}
		if (e == 0)
			e = buf_puts(osie, u) < 0 ? -E2BIG : 0;
	} else {
		e = buf_printf(osie, "%s/osie", s->base_url) < 0 ? -E2BIG : 0;
	}
	while (e == 0 && osie->len && osie->data[osie->len - 1] == '/')
		osie->data[--osie->len] = '\0';
	return e;
}

/* Fills sp->kernel and sp->initrd (the Hardware's netboot.osie names, else
 * the configured ones, else vmlinuz-{{arch}} and initramfs-{{arch}}, with
 * {{arch}} expanded) and their URLs under sp->osie, which osie_base() has
 * written. 0, or -E2BIG when a name or URL is too long. */
static int boot_files(struct script_parts *sp, const struct ipxe_settings *s)
{
	const char *kpat = str_at(sp->os, "kernel") ? str_at(sp->os, "kernel") : s->kernel;
	const char *ipat = str_at(sp->os, "initrd") ? str_at(sp->os, "initrd") : s->initrd;
	int e;

	if ((e = expand_name(kpat ? kpat : "vmlinuz-{{arch}}", sp->arch, sp->kernel,
			     sizeof(sp->kernel))) < 0 ||
	    (e = expand_name(ipat ? ipat : "initramfs-{{arch}}", sp->arch, sp->initrd,
			     sizeof(sp->initrd))) < 0)
		return e;
	if (buf_printf(&sp->kurl, "%s/", sp->osie.data) < 0 || put_url(&sp->kurl, sp->kernel) < 0 ||
	    buf_printf(&sp->iurl, "%s/", sp->osie.data) < 0 || put_url(&sp->iurl, sp->initrd) < 0)
		return -E2BIG;
	return 0;
}

/* Writes into sp->cl the kernel command line, in Smee's order (see the
 * DESIGN comment): the Hardware's and the settings' arguments, the fixed
 * ones, the initrd, the consoles, the configured kernel_args, then the
 * Hardware's netboot.osie.kernelParams. 0; -EINVAL with err naming the
 * field when a value cannot go into a script or kernelParams is
 * malformed; -E2BIG when the line is too long. */
static int kernel_cmdline(struct script_parts *sp, const struct ipxe_settings *s, char *err,
			  size_t errlen)
{
	struct buf *cl = &sp->cl;
	int e;

	if ((e = put_arg(cl, "vlan_id", sp->vlan, "dhcp.vlan_id", err, errlen)) < 0 ||
	    (e = put_arg(cl, "facility", sp->facility, "spec.metadata.facility.facility_code", err,
			 errlen)) < 0 ||
	    (e = put_arg(cl, "syslog_host", s->syslog_host, "ipxe.syslog_host", err, errlen)) < 0 ||
	    (e = put_arg(cl, "grpc_authority", s->grpc_authority, "ipxe.grpc_authority", err,
			 errlen)) < 0 ||
	    (e = put_arg(cl, "tinkerbell_tls", s->tls ? "true" : "false", "", err, errlen)) < 0 ||
	    (e = put_arg(cl, "tinkerbell_insecure_tls", s->insecure_tls ? "true" : "false", "", err,
			 errlen)) < 0 ||
	    (e = put_arg(cl, "worker_id", sp->worker ? sp->worker : sp->mactext, "spec.agentID",
			 err, errlen)) < 0 ||
	    (e = put_arg(cl, "hw_addr", sp->mactext, "", err, errlen)) < 0)
		return e;
	if (buf_printf(cl, " %s", FIXED_ARGS) < 0)
		return -E2BIG;
	if ((e = put_arg(cl, "initrd", sp->initrd, "netboot.osie.initrd", err, errlen)) < 0)
		return e;
	if (buf_printf(cl, " %s", CONSOLE_ARGS) < 0 ||
	    (s->kernel_args && s->kernel_args[0] && buf_printf(cl, " %s", s->kernel_args) < 0))
		return -E2BIG;
	const json_t *params = json_object_get(sp->os, "kernelParams");
	size_t i;
	const json_t *p;
	json_array_foreach(params, i, p)
	{
		char field[64];
		if (i >= IPXE_MAX_KERNEL_PARAMS) {
			snprintf(err, errlen, "netboot.osie.kernelParams: more than %d entries",
				 IPXE_MAX_KERNEL_PARAMS);
			return -EINVAL;
		}
		snprintf(field, sizeof(field), "netboot.osie.kernelParams[%zu]", i);
		if (!json_is_string(p)) {
			snprintf(err, errlen, "%s: not a string", field);
			return -EINVAL;
		}
		if ((e = put_arg(cl, NULL, json_string_value(p), field, err, errlen)) < 0)
			return e;
	}
	return 0;
}

/* Fills vals (borrowing from sp, which must outlive them, and from s) with
 * the template's variables, and checks that every one a template may show
 * is a safe token (the command line and kernel_args, which are built or
 * trusted, excepted). 0, or -EINVAL with err naming the variable. */
static int template_values(struct script_parts *sp, const struct ipxe_settings *s,
			   const char *vals[IPXE_VAR_MAX], char *err, size_t errlen)
{
	snprintf(sp->retries, sizeof(sp->retries), "%u", s->retries);
	vals[IPXE_VAR_NAME] = sp->name;
	vals[IPXE_VAR_NAMESPACE] = sp->ns;
	vals[IPXE_VAR_HW_ADDR] = sp->mactext;
	vals[IPXE_VAR_WORKER_ID] = sp->worker ? sp->worker : sp->mactext;
	vals[IPXE_VAR_ARCH] = sp->arch;
	vals[IPXE_VAR_HOSTNAME] = str_at(sp->dhcp, "hostname");
	vals[IPXE_VAR_FACILITY] = sp->facility;
	vals[IPXE_VAR_VLAN_ID] = sp->vlan;
	vals[IPXE_VAR_BASE_URL] = s->base_url;
	vals[IPXE_VAR_OSIE_URL] = sp->osie.data;
	vals[IPXE_VAR_KERNEL] = sp->kernel;
	vals[IPXE_VAR_INITRD] = sp->initrd;
	vals[IPXE_VAR_KERNEL_URL] = sp->kurl.data;
	vals[IPXE_VAR_INITRD_URL] = sp->iurl.data;
	vals[IPXE_VAR_CMDLINE] = sp->cl.data;
	vals[IPXE_VAR_KERNEL_ARGS] = s->kernel_args;
	vals[IPXE_VAR_GRPC_AUTHORITY] = s->grpc_authority;
	vals[IPXE_VAR_SYSLOG_HOST] = s->syslog_host;
	vals[IPXE_VAR_TLS] = s->tls ? "true" : "false";
	vals[IPXE_VAR_INSECURE_TLS] = s->insecure_tls ? "true" : "false";
	vals[IPXE_VAR_RETRIES] = sp->retries;
	/* Names shown by the template (echo lines) come from the Hardware. */
	for (int v = 0; v < IPXE_VAR_MAX; v++)
		if (v != IPXE_VAR_CMDLINE && v != IPXE_VAR_KERNEL_ARGS && vals[v] &&
		    !ipxe_token_ok(vals[v], strlen(vals[v]))) {
			snprintf(err, errlen, "%s: \"%.64s\" cannot go into an iPXE script",
				 ipxe_template_vars[v], vals[v]);
			return -EINVAL;
		}
	return 0;
}

/* The default script of interface iface (netboot nb) of hw: the template
 * (the configured one, else ipxe_default_template) rendered into out with
 * the values built by the steps above, in that order. 0, -EINVAL (err says
 * why) or -E2BIG, as ipxe_script(); out is written only by the render,
 * and *ret_kind is set to IPXE_SCRIPT_DEFAULT just before it. */
static int default_script(const json_t *hw, const json_t *iface, const json_t *nb,
			  const uint8_t mac[6], const struct ipxe_settings *s, struct buf *out,
			  enum ipxe_script_kind *ret_kind, char *err, size_t errlen)
{
	struct script_parts sp = {
		.vlan = "",
		.osie = BUF_INIT(IPXE_VALUE_MAX),
		.kurl = BUF_INIT(IPXE_VALUE_MAX),
		.iurl = BUF_INIT(IPXE_VALUE_MAX),
		.cl = BUF_INIT(IPXE_CMDLINE_MAX),
	};
	const char *vals[IPXE_VAR_MAX] = { 0 };
	int e;

	read_hardware(&sp, hw, iface, nb, mac);
	if ((e = osie_base(&sp, s)) < 0 || (e = boot_files(&sp, s)) < 0 ||
	    (e = kernel_cmdline(&sp, s, err, errlen)) < 0 ||
	    (e = template_values(&sp, s, vals, err, errlen)) < 0)
		goto out;
	*ret_kind = IPXE_SCRIPT_DEFAULT;
	e = ipxe_template_render(s->template_ ? s->template_ : ipxe_default_template,
				 s->template_ ? s->template_len : strlen(ipxe_default_template), vals,
				 out);
out:
	script_parts_free(&sp);
	return e;
}

int ipxe_script(const json_t *hw, const uint8_t mac[6], const struct ipxe_settings *s,
		struct buf *out, enum ipxe_script_kind *ret_kind, char *err, size_t errlen)
{
	const json_t *iface = find_iface(hw, mac);

	if (!iface)
		return -ENOENT;
	const json_t *nb = json_object_get(iface, "netboot");
	if (!json_is_true(json_object_get(nb, "allowPXE"))) {
		snprintf(err, errlen, "netboot.allowPXE is not true");
		return -EACCES;
	}
	const json_t *ipxe = json_object_get(nb, "ipxe");
	const char *url = str_at(ipxe, "url"), *contents = str_at(ipxe, "contents");
	if (url) {
		*ret_kind = IPXE_SCRIPT_URL;
		return chain_script(url, out, err, errlen);
	}
	if (contents) {
		*ret_kind = IPXE_SCRIPT_CONTENTS;
		return buf_puts(out, contents) < 0 ? -E2BIG : 0;
	}
	return default_script(hw, iface, nb, mac, s, out, ret_kind, err, errlen);
}

const char *ipxe_script_kind_name(enum ipxe_script_kind k)
{
	static const char *const names[IPXE_SCRIPT_KIND_MAX] = { "default", "url", "contents" };
	return k < IPXE_SCRIPT_KIND_MAX ? names[k] : "unknown";
}

/* Do a and b name the same address? Compared as addresses, not text: the
 * store finds "2001:DB8::5" for the client 2001:db8::5 (its index holds
 * the canonical form), and so must this. */
static bool same_address(const char *a, const char *b)
{
	uint8_t x[16], y[16];
	if (inet_pton(AF_INET, a, x) == 1)
		return inet_pton(AF_INET, b, y) == 1 && memcmp(x, y, 4) == 0;
	if (inet_pton(AF_INET6, a, x) == 1)
		return inet_pton(AF_INET6, b, y) == 1 && memcmp(x, y, 16) == 0;
	return false;
}

int ipxe_mac_by_ip(const json_t *hw, const char *ip, uint8_t ret[6])
{
	const json_t *ifs = json_object_get(json_object_get(hw, "spec"), "interfaces");
	size_t i;
	const json_t *it;
	json_array_foreach(ifs, i, it)
	{
		const json_t *dhcp = json_object_get(it, "dhcp");
		const char *a = str_at(json_object_get(dhcp, "ip"), "address");
		const char *m = str_at(dhcp, "mac");
		if (a && m && same_address(a, ip) &&
		    mac_parse(m, strlen(m), MAC_COLON | MAC_DASH, ret) == 0)
			return 0;
	}
	return -ENOENT;
}

/* The EFI binary of an interface: netboot.ipxe.binary, else by dhcp.arch. */
static const char *efi_binary(const json_t *iface)
{
	const char *bin = str_at(json_object_get(json_object_get(iface, "netboot"), "ipxe"),
				 "binary");
	const char *arch = str_at(json_object_get(iface, "dhcp"), "arch");
	if (bin && ipxe_token_ok(bin, strlen(bin)) && !strchr(bin, '/'))
		return bin;
	if (arch && (strcmp(arch, "aarch64") == 0 || strcmp(arch, "arm64") == 0))
		return "snp-arm64.efi";
	return "ipxe.efi";
}

int ipxe_httpboot(const json_t *hw, const char *client_ip, const char *base_url,
		  struct buf *out)
{
	json_t *o = json_object();
	char url[512] = "", mactext[18];
	const char *uuid = NULL;
	uint8_t mac[6];
	int e = -ENOMEM;

	if (!o)
		return -ENOMEM;
	if (hw && ipxe_mac_by_ip(hw, client_ip, mac) == 0) {
		const json_t *iface = find_iface(hw, mac);
		mac_text(mac, mactext);
		snprintf(url, sizeof(url), "%s/ipxe/binary/%s/%s", base_url, mactext,
			 efi_binary(iface));
		uuid = json_string_value(json_object_get(
			json_object_get(json_object_get(hw, "metadata"), "annotations"),
			"ironbell.dev/system-uuid"));
		if (!uuid)
			uuid = str_at(json_object_get(json_object_get(json_object_get(hw, "spec"),
								      "metadata"),
						      "instance"),
				      "id");
	} else {
		snprintf(url, sizeof(url), "%s/ipxe/binary/ipxe.efi", base_url);
	}
	if (json_object_set_new(o, "ClientIPs", json_string(client_ip)) < 0 ||
	    json_object_set_new(o, "UKIURL", json_string(url)) < 0 ||
	    json_object_set_new(o, "SystemUUID", json_string(uuid ? uuid : "")) < 0)
		goto out;
	char *text = json_dumps(o, JSON_COMPACT);
	if (!text)
		goto out;
	e = buf_puts(out, text) < 0 || buf_putc(out, '\n') < 0 ? -E2BIG : 0;
	free(text);
out:
	json_decref(o);
	return e;
}
