/* cfg_globals.h — a stand-in for a header of Kea 2.2.0 that Kea's own
 * install rules leave out (Debian 12's kea-dev has dhcpsrv/network.h,
 * srv_config.h and d2_client_cfg.h, which include it, but not it), so
 * that no header of Kea's subnets or configuration manager compiles.
 *
 * The hook's shim (dhcp/kea/hook.cc) is compiled with this directory
 * after every other (-idirafter): where Kea installs the real header,
 * the real one is used. The names here are those that the installed
 * headers refer to; their values are not Kea's. That is harmless as long
 * as the shim calls no inline accessor that reads Kea's global
 * parameters (Network::getValid() and its kind) and makes no object of
 * this class: it only looks subnets up and asks whether an address is
 * in one, which Kea's library code answers. Never include it directly. */
#pragma once

#include <cc/cfg_to_element.h>
#include <cc/data.h>

#include <boost/shared_ptr.hpp>
#include <string>

namespace isc {
namespace dhcp {

class CfgGlobals : public isc::data::CfgToElement {
public:
	/* Names only: see above. */
	enum Index : int {
		VALID_LIFETIME,
		MIN_VALID_LIFETIME,
		MAX_VALID_LIFETIME,
		RENEW_TIMER,
		REBIND_TIMER,
		RESERVATIONS_GLOBAL,
		RESERVATIONS_IN_SUBNET,
		RESERVATIONS_OUT_OF_POOL,
		CALCULATE_TEE_TIMES,
		T1_PERCENT,
		T2_PERCENT,
		DDNS_SEND_UPDATES,
		DDNS_OVERRIDE_NO_UPDATE,
		DDNS_OVERRIDE_CLIENT_UPDATE,
		DDNS_REPLACE_CLIENT_NAME,
		DDNS_GENERATED_PREFIX,
		DDNS_QUALIFYING_SUFFIX,
		HOSTNAME_CHAR_SET,
		HOSTNAME_CHAR_REPLACEMENT,
		STORE_EXTENDED_INFO,
		CACHE_THRESHOLD,
		CACHE_MAX_AGE,
		DDNS_UPDATE_ON_RENEW,
		DDNS_USE_CONFLICT_RESOLUTION,
		MATCH_CLIENT_ID,
		AUTHORITATIVE,
		NEXT_SERVER,
		SERVER_HOSTNAME,
		BOOT_FILE_NAME,
		PREFERRED_LIFETIME,
		MIN_PREFERRED_LIFETIME,
		MAX_PREFERRED_LIFETIME,
	};

	isc::data::ConstElementPtr get(const std::string &name) const;
	isc::data::ConstElementPtr get(int index) const;
	void set(const std::string &name, isc::data::ConstElementPtr value);
	void clear();
};

typedef boost::shared_ptr<CfgGlobals> CfgGlobalsPtr;
typedef boost::shared_ptr<const CfgGlobals> ConstCfgGlobalsPtr;

} /* namespace dhcp */
} /* namespace isc */
