// noop-hook.cc: a Kea hook library whose callouts do nothing but read the
// arguments libdhcp_ironbell.so reads, for bench-kea's BENCH_KEA_NOOP: what
// Kea's hooks framework itself costs a packet for the same hook points
// (its callout handle, the arguments it sets, its timing of each callout),
// measured apart from the library's own work. Built by the benchmark
// (tests/bench/kea/run.sh), never installed. Each callout is compiled in
// when its macro is defined: NOOP_LEASE4_SELECT, NOOP_PKT4_SEND.
#include <dhcp/pkt4.h>
#include <dhcpsrv/lease.h>
#include <hooks/hooks.h>

using isc::hooks::CalloutHandle;
using isc::hooks::LibraryHandle;

extern "C" {

int version()
{
	return KEA_HOOKS_VERSION;
}

int multi_threading_compatible()
{
	return 1;
}

int load(LibraryHandle &)
{
	return 0;
}

int unload()
{
	return 0;
}

#ifdef NOOP_LEASE4_SELECT
int lease4_select(CalloutHandle &handle)
{
	isc::dhcp::Lease4Ptr lease;
	handle.getArgument("lease4", lease);
	return 0;
}
#endif

#ifdef NOOP_PKT4_SEND
int pkt4_send(CalloutHandle &handle)
{
	isc::dhcp::Pkt4Ptr resp, query;
	handle.getArgument("response4", resp);
	handle.getArgument("query4", query);
	return 0;
}
#endif
}
