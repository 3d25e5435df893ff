/* fuzz_ipmi — the IPMI client's untrusted input: a datagram from a BMC.
 * It is parsed as an ASF pong, a v1.5 reply, a pre-session RMCP+ reply
 * (Open Session Response, RAKP 2, RAKP 4) and as a reply inside a fixed
 * session of suite 3 and of suite 17, through the integrity check and the
 * decryption, then as an IPMI message and its command data. Properties
 * checked: a payload accepted in a session wraps back (same keys, same
 * IV) into a packet that unwraps to the same bytes; the window never
 * accepts one number twice. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "bmc/ipmi/ipmi.h"
#include "tests/fuzz/fuzz.h"

static void parse_cmds(const uint8_t *p, size_t n)
{
	static const uint8_t cmds[][2] = {
		{ IPMI_NETFN_APP, IPMI_CMD_GET_AUTH_CAPS },
		{ IPMI_NETFN_CHASSIS, IPMI_CMD_CHASSIS_STATUS },
		{ IPMI_NETFN_CHASSIS, IPMI_CMD_GET_BOOT_OPTIONS },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct ipmi_req rq = { cmds[i][0], cmds[i][1], n ? (uint8_t)(p[n - 1] >> 2) : 0,
				       NULL, 0 };
		struct ipmi_rsp r;
		struct ipmi_auth_caps c;
		struct ipmi_chassis_status s;
		struct ipmi_boot_flags f;
		/* The rqSeq is taken from the input so that a match is reachable. */
		if (n >= 5)
			rq.rqseq = p[4] >> 2;
		if (ipmi_parse_msg(p, n, &rq, &r) < 0)
			continue;
		(void)ipmi_auth_caps_parse(&r, &c);
		(void)ipmi_chassis_status_parse(&r, &s);
		(void)ipmi_boot_flags_parse(&r, &f);
	}
}

static void in_session(unsigned suite, const uint8_t *data, size_t size)
{
	struct ipmi_rakp r;
	struct ipmi_keys k;
	uint8_t rm[16] = { 1 }, buf[BMC_MAX_REPLY], again[BMC_MAX_REPLY + 64], buf2[BMC_MAX_REPLY];
	struct ipmi_rx rx, rx2;
	uint8_t iv[16] = { 2 };

	if (ipmi_rakp_init(&r, ipmi_suite_get(suite), 0xa0a1a2a3u, rm, "admin", "secret") < 0)
		abort();
	r.bmc_sid = 0x01020304u;
	if (ipmi_derive_keys(&r, &k) < 0)
		abort();
	if (ipmi_unwrap(&k, r.console_sid, IPMI_PAYLOAD_IPMI, data, size, buf, sizeof(buf), &rx) <
	    0)
		return;
	parse_cmds(rx.payload, rx.plen);
	int n = ipmi_wrap(&k, IPMI_PAYLOAD_IPMI, r.console_sid, rx.seq, iv, rx.payload, rx.plen,
			  again, sizeof(again));
	if (n < 0)
		return; /* a plaintext this long re-encrypts past BMC_MAX_REPLY */
	if (ipmi_unwrap(&k, r.console_sid, IPMI_PAYLOAD_IPMI, again, (size_t)n, buf2, sizeof(buf2),
			&rx2) < 0 ||
	    rx2.plen != rx.plen || memcmp(buf2, buf, rx.plen) != 0)
		abort();
	struct ipmi_window w = { 0 };
	if (ipmi_window_accept(&w, rx.seq) == 0 && ipmi_window_accept(&w, rx.seq) == 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct asf_pong pong;
	struct ipmi_rsp rsp;
	uint8_t d[2], buf[BMC_MAX_REPLY], st;
	struct ipmi_req rq = { IPMI_NETFN_APP, IPMI_CMD_GET_AUTH_CAPS, 0, d,
			       ipmi_auth_caps_req(d) };
	struct ipmi_rx rx;

	(void)ipmi_parse_pong(data, size, size ? data[size - 1] : 0, &pong);
	if (size > 18)
		rq.rqseq = data[18] >> 2;
	if (ipmi_parse_v15(data, size, &rq, &rsp) == 0) {
		struct ipmi_auth_caps c;
		(void)ipmi_auth_caps_parse(&rsp, &c);
	}
	for (uint8_t pt = IPMI_PAYLOAD_OPEN_RSP; pt <= IPMI_PAYLOAD_RAKP4; pt += 2) {
		if (ipmi_unwrap(NULL, 0, pt, data, size, buf, sizeof(buf), &rx) < 0)
			continue;
		for (unsigned s = 3; s <= 17; s += 14) {
			struct ipmi_rakp r;
			struct ipmi_keys k;
			uint8_t rm[16] = { 0 };
			if (ipmi_rakp_init(&r, ipmi_suite_get(s), 0xa0a1a2a3u, rm, "admin",
					   "secret") < 0)
				abort();
			r.tag = rx.plen ? rx.payload[0] : 0;
			(void)ipmi_open_rsp(&r, rx.payload, rx.plen, &st);
			if (ipmi_rakp2(&r, rx.payload, rx.plen, &k, &st) == 0)
				(void)ipmi_rakp4(&r, &k, rx.payload, rx.plen, &st);
		}
	}
	in_session(3, data, size);
	in_session(17, data, size);
	return 0;
}
