/* fuzz_metadata — metadata/'s untrusted inputs: the request path
 * (md_route_parse), X-Forwarded-For (md_client_address), and the fields
 * of a Hardware object as they reach every document (md_ec2 on each key,
 * md_nocloud, md_hegel_json, md_ignition).
 *
 * The first byte chooses. Properties checked: a parsed EC2 key has no
 * empty, "." or ".." component; the client address is always an address,
 * and from an untrusted peer always the peer; the network-config
 * and meta-data made from any Hardware are YAML whose top level is
 * exactly what was meant (no value breaks out of its scalar). */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <jansson.h>
#include <yaml.h>

#include "daemon/config/conf.h"
#include "metadata/metadata.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_MD_MAX 16384

static void route(const uint8_t *d, size_t n)
{
	struct md_route r;
	if (md_route_parse((const char *)d, n, &r) != MD_ROUTE_EC2)
		return;
	const char *p = r.path;
	while (*p) {
		const char *s = strchr(p, '/');
		size_t cn = s ? (size_t)(s - p) : strlen(p);
		if (cn == 0 || (cn == 1 && p[0] == '.') || (cn == 2 && p[0] == '.' && p[1] == '.'))
			abort();
		p += cn + (s ? 1 : 0);
	}
}

static void xff(const uint8_t *d, size_t n)
{
	static struct config_cidrs l;
	char *h = malloc(n + 1), out[INET6_ADDRSTRLEN];
	if (!h)
		return;
	if (!l.n) {
		l.n = 2;
		l.e[0] = (struct config_cidr){ .family = AF_INET, .prefix = 24, .addr = { 192, 0, 2 } };
		l.e[1] = (struct config_cidr){ .family = AF_INET6, .prefix = 32,
					       .addr = { 0x20, 0x01, 0x0d, 0xb8 } };
	}
	memcpy(h, d, n);
	h[n] = '\0';
	/* From a trusted peer: whatever comes back is an address. */
	if (md_client_address("192.0.2.1", h, &l, out, sizeof(out)) == 0) {
		unsigned char b[16];
		if (inet_pton(strchr(out, ':') ? AF_INET6 : AF_INET, out, b) != 1)
			abort();
	}
	/* From an untrusted one the header never matters. */
	if (md_client_address("198.51.100.1", h, &l, out, sizeof(out)) != 0 ||
	    strcmp(out, "198.51.100.1") != 0)
		abort();
	free(h);
}

/* The YAML in b is one mapping whose keys are all in keys[]. */
static void check_yaml(const struct buf *b, const char *const *keys)
{
	yaml_parser_t p;
	yaml_document_t doc;
	if (!b->data)
		return;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)b->data, b->len);
	if (!yaml_parser_load(&p, &doc))
		abort();
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		abort();
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     pr < root->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
		bool ok = false;
		for (const char *const *w = keys; *w && k && k->type == YAML_SCALAR_NODE; w++)
			ok = ok || (strlen(*w) == k->data.scalar.length &&
				    memcmp(*w, k->data.scalar.value, k->data.scalar.length) == 0);
		if (!ok)
			abort();
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
}

static void hardware(const uint8_t *d, size_t n)
{
	static const char *const paths[] = {
		"", "meta-data", "meta-data/instance-id", "meta-data/hostname", "meta-data/tags",
		"meta-data/public-keys", "meta-data/public-keys/0", "meta-data/public-keys/0/openssh-key",
		"meta-data/public-ipv4", "meta-data/local-ipv4", "meta-data/public-ipv6",
		"meta-data/operating-system/slug", "user-data", "vendor-data",
	};
	static const char *const nc_keys[] = { "version", "ethernets", "vlans", NULL };
	static const char *const md_keys[] = { "instance-id", "local-hostname", "public-keys", NULL };
	json_t *hw = json_loadb((const char *)d, n, 0, NULL);
	struct buf out = BUF_INIT(MD_BODY_MAX);
	if (!hw)
		return;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		buf_reset(&out);
		(void)md_ec2(hw, paths[i], &out);
	}
	buf_reset(&out);
	if (md_nocloud(hw, MD_NOCLOUD_NETWORK_CONFIG, &out) == 0)
		check_yaml(&out, nc_keys);
	buf_reset(&out);
	if (md_nocloud(hw, MD_NOCLOUD_META_DATA, &out) == 0)
		check_yaml(&out, md_keys);
	buf_reset(&out);
	(void)md_hegel_json(hw, &out);
	buf_reset(&out);
	(void)md_ignition(hw, &out);
	buf_free(&out);
	json_decref(hw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > FUZZ_MD_MAX)
		return 0;
	switch (data[0] % 3) {
	case 0:
		route(data + 1, size - 1);
		break;
	case 1:
		xff(data + 1, size - 1);
		break;
	default:
		hardware(data + 1, size - 1);
		break;
	}
	return 0;
}
