/* bootfile — the iPXE binaries' other names.
 *
 * DESIGN: a binary is asked for over TFTP (tftp/files.c) and over HTTP
 * (/ipxe/binary/..., daemon/public/public.c through ipxe/), and both must find
 * the same file under the same names; neither part may include the
 * other, so the table is here. A name with an alias is served from the
 * alias only when the name itself is missing.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "common/bootfile.h"

static const struct {
	const char *name, *alias;
} bootfile_aliases[] = {
	{ "snp.efi", "snp-arm64.efi" },
	{ "snp-arm64.efi", "snp.efi" },
};

const char *bootfile_alias(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(bootfile_aliases) / sizeof(bootfile_aliases[0]); i++)
		if (strcmp(name, bootfile_aliases[i].name) == 0)
			return bootfile_aliases[i].alias;
	return NULL;
}
