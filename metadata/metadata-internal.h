/* metadata-internal — what the files of metadata/ share. Included only
 * inside metadata/ and by its unit tests. */
#pragma once

#include "metadata/metadata.h"

/* The machine's own interface: the first of spec.interfaces with a
 * dhcp.ip.address, else the first; its "dhcp" object, or NULL. */
const struct json_t *md_iface_dhcp(const struct json_t *hw);
/* A field of that dhcp object (NULL when unset). */
const struct json_t *md_iface_field(const struct json_t *hw, const char *key);
/* spec.metadata.facility, or NULL. */
const struct json_t *md_facility(const struct json_t *hw);
/* The user data: spec.userData, else metadata.instance.userdata (a
 * string), or NULL. */
const struct json_t *md_user_data(const struct json_t *hw);
