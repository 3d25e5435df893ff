/* mac — the one parser of a MAC address written as text: in a Hardware's
 * interfaces, a lease in the store, an iPXE URL, a TFTP file name. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Separators mac_parse accepts; one of them, the same throughout. */
#define MAC_COLON 1u /* "52:54:00:12:34:56": Hardware, leases, iPXE's ${mac} */
#define MAC_DASH 2u  /* "52-54-00-12-34-56": as some firmware and Windows write it */

/* Parses exactly len bytes of s as a 48-bit MAC: six pairs of hex digits
 * (either case) joined by one separator of seps (MAC_COLON, MAC_DASH, or
 * both), the same five times. 0 and the six bytes in ret; -EINVAL for
 * anything else (s NULL, another length, a separator not in seps or mixed,
 * a digit that is not hex). ret is written only on success. */
int mac_parse(const char *s, size_t len, unsigned seps, uint8_t ret[6]);
