/* bootmark — the closed loop's annotations on a Hardware, shared by the
 * parts that meet over them: the workflow controller marks a Hardware
 * whose Workflow ended SUCCESS; the DHCP server and the metadata and iPXE
 * routes, which see the machine boot, record what they saw; the
 * controller turns it into the Workflow's Booted condition
 * (workflow/engine-boot.c, docs/workflows.md). */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The mark: "<workflow name> <power-on time, RFC 3339>". */
#define BOOTMARK_AWAIT "ironbell.dev/awaiting-boot"
/* What was seen while the mark was there: "<kind> <time> <via>", kind
 * BOOTMARK_DISK or BOOTMARK_NETBOOT, time RFC 3339 UTC, via "metadata",
 * "dhcp" or "ipxe". */
#define BOOTMARK_OBSERVED "ironbell.dev/boot-observed"
#define BOOTMARK_DISK "disk"
#define BOOTMARK_NETBOOT "netboot"

/* Whether Hardware hw (borrowed) waits for an observation: it has the
 * mark and no observation yet. */
bool bootmark_awaiting(const json_t *hw);

/* A new merge patch that records the observation kind/via at now_ms
 * (Unix milliseconds) in the Hardware's annotations; NULL without
 * memory. */
json_t *bootmark_patch(const char *kind, const char *via, int64_t now_ms);
