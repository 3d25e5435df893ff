/* rmcp — the outer layers of the IPMI LAN interface (IPMI v2.0 §13):
 * the RMCP header (§13.1.3), the ASF presence ping and pong (§13.2), the
 * IPMI message inside a session with its two checksums (§13.8), and the
 * IPMI v1.5 header with auth type none that carries the one request sent
 * before any session, Get Channel Authentication Capabilities (§22.13).
 * Pure functions over byte buffers: every read goes through the cursor,
 * every write through a bounded writer; the RMCP+ session itself is in
 * rakp.c. */
#include "config.h"

#include <errno.h>

#include "bmc/ipmi/ipmi.h"
#include "bmc/ipmi/wr.h"

static void put_rmcp(struct ipmi_wr *w, uint8_t cls)
{
	uint8_t h[4] = { RMCP_VERSION, 0x00, RMCP_SEQ_NOACK, cls };
	wr_bytes(w, h, sizeof(h));
}

/* Reads and checks the RMCP header: version 6, class cls. */
static int get_rmcp(struct rd *r, uint8_t cls)
{
	uint8_t h[4];
	int e = rd_copy(r, h, sizeof(h));
	if (e < 0)
		return e;
	if (h[0] != RMCP_VERSION || h[3] != cls)
		return -EPROTO;
	return 0;
}

int ipmi_build_ping(uint8_t *out, size_t cap, uint8_t tag)
{
	struct ipmi_wr w = ipmi_wr_init(out, cap);
	put_rmcp(&w, RMCP_CLASS_ASF);
	uint8_t asf[8] = { 0, 0, ASF_IANA >> 8, ASF_IANA & 0xff, ASF_TYPE_PING, tag, 0, 0 };
	wr_bytes(&w, asf, sizeof(asf));
	return wr_result(&w);
}

int ipmi_parse_pong(const uint8_t *pkt, size_t len, uint8_t tag, struct asf_pong *ret)
{
	struct rd r = rd_init(pkt, len);
	uint32_t iana, oem;
	uint8_t type, rtag, rsvd, dlen, ent;
	const uint8_t *rest;
	int e;

	if (len > BMC_MAX_REPLY)
		return -EMSGSIZE;
	if ((e = get_rmcp(&r, RMCP_CLASS_ASF)) < 0)
		return e;
	if ((e = rd_be32(&r, &iana)) < 0 || (e = rd_u8(&r, &type)) < 0 ||
	    (e = rd_u8(&r, &rtag)) < 0 || (e = rd_u8(&r, &rsvd)) < 0 || (e = rd_u8(&r, &dlen)) < 0)
		return e;
	if (iana != ASF_IANA)
		return -EPROTO;
	if (type != ASF_TYPE_PONG || rtag != tag)
		return -ENOMSG;
	/* §13.2.4: 16 bytes of data: IANA, OEM, entities, interactions, 6
	 * reserved. */
	if (dlen < 16 || r.len != dlen)
		return -EBADMSG;
	if ((e = rd_be32(&r, &iana)) < 0 || (e = rd_be32(&r, &oem)) < 0 ||
	    (e = rd_u8(&r, &ent)) < 0 || (e = rd_bytes(&r, r.len, &rest)) < 0)
		return e;
	ret->tag = rtag;
	ret->iana = iana;
	ret->ipmi = (ent & 0x80) != 0;
	return 0;
}

uint8_t ipmi_checksum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;
	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	return (uint8_t)-s;
}

void ipmi_put_msg(struct ipmi_wr *w, const struct ipmi_req *rq)
{
	uint8_t h[6];
	h[0] = IPMI_BMC_ADDR;
	h[1] = (uint8_t)(rq->netfn << 2);
	h[2] = ipmi_checksum(h, 2);
	h[3] = IPMI_CONSOLE_ADDR;
	h[4] = (uint8_t)((rq->rqseq & 0x3f) << 2);
	h[5] = rq->cmd;
	if (rq->dlen > IPMI_MAX_DATA) {
		w->over = true;
		return;
	}
	wr_bytes(w, h, sizeof(h));
	wr_bytes(w, rq->data, rq->dlen);
	/* The second checksum covers rqAddr through the last data byte. */
	uint8_t s = 0;
	for (size_t i = 3; i < 6; i++)
		s = (uint8_t)(s + h[i]);
	for (size_t i = 0; i < rq->dlen; i++)
		s = (uint8_t)(s + rq->data[i]);
	wr_u8(w, (uint8_t)-s);
}

int ipmi_parse_msg(const uint8_t *msg, size_t len, const struct ipmi_req *rq, struct ipmi_rsp *ret)
{
	/* rqAddr, netFn/LUN, chk1, rsAddr, rqSeq/LUN, cmd, cc, data, chk2 */
	if (len > BMC_MAX_REPLY)
		return -EMSGSIZE;
	if (len < 8)
		return -EBADMSG;
	if (ipmi_checksum(msg, 2) != msg[2] || ipmi_checksum(msg + 3, len - 4) != msg[len - 1])
		return -EILSEQ;
	if (msg[0] != IPMI_CONSOLE_ADDR || msg[3] != IPMI_BMC_ADDR)
		return -ENOMSG;
	if (msg[1] >> 2 != rq->netfn + 1 || msg[5] != rq->cmd || msg[4] >> 2 != (rq->rqseq & 0x3f))
		return -ENOMSG;
	ret->cc = msg[6];
	ret->data = msg + 7;
	ret->dlen = len - 8;
	return 0;
}

int ipmi_build_v15(uint8_t *out, size_t cap, const struct ipmi_req *rq)
{
	struct ipmi_wr w = ipmi_wr_init(out, cap);
	put_rmcp(&w, RMCP_CLASS_IPMI);
	wr_u8(&w, IPMI_AUTH_NONE);
	wr_le32(&w, 0); /* session sequence */
	wr_le32(&w, 0); /* session ID */
	wr_u8(&w, (uint8_t)(rq->dlen + 7));
	ipmi_put_msg(&w, rq);
	return wr_result(&w);
}

int ipmi_parse_v15(const uint8_t *pkt, size_t len, const struct ipmi_req *rq, struct ipmi_rsp *ret)
{
	struct rd r = rd_init(pkt, len);
	uint8_t auth, mlen;
	uint32_t seq, sid;
	const uint8_t *msg;
	int e;

	if (len > BMC_MAX_REPLY)
		return -EMSGSIZE;
	if ((e = get_rmcp(&r, RMCP_CLASS_IPMI)) < 0)
		return e;
	if ((e = rd_u8(&r, &auth)) < 0)
		return e;
	if (auth != IPMI_AUTH_NONE)
		return -EPROTO;
	if ((e = rd_le32(&r, &seq)) < 0 || (e = rd_le32(&r, &sid)) < 0 ||
	    (e = rd_u8(&r, &mlen)) < 0)
		return e;
	if (sid != 0)
		return -ESTALE;
	/* Some BMCs pad the datagram; the length byte rules. */
	if ((e = rd_bytes(&r, mlen, &msg)) < 0)
		return e;
	return ipmi_parse_msg(msg, mlen, rq, ret);
}
