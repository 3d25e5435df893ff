/* mac — the one parser of a MAC address written as text: in a Hardware's
 * interfaces, a lease in the store, an iPXE URL, a TFTP file name; and the
 * one writer of it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Separators mac_parse accepts; one of them, the same throughout. */
#define MAC_COLON 1u /* "52:54:00:12:34:56": Hardware, leases, iPXE's ${mac} */
#define MAC_DASH 2u  /* "52-54-00-12-34-56": as some firmware and Windows write it */

#define MAC_MAX_LEN 20 /* bytes of the longest hardware address: InfiniBand's */

/* Parses exactly len bytes of s as a 48-bit MAC: six pairs of hex digits
 * (either case) joined by one separator of seps (MAC_COLON, MAC_DASH, or
 * both), the same five times. 0 and the six bytes in ret; -EINVAL for
 * anything else (s NULL, another length, a separator not in seps or mixed,
 * a digit that is not hex). ret is written only on success. */
int mac_parse(const char *s, size_t len, unsigned seps, uint8_t ret[6]);

/* The same, but takes either a 48-bit MAC (17 bytes of text) or a 20-byte
 * InfiniBand hardware address (59 bytes of text: twenty pairs), as a
 * Hardware's interfaces may hold either. Returns the number of bytes
 * written to ret (6 or 20), or -EINVAL for anything else; ret is written
 * only on success. */
int mac_parse_hw(const char *s, size_t len, unsigned seps, uint8_t ret[MAC_MAX_LEN]);

#define MAC_STR_SIZE 18 /* "52:54:00:12:34:56" and its NUL */

/* Writes mac as lower-case hex pairs joined by ':' into out, NUL
 * terminated. On every DHCP answer's path: no printf. */
void mac_format(const uint8_t mac[6], char out[MAC_STR_SIZE]);
