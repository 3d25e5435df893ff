/* bootfile — what the TFTP server and the iPXE binary route share about
 * the iPXE binaries they serve. */
#pragma once

/* The other name the same iPXE binary is known by, tried when the one
 * asked for is not in the directory ("snp.efi" <-> "snp-arm64.efi",
 * tinkerbell/ipxedust renamed it), or NULL (name NULL included). A
 * static string. */
const char *bootfile_alias(const char *name);
