/* server-boot — the DHCP server's part of the closed loop: a request from
 * a machine whose Hardware waits for its boot to be seen (common/bootmark.h)
 * is recorded on that Hardware.
 *
 * DESIGN: the packet path must not write the store for every packet, nor
 * wait for a write. The reservation table already holds, per interface,
 * whether its Hardware is marked (dhcp_host.awaiting_boot, packed with the
 * rest, kept current from the change log), so the check costs a byte that
 * the lookup unpacked anyway. Only when it is set does this file queue,
 * with store_write_async() on the server's completion queue, a merge patch
 * of the Hardware's annotations: "disk" for a request without netboot
 * options and without a PXEClient or HTTPClient vendor class (the
 * installed system's DHCP client), "netboot" for a netboot
 * client whose netboot the policy refused because allowPXE is off (the
 * machine did not take its boot device). A netboot client that is allowed
 * to netboot is left alone: a new Workflow is provisioning it, and has
 * dropped the mark. At most DHCP_BOOT_INFLIGHT observations are in flight,
 * one per MAC: the DISCOVER and the REQUEST that follows it before the
 * change comes back through the subscription make one write; once it has
 * come back, the Hardware has an observation and is no longer waiting. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/bootmark.h"
#include "common/common.h"
#include "dhcp/server-internal.h"
#include "store/store.h"

static bool boot_pending(const struct dhcp_server *S, const uint8_t mac[6])
{
	for (size_t i = 0; i < DHCP_BOOT_INFLIGHT; i++)
		if (S->boot[i].used && memcmp(S->boot[i].mac, mac, 6) == 0)
			return true;
	return false;
}

void dhcp_srv_boot_seen(struct dhcp_server *S, const struct dhcp_host *h)
{
	const char *kind;
	if (!h || !h->awaiting_boot)
		return;
	if (S->req.msg_type != DHCP_DISCOVER && S->req.msg_type != DHCP_REQUEST &&
	    S->req.msg_type != DHCP_INFORM)
		return;
	/* A PXE or HTTP Boot vendor class is a firmware's, whatever the
	 * policy answered (dhcp.netboot off, proxy silence): never a disk
	 * boot. */
	bool firmware = dhcp_vendor_class_prefix(&S->req, "PXEClient") ||
			dhcp_vendor_class_prefix(&S->req, "HTTPClient");
	if (S->dec.boot == DHCP_BOOT_NOT_ALLOWED)
		kind = BOOTMARK_NETBOOT;
	else if (S->dec.boot == DHCP_BOOT_NONE && !firmware)
		kind = BOOTMARK_DISK;
	else
		return;
	if (boot_pending(S, h->mac))
		return;
	struct dhcp_boot_obs *b = NULL;
	size_t slot = 0;
	for (; slot < DHCP_BOOT_INFLIGHT && !b; slot++)
		if (!S->boot[slot].used)
			b = &S->boot[slot];
	if (!b) {
		log_debug("dhcp", "hardware %s/%s: boot not recorded: %d in flight", h->namespace_,
			  h->name, DHCP_BOOT_INFLIGHT);
		return;
	}
	slot--;
	json_t *patch = bootmark_patch(kind, "dhcp", (int64_t)(now_real_ns() / 1000000u));
	if (!patch)
		return;
	memset(b, 0, sizeof(*b));
	memcpy(b->mac, h->mac, 6);
	memcpy(b->ns, h->namespace_, sizeof(b->ns));
	memcpy(b->name, h->name, sizeof(b->name));
	b->patch = patch;
	b->op = (struct store_op){ .type = STORE_OP_MERGE_PATCH,
				   .source = STORE_SOURCE_DAEMON,
				   .kind = STORE_KIND_HARDWARE,
				   .namespace_ = b->ns[0] ? b->ns : NULL,
				   .name = b->name,
				   .body = patch,
				   .no_object = true };
	int e = store_write_async(S->store, &b->op, 1, true, S->cq, TAG_BOOT | slot);
	if (e < 0) {
		log_warn("dhcp", "hardware %s/%s: boot not recorded: %s", h->namespace_, h->name,
			 strerror(-e));
		json_decref(patch);
		b->patch = NULL;
		return;
	}
	b->used = true;
	log_info("dhcp", "hardware %s/%s: %s boot seen (%s)", h->namespace_, h->name, kind,
		 dhcp_msg_type_name(S->req.msg_type));
}

void dhcp_srv_boot_done(struct dhcp_server *S, const struct store_done *d)
{
	size_t slot = (size_t)(d->tag & ~TAG_BOOT);
	if (slot >= DHCP_BOOT_INFLIGHT || !S->boot[slot].used)
		return;
	struct dhcp_boot_obs *b = &S->boot[slot];
	if (d->error < 0)
		log_warn("dhcp", "hardware %s/%s: boot not recorded: %s", b->ns, b->name,
			 d->message);
	store_op_clear(&b->op);
	json_decref(b->patch);
	b->patch = NULL;
	b->used = false;
}
