/* msg — the request data and response parsers of the IPMI commands the
 * client sends: Get Channel Authentication Capabilities (IPMI v2.0
 * §22.13), Get Chassis Status (§28.2), Chassis Control (§28.3, its one
 * data byte is enum ipmi_chassis_ctl), Set/Get System Boot Options
 * (§28.12, §28.13) parameters 3 (boot info acknowledge) and 5 (boot
 * flags), Set Session Privilege Level (§22.18) and Close Session
 * (§22.19). They work on the data of an IPMI message only; rmcp.c frames
 * it and rakp.c carries it in a session. A completion code other than 0
 * is refused here with -EREMOTEIO, so callers see it in one place. */
#include "config.h"

#include <errno.h>

#include "bmc/ipmi/ipmi.h"
#include "bmc/ipmi/wr.h"

size_t ipmi_auth_caps_req(uint8_t out[2])
{
	out[0] = 0x8e; /* bit 7: IPMI v2.0 data; channel 0xe: this one */
	out[1] = IPMI_PRIV_ADMIN;
	return 2;
}

int ipmi_auth_caps_parse(const struct ipmi_rsp *rsp, struct ipmi_auth_caps *ret)
{
	struct rd r = rd_init(rsp->data, rsp->dlen);
	uint8_t b[8];
	int e;

	if (rsp->cc != 0)
		return -EREMOTEIO;
	if ((e = rd_copy(&r, b, sizeof(b))) < 0)
		return e;
	ret->channel = b[0] & 0x0f;
	/* Byte 2 bit 7 says extended data follows; byte 4 bit 1 is 2.0. */
	ret->v20 = (b[1] & 0x80) && (b[3] & 0x02);
	ret->kg_set = (b[2] & 0x20) != 0;
	ret->null_users = (b[2] & 0x02) != 0;
	ret->anonymous = (b[2] & 0x01) != 0;
	ret->oem_iana = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16;
	return 0;
}

int ipmi_chassis_status_parse(const struct ipmi_rsp *rsp, struct ipmi_chassis_status *ret)
{
	struct rd r = rd_init(rsp->data, rsp->dlen);
	uint8_t b[3];
	int e;

	if (rsp->cc != 0)
		return -EREMOTEIO;
	/* A fourth byte (front panel buttons) is optional. */
	if ((e = rd_copy(&r, b, sizeof(b))) < 0)
		return e;
	ret->power_on = b[0] & 0x01;
	ret->overload = (b[0] & 0x02) != 0;
	ret->interlock = (b[0] & 0x04) != 0;
	ret->power_fault = (b[0] & 0x08) != 0;
	ret->control_fault = (b[0] & 0x10) != 0;
	ret->restore_policy = (b[0] >> 5) & 0x03;
	ret->last_event = b[1];
	ret->misc = b[2];
	return 0;
}

size_t ipmi_boot_flags_req(uint8_t out[6], const struct ipmi_boot_flags *f)
{
	out[0] = IPMI_BOOT_PARAM_FLAGS; /* bit 7 clear: not locked */
	out[1] =
		(uint8_t)((f->valid ? 0x80 : 0) | (f->persistent ? 0x40 : 0) | (f->efi ? 0x20 : 0));
	out[2] = (uint8_t)((f->device & 0x0f) << 2);
	out[3] = 0;
	out[4] = 0;
	out[5] = 0;
	return 6;
}

size_t ipmi_boot_ack_req(uint8_t out[3], uint8_t mask, uint8_t data)
{
	out[0] = IPMI_BOOT_PARAM_ACK;
	out[1] = mask;
	out[2] = data;
	return 3;
}

size_t ipmi_boot_get_req(uint8_t out[3], uint8_t param)
{
	out[0] = param & 0x7f;
	out[1] = 0; /* set selector */
	out[2] = 0; /* block selector */
	return 3;
}

int ipmi_boot_flags_parse(const struct ipmi_rsp *rsp, struct ipmi_boot_flags *ret)
{
	struct rd r = rd_init(rsp->data, rsp->dlen);
	uint8_t ver, sel, b[5];
	int e;

	if (rsp->cc != 0)
		return -EREMOTEIO;
	if ((e = rd_u8(&r, &ver)) < 0 || (e = rd_u8(&r, &sel)) < 0)
		return e;
	/* §28.13: parameter version 1; bit 7 of the selector marks the
	 * parameter invalid/locked, the rest is the parameter echoed. */
	if (ver != 0x01 || (sel & 0x7f) != IPMI_BOOT_PARAM_FLAGS)
		return -ENOMSG;
	if ((e = rd_copy(&r, b, sizeof(b))) < 0)
		return e;
	ret->valid = (b[0] & 0x80) != 0;
	ret->persistent = (b[0] & 0x40) != 0;
	ret->efi = (b[0] & 0x20) != 0;
	ret->device = (b[1] >> 2) & 0x0f;
	return 0;
}

size_t ipmi_chassis_control_req(uint8_t out[1], enum ipmi_chassis_ctl ctl)
{
	out[0] = (uint8_t)ctl & 0x0f;
	return 1;
}

size_t ipmi_set_priv_req(uint8_t out[1])
{
	out[0] = IPMI_PRIV_ADMIN;
	return 1;
}

int ipmi_priv_parse(const struct ipmi_rsp *rsp)
{
	struct rd r = rd_init(rsp->data, rsp->dlen);
	uint8_t level;
	int e;

	if (rsp->cc != 0)
		return -EREMOTEIO;
	if ((e = rd_u8(&r, &level)) < 0)
		return e;
	return (level & 0x0f) == IPMI_PRIV_ADMIN ? 0 : -EPERM;
}

size_t ipmi_close_req(uint8_t out[4], uint32_t bmc_sid)
{
	struct ipmi_wr w = ipmi_wr_init(out, 4);
	wr_le32(&w, bmc_sid);
	return w.len;
}
