/* server-hosts — the DHCP server thread's reservation table and the leases
 * on disk it starts from.
 *
 * DESIGN: the thread (dhcp/server.c) answers from an in-memory table of
 * every Hardware interface (dhcp/hosts.c), never from the store on the
 * packet path. This file fills it: every Hardware at start, before
 * dhcp_server_start() returns, then the store's change log from the
 * version it was read at, a page at a time, whenever the subscription's
 * eventfd says Hardware changed, so that a bulk apply does not hold
 * packets for seconds; when retention has dropped changes the thread had
 * not read, the table is loaded again. A Hardware interface the table
 * refuses is logged, and recorded as an event of its Hardware when it
 * comes from a change. It also reads, at start, the bound leases on disk
 * into the lease marks (dhcp/leases.c) that lease reuse looks at. Runs on
 * the server thread only, with its read-only store connection.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "common/common.h"
#include "common/jsondec.h"
#include "common/mac.h"
#include "dhcp/dhcp.h"
#include "dhcp/server-internal.h"
#include "store/store.h"

#define DHCP_CHANGES_PAGE 1000 /* change-log rows read at a time */

/* ---- the reservation table ---- */

static void hosts_gauges(struct dhcp_server *S)
{
	metric_set(S->m_hosts, (double)dhcp_hosts_count(S->hosts));
	metric_set(S->m_hosts_bytes, (double)dhcp_hosts_bytes(S->hosts));
}

/* Puts one Hardware; a refused interface is logged (and, when it comes
 * from a change rather than the start-up load, recorded as an event). */
static void hosts_put(struct dhcp_server *S, json_t *hw, bool event)
{
	char err[512];
	if (dhcp_hosts_put(S->hosts, hw, err, sizeof(err)) != -EINVAL)
		return;
	const json_t *meta = json_object_get(hw, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *name = json_string_value(json_object_get(meta, "name"));
	log_write(LOG_LVL_WARN, "dhcp", LOG_FIELDS({ "HARDWARE", name }),
		  "hardware %s/%s: an interface is not served by DHCP: %s", ns ? ns : "",
		  name ? name : "", err);
	if (event && ns && name)
		store_event(S->store, STORE_KIND_HARDWARE, ns, name, "Warning", "DHCPNotServed",
			    "not served by DHCP: %s", err);
}

static int load_one(const char *text, size_t len, void *userdata)
{
	struct dhcp_server *S = userdata;
	json_t *hw = jsondec_loadb_brief(text, len, 0, NULL); /* freed below */
	if (hw)
		hosts_put(S, hw, false);
	json_decref(hw);
	return 0;
}

int dhcp_srv_hosts_load(struct dhcp_server *S)
{
	uint64_t t0 = now_mono_ns();
	int e;

	dhcp_hosts_clear(S->hosts);
	e = store_each(S->reader, STORE_KIND_HARDWARE, load_one, S, &S->rv);
	hosts_gauges(S);
	if (e < 0)
		log_error("dhcp", "loading Hardware: %s", strerror(-e));
	else
		log_info("dhcp", "%zu Hardware interfaces loaded in %.0f ms (%zu KiB)",
			 dhcp_hosts_count(S->hosts), (double)(now_mono_ns() - t0) / 1e6,
			 dhcp_hosts_bytes(S->hosts) / 1024);
	return e;
}

/* Applies one page (DHCP_CHANGES_PAGE) of the Hardware changes committed
 * since S->rv, and sets S->sync_more when there may be more: the loop
 * calls again after the datagrams waiting, so that a bulk apply of
 * 100,000 Hardware does not hold packets for seconds. */
void dhcp_srv_hosts_sync(struct dhcp_server *S)
{
	json_t *changes = NULL, *ch;
	uint64_t last = S->rv;
	size_t i;
	int e;

	S->sync_more = false;
	e = store_changes(S->reader, S->rv, STORE_KIND_HARDWARE, NULL, DHCP_CHANGES_PAGE,
			  &changes, &last);
	if (e == -ETIME) {
		log_warn("dhcp", "Hardware changes were dropped by retention before they were "
				 "read: reloading every Hardware");
		dhcp_srv_hosts_load(S);
		return;
	}
	if (e < 0) {
		log_error("dhcp", "reading Hardware changes: %s", strerror(-e));
		return;
	}
	json_array_foreach (changes, i, ch) {
		const char *type = json_string_value(json_object_get(ch, "type"));
		json_t *obj = json_object_get(ch, "object");
		if (type && strcmp(type, "DELETED") == 0) {
			const json_t *meta = json_object_get(obj, "metadata");
			dhcp_hosts_remove(S->hosts,
					  json_string_value(json_object_get(meta, "namespace")),
					  json_string_value(json_object_get(meta, "name")));
		} else if (obj) {
			hosts_put(S, obj, true);
		}
	}
	S->sync_more = json_array_size(changes) == DHCP_CHANGES_PAGE;
	json_decref(changes);
	S->rv = last;
	hosts_gauges(S);
}

/* ---- the leases on disk ---- */

static int mark_one(const struct store_lease *l, void *userdata)
{
	struct dhcp_server *S = userdata;
	struct dhcp_lease_mark m = { .starts = l->starts, .expires = l->expires };
	struct in_addr a;
	uint8_t mac[6];

	if (l->state != STORE_LEASE_BOUND ||
	    mac_parse(l->mac, strlen(l->mac), MAC_COLON, mac) < 0 ||
	    inet_pton(AF_INET, l->ip, &a) != 1)
		return 0;
	m.ip = ntohl(a.s_addr);
	return dhcp_leases_load(S->leases, mac, &m, dhcp_leases_owner(l->ns, l->name));
}

/* The bound leases in the store, as marks for lease reuse. */
int dhcp_srv_leases_load(struct dhcp_server *S)
{
	uint64_t t0 = now_mono_ns();
	int e = store_leases_each(S->reader, mark_one, S);

	if (e < 0)
		log_error("dhcp", "loading leases: %s", strerror(-e));
	else
		log_info("dhcp", "%zu bound leases loaded in %.0f ms",
			 dhcp_leases_count(S->leases), (double)(now_mono_ns() - t0) / 1e6);
	return e;
}
