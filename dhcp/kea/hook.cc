/* hook — the C++ shim of the Kea hook library libdhcp_ironbell.so: what
 * kea-dhcp4 loads and calls, translated into calls to the hook's C core
 * (dhcp/kea/ironbell-kea.h), which makes every decision.
 *
 * DESIGN: kea-dhcp4 (2.2) looks up version(), load(), unload(),
 * multi_threading_compatible() and one function per hook point by name
 * (dhcp/kea/hook.map exports those alone). load() checks the parameters
 * with ibkea_params_parse() (a bad one fails the load, so Kea refuses the
 * configuration with the core's message), starts the core with Kea's
 * logger as its log sink, and registers the host data source factory
 * "ironbell". The source itself is added in dhcp4_srv_configured: Kea
 * loads hook libraries in the middle of its configuration and then makes
 * its host manager anew, which would drop a source added in load(). The
 * source answers Kea's allocation engine from the core's reservation
 * table (ibkea_by_mac, ibkea_by_ip) with Hosts limited to the Kea subnet
 * asked about; lease4_select gives the lease the Hardware's lease time;
 * pkt4_send hands the request's bytes and Kea's OFFER or ACK to
 * ibkea_answer_request() and copies the boot fields and options it
 * returns into the response. unload() takes the source out of the host
 * manager before the core is freed and the library unmapped.
 *
 * Nothing leaves a callout as an exception: each catches, logs through
 * Kea's logger ("ironbell-hooks") and lets Kea go on with its own answer.
 * Kea runs the packet callouts on several threads; the core is
 * thread-safe, and the shim's only state besides it is set by load and
 * unload, which Kea runs with its packet threads stopped.
 *
 * Statistics (Kea's StatsMgr, statistic-get-all): ironbell.lookups,
 * ironbell.answers.<outcome>, ironbell.boot.<boot> (applied answers),
 * ironbell.time-us.le-<N> and ironbell.time-us.sum (the library's own
 * time per exchange: a histogram), and the gauges ironbell.hosts and
 * ironbell.ready. The counters are
 * counted aside and written every second by a packet's callout; the gauges
 * by every callout when they changed; both after every control command
 * (command_processed), which answers statistic-get and statistic-get-all
 * again with them: Kea's statistics have no value read on demand, and a
 * thread of the hook may not write them while Kea runs single-threaded.
 */
#include <hooks/hooks.h>

#include <asiolink/io_address.h>
#include <cc/data.h>
#include <dhcp/dhcp4.h>
#include <dhcp/option.h>
#include <dhcp/option4_addrlst.h>
#include <dhcp/option_int.h>
#include <dhcp/pkt4.h>
#include <dhcpsrv/base_host_data_source.h>
#include <dhcpsrv/cfgmgr.h>
#include <dhcpsrv/host.h>
#include <dhcpsrv/host_data_source_factory.h>
#include <dhcpsrv/host_mgr.h>
#include <dhcpsrv/lease.h>
#include <dhcpsrv/subnet.h>
#include <exceptions/exceptions.h>
#include <log/log_dbglevels.h>
#include <log/logger.h>
#include <log/macros.h>
#include <log/message_initializer.h>
#include <stats/stats_mgr.h>

#include <atomic>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

/* C headers: a C struct and a function may share a name (dhcp_relay_info),
 * which C++ calls shadowing. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
extern "C" {
#include "common/log.h"
#include "common/mac.h"
#include "common/ratelimit.h"
#include "dhcp/kea/ironbell-kea.h"
/* common/common.h's (a C header this C++ cannot include whole): the
 * monotonic clock in nanoseconds. */
uint64_t now_mono_ns(void);
}
#pragma GCC diagnostic pop

using isc::asiolink::IOAddress;
using isc::dhcp::ConstHostCollection;
using isc::dhcp::ConstHostPtr;
using isc::dhcp::Host;
using isc::dhcp::HostPageSize;
using isc::dhcp::HostPtr;
using isc::dhcp::SubnetID;
using isc::hooks::CalloutHandle;
using isc::hooks::LibraryHandle;

namespace {

/* ---- logging: Kea's logger, a dictionary of one pass-through message per
 * level ---- */

const isc::log::MessageID IRONBELL_ERROR = "IRONBELL_ERROR";
const isc::log::MessageID IRONBELL_WARN = "IRONBELL_WARN";
const isc::log::MessageID IRONBELL_INFO = "IRONBELL_INFO";
const isc::log::MessageID IRONBELL_DEBUG = "IRONBELL_DEBUG";

/* clang-format off */
const char *ib_messages[] = {
	"IRONBELL_ERROR", "%1",
	"IRONBELL_WARN", "%1",
	"IRONBELL_INFO", "%1",
	"IRONBELL_DEBUG", "%1",
	NULL,
};
/* clang-format on */
const isc::log::MessageInitializer ib_message_init(ib_messages);

isc::log::Logger ib_logger("ironbell-hooks");

const char HOST_SOURCE_TYPE[] = "ironbell";

/* The packet callouts' argument names, made once, not per packet. */
const std::string ARG_LEASE4("lease4");
const std::string ARG_QUERY4("query4");
const std::string ARG_RESPONSE4("response4");

/* The core, between load and unload. */
struct ibkea *ib_core;

void ib_log_line(enum ibkea_log_level level, const char *msg) noexcept
{
	try {
		switch (level) {
		case IBKEA_LOG_ERROR: LOG_ERROR(ib_logger, IRONBELL_ERROR).arg(msg); break;
		case IBKEA_LOG_WARN: LOG_WARN(ib_logger, IRONBELL_WARN).arg(msg); break;
		case IBKEA_LOG_INFO: LOG_INFO(ib_logger, IRONBELL_INFO).arg(msg); break;
		default:
			LOG_DEBUG(ib_logger, isc::log::DBGLVL_TRACE_BASIC, IRONBELL_DEBUG).arg(msg);
			break;
		}
	} catch (...) {
		/* a line that cannot be logged is lost, never thrown into C */
	}
}

void ib_error(const std::string &msg) noexcept
{
	ib_log_line(IBKEA_LOG_ERROR, msg.c_str());
}

} /* namespace */

/* The C core's log callback, and the sink of the lines that ironbell's
 * own code (common/log.c: the store) logs inside the hook. */
extern "C" {
static void ib_core_log(enum ibkea_log_level level, const char *msg)
{
	ib_log_line(level, msg);
}

static void ib_common_log(enum log_level level, const char *subsystem, const char *line)
{
	enum ibkea_log_level l = level == LOG_LVL_ERROR ? IBKEA_LOG_ERROR :
				 level == LOG_LVL_WARN  ? IBKEA_LOG_WARN :
				 level == LOG_LVL_INFO  ? IBKEA_LOG_INFO :
							  IBKEA_LOG_DEBUG;
	try {
		if (subsystem && *subsystem)
			ib_log_line(l, (std::string(subsystem) + ": " + line).c_str());
		else
			ib_log_line(l, line);
	} catch (...) {
		/* out of memory: the line is lost */
	}
}
}

namespace {

/* ---- statistics ---- */

/* The names, made once: a statistic is looked up by a std::string, and
 * most of these are too long for one without an allocation. */
const std::string STAT_LOOKUPS("ironbell.lookups");
const std::string STAT_HOSTS("ironbell.hosts");
const std::string STAT_READY("ironbell.ready");

const std::string &stat_answer(enum ibkea_outcome o)
{
	static const std::vector<std::string> names = [] {
		std::vector<std::string> v;
		for (int i = 0; i <= IBKEA_OUTCOME_MAX; i++)
			v.push_back(std::string("ironbell.answers.") +
				    ibkea_outcome_name(static_cast<enum ibkea_outcome>(i)));
		return v;
	}();
	return names[(unsigned)o < IBKEA_OUTCOME_MAX ? o : IBKEA_OUTCOME_MAX];
}

const std::string &stat_boot(enum dhcp_boot b)
{
	static const std::vector<std::string> names = [] {
		std::vector<std::string> v;
		for (int i = 0; i <= DHCP_BOOT_MAX; i++)
			v.push_back(std::string("ironbell.boot.") +
				    dhcp_boot_name(static_cast<enum dhcp_boot>(i)));
		return v;
	}();
	return names[(unsigned)b < DHCP_BOOT_MAX ? b : DHCP_BOOT_MAX];
}

/* The gauges as last written: a packet's callouts write them again only
 * when they changed, so that they cost Kea's statistics nothing; a control
 * command (force) writes them whatever they were, since statistic-reset
 * or statistic-remove may have changed them behind the hook's back. */
std::atomic<int64_t> last_hosts{ 0 }, last_ready{ 0 };

void stats_refresh_gauges(bool force = false)
{
	struct ibkea *k = ib_core;

	if (!k)
		return;
	int64_t hosts = static_cast<int64_t>(ibkea_count(k));
	int64_t ready = ibkea_ready(k) ? 1 : 0;
	isc::stats::StatsMgr &s = isc::stats::StatsMgr::instance();
	if (last_hosts.exchange(hosts) != hosts || force)
		s.setValue(STAT_HOSTS, hosts);
	if (last_ready.exchange(ready) != ready || force)
		s.setValue(STAT_READY, ready);
}

/* The counters of a packet's callouts are kept here and added to Kea's
 * statistics at most every STATS_FLUSH_NS, and at every control command:
 * each StatsMgr::addValue takes Kea's statistics lock, finds the name in
 * a map, reads the clock and stamps a sample (a third of what the hook
 * cost a packet, three of them per answer). A flush runs on a thread of
 * Kea's, never on one of the hook's, inside a packet's pkt4_send: its
 * about twenty addValue calls (the histogram's among them) are that
 * exchange's time in the library. Once a second, they fall on one
 * exchange in 2,000 at 1,000 DORA/s, where every 50 ms they fell on 1%.
 * A reader loses nothing: every command (statistic-get,
 * statistic-get-all) flushes first. */
constexpr uint64_t STATS_FLUSH_NS = 1000 * 1000 * 1000;

std::atomic<int64_t> pend_lookups{ 0 };
std::atomic<int64_t> pend_answer[IBKEA_OUTCOME_MAX];
std::atomic<int64_t> pend_boot[DHCP_BOOT_MAX];
std::atomic<uint64_t> stats_flushed_ns{ 0 };

int64_t pend_take(std::atomic<int64_t> &c)
{
	return c.load(std::memory_order_relaxed) ? c.exchange(0, std::memory_order_relaxed) : 0;
}

/* ---- the library's own time per exchange ----
 *
 * What the library adds to an exchange's latency is the time Kea spends
 * in it: its host lookups, lease4_select and pkt4_send. That time is
 * summed on the thread that handles the packet (Kea handles a packet on
 * one thread from its receipt to its pkt4_send) and counted, at the
 * packet's pkt4_send, in a histogram: ironbell.time-us.le-<N> counts the
 * exchanges that spent at most N µs in the library (cumulative, as a
 * Prometheus histogram's buckets), le-inf all of them, and sum their µs
 * in all. Time in the library while a packet is dropped before or at
 * pkt4_send is counted with the next one: the figure errs high, never
 * low. A library that parks packets between lease4_select and pkt4_send
 * (the HA library, at leases4_committed) can let another packet's
 * pkt4_send, or another thread's, come first: the histogram then mixes
 * the two exchanges' times, and only its sum stays exact. Two reads of
 * the monotonic clock per entry point (a vDSO call). */
constexpr unsigned TIME_BUCKETS = 12;
constexpr uint64_t time_le_us[TIME_BUCKETS - 1] = { 5, 10, 20, 30, 50, 75, 100, 200, 500, 1000, 5000 };

const std::string &stat_time(unsigned i)
{
	static const std::vector<std::string> names = [] {
		std::vector<std::string> v;
		for (unsigned j = 0; j < TIME_BUCKETS; j++)
			v.push_back(j + 1 < TIME_BUCKETS ?
					    "ironbell.time-us.le-" + std::to_string(time_le_us[j]) :
					    std::string("ironbell.time-us.le-inf"));
		v.push_back("ironbell.time-us.sum");
		return v;
	}();
	return names[i <= TIME_BUCKETS ? i : TIME_BUCKETS];
}

std::atomic<int64_t> pend_time[TIME_BUCKETS]; /* per bucket, not cumulative */
std::atomic<int64_t> pend_time_ns{ 0 };
std::atomic<int64_t> time_sum_ns_left{ 0 };   /* ns of the sum below 1 µs, carried */

thread_local uint64_t in_hook_ns;   /* this exchange's time in the library */
thread_local unsigned in_hook_depth; /* entry points nest (getAll4 -> get4) */

/* Times a scope of an entry point; an inner one adds nothing. */
struct InHook {
	uint64_t t0;
	InHook() : t0(in_hook_depth++ ? 0 : now_mono_ns())
	{
	}
	~InHook()
	{
		if (--in_hook_depth == 0)
			in_hook_ns += now_mono_ns() - t0;
	}
	InHook(const InHook &) = delete;
	InHook &operator=(const InHook &) = delete;
};

/* The exchange is over: its time goes in its bucket. One that is not
 * counted (dropped) leaves its time to the next exchange. */
void time_count(bool counted)
{
	uint64_t ns = in_hook_ns;
	unsigned i = 0;

	if (!counted)
		return;
	in_hook_ns = 0;
	while (i + 1 < TIME_BUCKETS && ns > time_le_us[i] * 1000)
		i++;
	pend_time[i].fetch_add(1, std::memory_order_relaxed);
	pend_time_ns.fetch_add(static_cast<int64_t>(ns), std::memory_order_relaxed);
}

/* Adds the histogram's counts since the last flush; true when any. */
bool time_flush(isc::stats::StatsMgr &s)
{
	int64_t n[TIME_BUCKETS], run = 0;
	bool any = false;

	for (unsigned i = 0; i < TIME_BUCKETS; i++) {
		n[i] = pend_take(pend_time[i]);
		any |= n[i] != 0;
	}
	int64_t ns = pend_take(pend_time_ns) + time_sum_ns_left.exchange(0);
	time_sum_ns_left.fetch_add(ns % 1000);
	for (unsigned i = 0; i < TIME_BUCKETS; i++) {
		run += n[i];
		if (run)
			s.addValue(stat_time(i), run);
	}
	if (ns / 1000) {
		s.addValue(stat_time(TIME_BUCKETS), ns / 1000);
		any = true;
	}
	return any;
}

/* Adds what the callouts counted since the last flush; true when there
 * was anything. */
bool stats_flush()
{
	isc::stats::StatsMgr &s = isc::stats::StatsMgr::instance();
	bool any = false;
	int64_t v;

	stats_flushed_ns.store(now_mono_ns(), std::memory_order_relaxed);
	if ((v = pend_take(pend_lookups))) {
		s.addValue(STAT_LOOKUPS, v);
		any = true;
	}
	for (int o = 0; o < IBKEA_OUTCOME_MAX; o++)
		if ((v = pend_take(pend_answer[o]))) {
			s.addValue(stat_answer(static_cast<enum ibkea_outcome>(o)), v);
			any = true;
		}
	for (int b = 0; b < DHCP_BOOT_MAX; b++)
		if ((v = pend_take(pend_boot[b]))) {
			s.addValue(stat_boot(static_cast<enum dhcp_boot>(b)), v);
			any = true;
		}
	if (time_flush(s))
		any = true;
	return any;
}

/* Counts one answer (boot only when applied), and flushes when the last
 * flush is STATS_FLUSH_NS old. */
void stats_count(enum ibkea_outcome o, enum dhcp_boot b, bool applied)
{
	pend_lookups.fetch_add(1, std::memory_order_relaxed);
	if ((unsigned)o < IBKEA_OUTCOME_MAX)
		pend_answer[o].fetch_add(1, std::memory_order_relaxed);
	if (applied && (unsigned)b < DHCP_BOOT_MAX)
		pend_boot[b].fetch_add(1, std::memory_order_relaxed);
	uint64_t now = now_mono_ns(), last = stats_flushed_ns.load(std::memory_order_relaxed);
	if (now - last >= STATS_FLUSH_NS &&
	    stats_flushed_ns.compare_exchange_strong(last, now, std::memory_order_relaxed))
		stats_flush();
}

/* Every statistic at 0, so that statistic-get-all lists them all. */
void stats_create()
{
	isc::stats::StatsMgr &s = isc::stats::StatsMgr::instance();
	s.setValue(STAT_LOOKUPS, static_cast<int64_t>(0));
	s.setValue(STAT_HOSTS, static_cast<int64_t>(0));
	s.setValue(STAT_READY, static_cast<int64_t>(0));
	last_hosts = 0;
	last_ready = 0;
	pend_lookups = 0;
	for (auto &c : pend_answer)
		c = 0;
	for (auto &c : pend_boot)
		c = 0;
	for (int o = 0; o < IBKEA_OUTCOME_MAX; o++)
		s.setValue(stat_answer(static_cast<enum ibkea_outcome>(o)),
			   static_cast<int64_t>(0));
	for (int b = 0; b < DHCP_BOOT_MAX; b++)
		s.setValue(stat_boot(static_cast<enum dhcp_boot>(b)), static_cast<int64_t>(0));
	for (auto &c : pend_time)
		c = 0;
	pend_time_ns = 0;
	time_sum_ns_left = 0;
	for (unsigned i = 0; i <= TIME_BUCKETS; i++)
		s.setValue(stat_time(i), static_cast<int64_t>(0));
}

/* Unloaded, the hook leaves no statistics behind. */
void stats_remove()
{
	isc::stats::StatsMgr &s = isc::stats::StatsMgr::instance();
	s.del(STAT_LOOKUPS);
	s.del(STAT_HOSTS);
	s.del(STAT_READY);
	for (int o = 0; o < IBKEA_OUTCOME_MAX; o++)
		s.del(stat_answer(static_cast<enum ibkea_outcome>(o)));
	for (int b = 0; b < DHCP_BOOT_MAX; b++)
		s.del(stat_boot(static_cast<enum dhcp_boot>(b)));
	for (unsigned i = 0; i <= TIME_BUCKETS; i++)
		s.del(stat_time(i));
}

/* ---- the host data source ---- */

/* The Kea subnet id's subnet holds ip. */
bool subnet_has(SubnetID id, uint32_t ip)
{
	isc::dhcp::ConstSubnet4Ptr s =
		isc::dhcp::CfgMgr::instance().getCurrentCfg()->getCfgSubnets4()->getBySubnetId(id);
	return s && s->inRange(IOAddress(ip));
}

/* The id of a Kea subnet that holds ip, or SUBNET_ID_UNUSED. */
SubnetID subnet_of(uint32_t ip)
{
	const isc::dhcp::Subnet4Collection *all =
		isc::dhcp::CfgMgr::instance().getCurrentCfg()->getCfgSubnets4()->getAll();
	IOAddress a(ip);

	if (!all)
		return isc::dhcp::SUBNET_ID_UNUSED;
	for (const auto &s : *all) {
		if (s->inRange(a))
			return s->getID();
	}
	return isc::dhcp::SUBNET_ID_UNUSED;
}

/* A reservation by hardware address in Kea's terms. */
ConstHostPtr host_of(const uint8_t mac[6], uint32_t ip, SubnetID id)
{
	return HostPtr(new Host(mac, 6, Host::IDENT_HWADDR, id, isc::dhcp::SUBNET_ID_UNUSED,
				IOAddress(ip)));
}

/* Kea's host data source "ironbell": the core's reservation table, read
 * only. A MAC's Host exists in the Kea subnet that holds its Hardware's
 * address, and in no other. */
class IronbellHostSource : public isc::dhcp::BaseHostDataSource {
public:
	explicit IronbellHostSource(struct ibkea *k) : k_(k)
	{
	}

	ConstHostCollection getAll(const Host::IdentifierType &type, const uint8_t *id,
				   const size_t len) const override
	{
		InHook in;
		ConstHostCollection hosts;
		CacheEntry e;

		if (mac_entry(type, id, len, &e) && e.host)
			hosts.push_back(e.host);
		return hosts;
	}

	ConstHostPtr get4(const SubnetID &subnet_id, const Host::IdentifierType &type,
			  const uint8_t *id, const size_t len) const override
	{
		InHook in;
		CacheEntry e;

		if (!mac_entry(type, id, len, &e))
			return ConstHostPtr();
		return in_subnet(e, subnet_id);
	}

	ConstHostPtr get4(const SubnetID &subnet_id, const IOAddress &address) const override
	{
		InHook in;
		CacheEntry e;

		if (!ip_entry(address, &e))
			return ConstHostPtr();
		return in_subnet(e, subnet_id);
	}

	ConstHostCollection getAll4(const SubnetID &subnet_id,
				    const IOAddress &address) const override
	{
		InHook in;
		ConstHostCollection hosts;
		ConstHostPtr h = get4(subnet_id, address);

		if (h)
			hosts.push_back(h);
		return hosts;
	}

	ConstHostCollection getAll4(const IOAddress &address) const override
	{
		InHook in;
		ConstHostCollection hosts;
		CacheEntry e;

		if (ip_entry(address, &e) && e.host)
			hosts.push_back(e.host);
		return hosts;
	}

	/* Listing the table by subnet or by page is left out: the
	 * allocation engine never asks for it, and ironbell's own tools
	 * list its Hardware. */
	ConstHostCollection getAll4(const SubnetID &) const override
	{
		return ConstHostCollection();
	}
	ConstHostCollection getAll6(const SubnetID &) const override
	{
		return ConstHostCollection();
	}
	ConstHostCollection getAllbyHostname(const std::string &) const override
	{
		return ConstHostCollection();
	}
	ConstHostCollection getAllbyHostname4(const std::string &, const SubnetID &) const override
	{
		return ConstHostCollection();
	}
	ConstHostCollection getAllbyHostname6(const std::string &, const SubnetID &) const override
	{
		return ConstHostCollection();
	}
	ConstHostCollection getPage4(const SubnetID &, size_t &, uint64_t,
				     const HostPageSize &) const override
	{
		return ConstHostCollection();
	}
	ConstHostCollection getPage6(const SubnetID &, size_t &, uint64_t,
				     const HostPageSize &) const override
	{
		return ConstHostCollection();
	}
	ConstHostCollection getPage4(size_t &, uint64_t, const HostPageSize &) const override
	{
		return ConstHostCollection();
	}
	ConstHostCollection getPage6(size_t &, uint64_t, const HostPageSize &) const override
	{
		return ConstHostCollection();
	}
	ConstHostPtr get6(const SubnetID &, const Host::IdentifierType &, const uint8_t *,
			  const size_t) const override
	{
		return ConstHostPtr();
	}
	ConstHostPtr get6(const IOAddress &, const uint8_t) const override
	{
		return ConstHostPtr();
	}
	ConstHostPtr get6(const SubnetID &, const IOAddress &) const override
	{
		return ConstHostPtr();
	}
	ConstHostCollection getAll6(const SubnetID &, const IOAddress &) const override
	{
		return ConstHostCollection();
	}

	/* Read only: the reservations are ironbell's Hardware. Kea's host
	 * manager adds a host to every source in turn (host_cmds'
	 * reservation-add): beside another source that takes it, this one
	 * lets it pass; alone, it says why nothing was stored. */
	void add(const HostPtr &) override
	{
		for (const auto &s : isc::dhcp::HostMgr::instance().getHostDataSourceList()) {
			if (s->getType() != HOST_SOURCE_TYPE)
				return;
		}
		isc_throw(isc::NotImplemented, "the ironbell host source is read-only: its "
					       "reservations are ironbell's Hardware");
	}
	bool del(const SubnetID &, const IOAddress &) override
	{
		return false;
	}
	bool del4(const SubnetID &, const Host::IdentifierType &, const uint8_t *,
		  const size_t) override
	{
		return false;
	}
	bool del6(const SubnetID &, const Host::IdentifierType &, const uint8_t *,
		  const size_t) override
	{
		return false;
	}

	std::string getType() const override
	{
		return HOST_SOURCE_TYPE;
	}

	/* At most one reservation per address, whichever Kea asks for. */
	bool setIPReservationsUnique(const bool) override
	{
		return true;
	}

private:
	/* Hosts already made, by MAC and by address. A Host costs Kea's
	 * allocator a dozen blocks, and its allocation engine asks for the
	 * same one several times in one exchange. An entry holds while the
	 * table's generation (ibkea_generation) is the one it was made at;
	 * the cache is emptied whole when it reaches HOST_CACHE_MAX entries.
	 * Each configuration makes a new source, so Kea's subnets, which the
	 * entries depend on, cannot change under one. MACs and addresses the
	 * table does not have are not kept: they cost a hash probe. */
	static constexpr size_t HOST_CACHE_MAX = 65536;
	static constexpr uint64_t KEY_MAC = 1ull << 62, KEY_IP = 1ull << 63;

	/* What Kea's questions need of a reservation: not its host name. */
	struct CacheEntry {
		uint64_t gen = 0;
		uint32_t ip = 0;
		uint8_t mac[6] = {};
		SubnetID subnet = isc::dhcp::SUBNET_ID_UNUSED; /* the Kea subnet holding ip */
		ConstHostPtr host;                             /* in that subnet, or none */
	};

	/* The Host for subnet_id: the cached one when it is the subnet that
	 * holds the address, a new one when Kea's subnets overlap and this
	 * one holds it too, else none. */
	ConstHostPtr in_subnet(const CacheEntry &e, const SubnetID &subnet_id) const
	{
		if (e.host && e.subnet == subnet_id)
			return e.host;
		if (subnet_has(subnet_id, e.ip))
			return host_of(e.mac, e.ip, subnet_id);
		return ConstHostPtr();
	}

	/* The entry of key, from the cache or made from the reservation that
	 * lookup finds: false when the table has none (with an address). */
	template <typename Lookup>
	bool entry(uint64_t key, Lookup lookup, CacheEntry *ret) const
	{
		uint64_t gen = ibkea_generation(k_);
		{
			std::lock_guard<std::mutex> g(cache_mu_);
			auto it = cache_.find(key);
			if (it != cache_.end() && it->second.gen == gen) {
				*ret = it->second;
				return true;
			}
		}
		struct ibkea_reservation r;
		CacheEntry e;
		if (!lookup(&r) || !r.ip)
			return false;
		e.gen = gen;
		e.ip = r.ip;
		memcpy(e.mac, r.mac, sizeof(e.mac));
		e.subnet = subnet_of(r.ip);
		if (e.subnet != isc::dhcp::SUBNET_ID_UNUSED)
			e.host = host_of(e.mac, e.ip, e.subnet);
		std::lock_guard<std::mutex> g(cache_mu_);
		if (cache_.size() >= HOST_CACHE_MAX)
			cache_.clear();
		cache_[key] = e;
		*ret = e;
		return true;
	}

	bool mac_entry(const Host::IdentifierType &type, const uint8_t *id, size_t len,
		       CacheEntry *ret) const
	{
		if (type != Host::IDENT_HWADDR || len != 6 || !id)
			return false;
		uint64_t key = KEY_MAC;
		for (size_t i = 0; i < 6; i++)
			key |= static_cast<uint64_t>(id[i]) << (8 * (5 - i));
		return entry(
			key,
			[this, id](struct ibkea_reservation *r) {
				return ibkea_by_mac(k_, id, r) == 0;
			},
			ret);
	}

	bool ip_entry(const IOAddress &address, CacheEntry *ret) const
	{
		if (!address.isV4())
			return false;
		uint32_t ip = address.toUint32();
		return entry(
			KEY_IP | ip,
			[this, ip](struct ibkea_reservation *r) { return ibkea_by_ip(k_, ip, r) == 0; },
			ret);
	}

	struct ibkea *k_;
	mutable std::mutex cache_mu_;
	mutable std::unordered_map<uint64_t, CacheEntry> cache_;
};

isc::dhcp::HostDataSourcePtr host_source_factory(const isc::db::DatabaseConnection::ParameterMap &)
{
	if (!ib_core)
		isc_throw(isc::Unexpected, "the ironbell hook is not loaded");
	return isc::dhcp::HostDataSourcePtr(new IronbellHostSource(ib_core));
}

/* ---- the answer ---- */

/* Options ironbell never changes in Kea's answer (ironbell-kea.h). */
bool option_is_keas(uint8_t code)
{
	switch (code) {
	case 0:
	case 255:
	case isc::dhcp::DHO_DHCP_MESSAGE_TYPE:
	case isc::dhcp::DHO_DHCP_SERVER_IDENTIFIER:
	case isc::dhcp::DHO_DHCP_CLIENT_IDENTIFIER:
	case isc::dhcp::DHO_DHCP_AGENT_OPTIONS: return true;
	default: return false;
	}
}

/* Option code of pkt, read in place: during a callout, Kea's getOption()
 * copies the option it returns (so that a callout cannot change one its
 * configuration shares), which is an allocation and a copy per read for
 * an option the hook only reads. */
isc::dhcp::OptionPtr option_peek(const isc::dhcp::Pkt4Ptr &pkt, uint16_t code)
{
	auto it = pkt->options_.find(code);
	return it == pkt->options_.end() ? isc::dhcp::OptionPtr() : it->second;
}

/* The 4 bytes at p, in network order, as a host-order number. */
uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Option o's data as one IPv4 address (host order) when it holds exactly
 * that and is of a kind read without packing it: an Option4AddrLst (Kea's
 * own server identifier) or a plain Option. Not an OptionCustom (a
 * configured server identifier): its readAddress() goes through the
 * address's text, and costs six times packing it. The kinds are told by
 * their exact type, a comparison where a dynamic_cast walks the class
 * tree. */
bool option_read_ip(const isc::dhcp::Option &o, uint32_t *ret)
{
	if (!o.getOptions().empty())
		return false;
	if (typeid(o) == typeid(isc::dhcp::Option4AddrLst)) {
		auto a = static_cast<const isc::dhcp::Option4AddrLst &>(o).getAddresses();
		if (a.size() != 1 || !a[0].isV4())
			return false;
		*ret = a[0].toUint32();
		return true;
	}
	if (typeid(o) == typeid(isc::dhcp::Option)) {
		const isc::dhcp::OptionBuffer &b = o.getData();
		if (b.size() != 4)
			return false;
		*ret = be32(b.data());
		return true;
	}
	return false;
}

/* Option code of pkt as an IPv4 address, 0 when absent or not 4 bytes.
 * Read in place when option_read_ip() can; anything else is packed to be
 * read. */
uint32_t option_u32(const isc::dhcp::Pkt4Ptr &pkt, uint16_t code)
{
	isc::dhcp::OptionPtr o = option_peek(pkt, code);
	uint32_t ip;

	if (!o)
		return 0;
	if (option_read_ip(*o, &ip))
		return ip;
	std::vector<uint8_t> b = o->toBinary(false);
	if (b.size() != 4)
		return 0;
	return be32(b.data());
}

/* Whether o, an option of Kea's response, already holds exactly data (len
 * bytes): then it packs to the same bytes as the option ironbell would
 * put in its place, and is left there. Read without packing for the kinds
 * read cheaply: Kea's lease times and subnet mask (OptionUint32), an
 * address list of one (Option4AddrLst), a plain Option; for any other
 * kind, false (it is replaced, which costs less than reading it). */
bool option_same(const isc::dhcp::Option &o, const uint8_t *data, size_t len)
{
	if (!o.getOptions().empty())
		return false;
	if (typeid(o) == typeid(isc::dhcp::OptionUint32)) {
		uint32_t v = static_cast<const isc::dhcp::OptionUint32 &>(o).getValue();
		return len == 4 && be32(data) == v;
	}
	if (typeid(o) == typeid(isc::dhcp::Option)) {
		const isc::dhcp::OptionBuffer &b = o.getData();
		return b.size() == len && (len == 0 || memcmp(b.data(), data, len) == 0);
	}
	uint32_t ip;
	return len == 4 && option_read_ip(o, &ip) && be32(data) == ip;
}

/* Options made once: an applied answer sets the same few options (a
 * machine's router, name servers, host name, lease times) packet after
 * packet, and an Option made for each costs more than the rest of the
 * answer. Made Options are immutable and shared, as Kea shares those of
 * its own configuration between responses: a table of OPT_CACHE_SLOTS
 * by a hash of the code and the bytes, each slot holding the last one
 * made there (the bytes compared whole on a hit), under one of
 * OPT_CACHE_LOCKS locks. Emptied at unload, while Kea's libraries that
 * free them are still there. */
constexpr size_t OPT_CACHE_SLOTS = 4096;
constexpr size_t OPT_CACHE_LOCKS = 64;

struct OptSlot {
	uint64_t hash = 0;
	isc::dhcp::OptionPtr opt;
};

OptSlot opt_cache[OPT_CACHE_SLOTS];
std::mutex opt_cache_mu[OPT_CACHE_LOCKS];

uint64_t opt_hash(uint8_t code, const uint8_t *data, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ code;
	for (size_t i = 0; i < len; i++)
		h = (h ^ data[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

isc::dhcp::OptionPtr option_made(uint8_t code, const uint8_t *data, size_t len)
{
	uint64_t h = opt_hash(code, data, len);
	size_t i = h % OPT_CACHE_SLOTS;
	std::mutex &mu = opt_cache_mu[i % OPT_CACHE_LOCKS];
	{
		std::lock_guard<std::mutex> g(mu);
		const OptSlot &sl = opt_cache[i];
		if (sl.opt && sl.hash == h && sl.opt->getType() == code) {
			const isc::dhcp::OptionBuffer &b = sl.opt->getData();
			if (b.size() == len && (len == 0 || memcmp(b.data(), data, len) == 0))
				return sl.opt;
		}
	}
	isc::dhcp::OptionPtr o(new isc::dhcp::Option(isc::dhcp::Option::V4, code,
						     isc::dhcp::OptionBuffer(data, data + len)));
	std::lock_guard<std::mutex> g(mu);
	opt_cache[i].hash = h;
	opt_cache[i].opt = o;
	return o;
}

void option_cache_clear()
{
	for (size_t i = 0; i < OPT_CACHE_SLOTS; i++) {
		std::lock_guard<std::mutex> g(opt_cache_mu[i % OPT_CACHE_LOCKS]);
		opt_cache[i].opt.reset();
	}
}

/* Removes every instance of code from pkt. */
void option_remove(const isc::dhcp::Pkt4Ptr &pkt, uint8_t code)
{
	pkt->options_.erase(code);
}

/* Sets option code of pkt to len bytes: instances of at most 255 bytes,
 * in order, which the client joins again (RFC 3396 §5); Kea packs each
 * as it is. Where Kea's response has one instance and one is needed,
 * the option is swapped in its node of the packet's map: the usual case
 * (Kea's router, name servers, lease times), without a node freed and
 * another allocated and balanced in; and where that instance already
 * holds the same bytes (option_same: Kea's lease times once lease4_select
 * gave the lease the Hardware's, a router of one address), it stays. */
void option_set(const isc::dhcp::Pkt4Ptr &pkt, uint8_t code, const uint8_t *data, size_t len)
{
	if (len <= 255) {
		auto r = pkt->options_.equal_range(code);
		if (r.first != r.second && std::next(r.first) == r.second) {
			if (!r.first->second || !option_same(*r.first->second, data, len))
				r.first->second = option_made(code, data, len);
			return;
		}
	}
	option_remove(pkt, code);
	size_t off = 0;
	do {
		size_t n = len - off > 255 ? 255 : len - off;
		/* Pkt::addOption: Pkt4's own refuses a second instance. */
		pkt->isc::dhcp::Pkt::addOption(option_made(code, data + off, n));
		off += n;
	} while (off < len);
}

/* Copies an applied answer into Kea's response. */
void answer_apply(const isc::dhcp::Pkt4Ptr &resp, const struct ibkea_answer &a)
{
	resp->setSiaddr(IOAddress(a.siaddr));
	resp->setSname(a.sname, sizeof(a.sname));
	resp->setFile(a.file, sizeof(a.file));
	for (size_t i = 0; i < a.ndel && i < IBKEA_MAX_OPTIONS; i++) {
		if (!option_is_keas(a.del[i]))
			option_remove(resp, a.del[i]);
	}
	for (size_t i = 0; i < a.nset && i < IBKEA_MAX_OPTIONS; i++) {
		const struct ibkea_option &o = a.set[i];
		if (option_is_keas(o.code) || (o.len && !o.data))
			continue;
		option_set(resp, o.code, o.data, o.len);
	}
}

/* Answers that Kea sends otherwise than ironbelld would (a reserved
 * address Kea could not give, a subnet of Kea's that does not hold the
 * reservation) are logged at warn: at most MISMATCH_LOG_BURST lines, then
 * MISMATCH_LOG_RATE a second, since a client can repeat them at will. */
#define MISMATCH_LOG_BURST 10
#define MISMATCH_LOG_RATE 1

std::mutex ib_warn_mu;
struct ratelimit ib_warn_rl; /* under ib_warn_mu */

/* One line per answer of a MAC the table holds: at debug when applied or
 * left to Kea by the policy, at warn (rate-limited) on a mismatch or an
 * error. Built only when it will be written. */
void answer_log(const struct ibkea_answer &a, const struct ibkea_kea_reply &kea)
{
	bool warn = a.outcome == IBKEA_MISMATCH || a.outcome == IBKEA_ERROR;
	char mac[MAC_STR_SIZE], kip[16], ours[16], line[256];

	if (a.outcome == IBKEA_NOT_OURS || a.outcome == IBKEA_MALFORMED)
		return;
	if (!warn && !ib_logger.isDebugEnabled(isc::log::DBGLVL_TRACE_BASIC))
		return;
	if (warn) {
		std::lock_guard<std::mutex> g(ib_warn_mu);
		if (!ratelimit_log(&ib_warn_rl, now_mono_ns(), MISMATCH_LOG_RATE, MISMATCH_LOG_BURST,
				   "kea"))
			return;
	}
	mac_format(a.mac, mac);
	dhcp_ip_str(kea.yiaddr, kip);
	if (a.outcome == IBKEA_MISMATCH) {
		/* The policy's reply always has its option 53 (dhcp_reply_init). */
		const struct dhcp_options &o = a.reply_.opts;
		uint8_t t = o.present[DHCP_OPT_MESSAGE_TYPE / 8] & (1u << (DHCP_OPT_MESSAGE_TYPE % 8))
				    ? o.data[o.off[DHCP_OPT_MESSAGE_TYPE]]
				    : 0;
		dhcp_ip_str(a.reply_.yiaddr, ours);
		snprintf(line, sizeof(line),
			 "%s: Kea answers %s %s, ironbelld would answer %s %s (%s); Kea's answer "
			 "goes out untouched",
			 mac, dhcp_msg_type_name(kea.type), kip,
			 dhcp_msg_type_name(static_cast<enum dhcp_msg_type>(t)), ours,
			 a.why ? a.why : "");
	} else {
		snprintf(line, sizeof(line), "%s: %s of %s %s (%s), boot %s", mac,
			 dhcp_msg_type_name(kea.type), kip, ibkea_outcome_name(a.outcome),
			 a.why ? a.why : "", dhcp_boot_name(a.boot));
	}
	ib_log_line(warn ? IBKEA_LOG_WARN : IBKEA_LOG_DEBUG, line);
}

/* One answer per packet thread: a few KiB, not for the stack. Reached
 * through the pointer tl_answer_get() returns: in a shared object each
 * reach of a thread_local is a call to __tls_get_addr, which the compiler
 * made again for every use of a reference bound to it (24 per answer). */
thread_local struct ibkea_answer tl_answer;

__attribute__((noinline)) struct ibkea_answer *tl_answer_get()
{
	return &tl_answer;
}

void answer_response(const isc::dhcp::Pkt4Ptr &query, const isc::dhcp::Pkt4Ptr &resp)
{
	struct ibkea *k = ib_core;

	if (!k || !query || !resp || !option_peek(resp, isc::dhcp::DHO_DHCP_MESSAGE_TYPE))
		return;
	uint8_t type = resp->getType();
	if (type != isc::dhcp::DHCPOFFER && type != isc::dhcp::DHCPACK)
		return;
	if (query->data_.empty())
		return;

	struct ibkea_kea_reply kea = {};
	kea.type = static_cast<enum dhcp_msg_type>(type);
	kea.yiaddr = resp->getYiaddr().isV4() ? resp->getYiaddr().toUint32() : 0;
	kea.server_id = option_u32(resp, isc::dhcp::DHO_DHCP_SERVER_IDENTIFIER);

	struct ibkea_answer &a = *tl_answer_get();
	ibkea_answer_request(k, query->data_.data(), query->data_.size(), &kea, &a);

	stats_count(a.outcome, a.boot, a.outcome == IBKEA_APPLIED);
	answer_log(a, kea);
	if (a.outcome == IBKEA_APPLIED)
		answer_apply(resp, a);
}

/* Frees what load made, in the reverse order. */
void hook_teardown()
{
	try {
		/* delBackend needs the host manager made: Kea unloads a library
		 * whose load failed before it makes one (instance() does). */
		isc::dhcp::HostMgr::instance();
		isc::dhcp::HostMgr::delBackend(HOST_SOURCE_TYPE);
		isc::dhcp::HostDataSourceFactory::deregisterFactory(HOST_SOURCE_TYPE, true);
		stats_remove();
		option_cache_clear();
	} catch (const std::exception &e) {
		ib_error(std::string("unload: ") + e.what());
	}
	log_set_sink(NULL);
	ibkea_free(ib_core);
	ib_core = NULL;
}

} /* namespace */

/* What kea-dhcp4 looks up by name: visible (the rest of the library is
 * compiled hidden), and listed in dhcp/kea/hook.map. */
#define HOOK_EXPORT __attribute__((visibility("default")))

extern "C" {

/* The hooks API the library was built against (Kea refuses another). */
HOOK_EXPORT int version()
{
	return KEA_HOOKS_VERSION;
}

/* Kea may run the callouts on several packet threads at once. */
HOOK_EXPORT int multi_threading_compatible()
{
	return 1;
}

/* Checks the parameters and starts the core: 0, or 1 with the reason
 * logged (Kea then refuses the configuration). */
HOOK_EXPORT int load(LibraryHandle &handle)
{
	char err[512] = "";

	try {
		struct ibkea_params params;
		isc::data::ConstElementPtr p = handle.getParameters();
		std::string json = p ? p->str() : std::string();
		if (ibkea_params_parse(json.empty() ? NULL : json.c_str(), json.size(), &params,
				       err, sizeof(err)) < 0) {
			ib_error(std::string("the hook's parameters are refused: ") + err);
			return 1;
		}
		if (ib_core) /* a load without its unload: never from Kea */
			hook_teardown();
		log_set_level(ib_logger.isDebugEnabled() ? LOG_LVL_DEBUG : LOG_LVL_INFO);
		log_set_sink(ib_common_log);
		if (ibkea_new(&params, ib_core_log, &ib_core, err, sizeof(err)) < 0) {
			ib_error(std::string("cannot start: ") + err);
			log_set_sink(NULL);
			ib_core = NULL;
			return 1;
		}
		isc::dhcp::HostDataSourceFactory::deregisterFactory(HOST_SOURCE_TYPE, true);
		isc::dhcp::HostDataSourceFactory::registerFactory(HOST_SOURCE_TYPE,
								  host_source_factory, true);
		stats_create();
	} catch (const std::exception &e) {
		ib_error(std::string("load: ") + e.what());
		hook_teardown();
		return 1;
	} catch (...) {
		ib_error("load: an unknown exception");
		hook_teardown();
		return 1;
	}
	return 0;
}

/* Takes the host source out of Kea, stops and frees the core. Always 0. */
HOOK_EXPORT int unload()
{
	hook_teardown();
	return 0;
}

/* Kea is configured (its host manager made anew): the source goes in. */
HOOK_EXPORT int dhcp4_srv_configured(CalloutHandle &handle)
{
	try {
		isc::dhcp::HostMgr::delBackend(HOST_SOURCE_TYPE);
		isc::dhcp::HostMgr::addBackend(std::string("type=") + HOST_SOURCE_TYPE);
		stats_refresh_gauges(true);
		ibkea_relog(ib_core);
	} catch (const std::exception &e) {
		ib_error(std::string("cannot add the host source: ") + e.what());
		return 1;
	} catch (...) {
		ib_error("cannot add the host source: an unknown exception");
		return 1;
	}
	return 0;
}

/* The lease of a Hardware with a lease time gets it, when it is for the
 * reserved address. */
HOOK_EXPORT int lease4_select(CalloutHandle &handle)
{
	InHook in;
	try {
		isc::dhcp::Lease4Ptr lease;
		handle.getArgument(ARG_LEASE4, lease);
		struct ibkea *k = ib_core;
		if (k && lease && lease->hwaddr_ && lease->hwaddr_->hwaddr_.size() == 6) {
			uint32_t ip = lease->addr_.isV4() ? lease->addr_.toUint32() : 0;
			uint32_t t = ibkea_lease_time(k, lease->hwaddr_->hwaddr_.data(), ip);
			if (t)
				lease->valid_lft_ = t;
		}
		stats_refresh_gauges();
	} catch (const std::exception &e) {
		ib_error(std::string("lease4_select: ") + e.what());
	} catch (...) {
		ib_error("lease4_select: an unknown exception");
	}
	return 0;
}

/* Kea's OFFER or ACK, about to leave: ironbell's boot answer goes in. */
HOOK_EXPORT int pkt4_send(CalloutHandle &handle)
{
	bool sent = false;
	{
		InHook in;
		try {
			if (handle.getStatus() != CalloutHandle::NEXT_STEP_DROP) {
				sent = true;
				isc::dhcp::Pkt4Ptr resp, query;
				handle.getArgument(ARG_RESPONSE4, resp);
				handle.getArgument(ARG_QUERY4, query);
				answer_response(query, resp);
				stats_refresh_gauges();
			}
		} catch (const std::exception &e) {
			ib_error(std::string("pkt4_send: ") + e.what());
		} catch (...) {
			ib_error("pkt4_send: an unknown exception");
		}
	}
	time_count(sent);
	return 0;
}

/* After each control command: the gauges for the next statistic-get. */
HOOK_EXPORT int command_processed(CalloutHandle &handle)
{
	try {
		/* The counters held back, and the gauges, are written now; a
		 * statistic-get or statistic-get-all that read Kea's
		 * statistics before they were is answered again, so that
		 * what a command reads is what the callouts counted. */
		stats_flush();
		stats_refresh_gauges(true);
		std::string name;
		handle.getArgument("name", name);
		if (name == "statistic-get" || name == "statistic-get-all") {
			isc::data::ConstElementPtr args;
			try {
				handle.getArgument("arguments", args);
			} catch (const isc::hooks::NoSuchArgument &) {
				/* none given */
			}
			handle.setArgument("response",
					   name == "statistic-get" ?
						   isc::stats::StatsMgr::statisticGetHandler(name, args) :
						   isc::stats::StatsMgr::statisticGetAllHandler(name, args));
		}
	} catch (const std::exception &e) {
		ib_error(std::string("command_processed: ") + e.what());
	} catch (...) {
		ib_error("command_processed: an unknown exception");
	}
	return 0;
}

} /* extern "C" */
