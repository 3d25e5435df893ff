/* ibkea-probe — runs the Kea hook's core without Kea, for the integration
 * tests: `ibkea-probe 'PARAMS-JSON'` starts the core with those
 * parameters (ibkea_params_parse), logs to stderr, and answers commands
 * read from stdin, one line each on stdout:
 *
 *   ready                    "1" when the table holds a load, else "0"
 *   count                    the interfaces in the table
 *   mac aa:bb:cc:dd:ee:ff    "IP NETMASK HOSTNAME" ("-" for what is not
 *                            set) of its reservation, or "none"
 *   ip a.b.c.d               the MAC reserving that address, or "none"
 *   quit                     stops the core and exits 0 (so does EOF)
 *
 * Anything else gets "error: ...". Exits 2 when the parameters are
 * refused, 1 when the core does not start.
 */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "common/mac.h"
#include "dhcp/kea/ironbell-kea.h"

#define PROBE_LINE_MAX 256 /* bytes of a command */

static void log_stderr(enum ibkea_log_level level, const char *msg)
{
	static const char *const names[IBKEA_LOG_MAX] = { "error", "warn", "info", "debug" };
	fprintf(stderr, "ibkea-probe: %s: %s\n",
		(unsigned)level < IBKEA_LOG_MAX ? names[level] : "?", msg);
}

static void ip_text(uint32_t ip, char out[16])
{
	if (ip)
		dhcp_ip_str(ip, out);
	else
		snprintf(out, 16, "-");
}

static void answer_mac(struct ibkea *k, const char *arg)
{
	struct ibkea_reservation r;
	char ip[16], mask[16];
	uint8_t mac[6];

	if (mac_parse(arg, strlen(arg), MAC_COLON, mac) < 0) {
		printf("error: not a MAC\n");
		return;
	}
	if (ibkea_by_mac(k, mac, &r) < 0) {
		printf("none\n");
		return;
	}
	ip_text(r.ip, ip);
	ip_text(r.netmask, mask);
	printf("%s %s %s\n", ip, mask, r.hostname[0] ? r.hostname : "-");
}

static void answer_ip(struct ibkea *k, const char *arg)
{
	struct ibkea_reservation r;
	struct in_addr a;

	if (inet_pton(AF_INET, arg, &a) != 1) {
		printf("error: not an IPv4 address\n");
		return;
	}
	if (ibkea_by_ip(k, ntohl(a.s_addr), &r) < 0) {
		printf("none\n");
		return;
	}
	printf("%02x:%02x:%02x:%02x:%02x:%02x\n", r.mac[0], r.mac[1], r.mac[2], r.mac[3], r.mac[4],
	       r.mac[5]);
}

int main(int argc, char **argv)
{
	struct ibkea_params p;
	struct ibkea *k = NULL;
	char err[512], line[PROBE_LINE_MAX];

	if (argc != 2) {
		fprintf(stderr, "usage: ibkea-probe 'PARAMS-JSON'\n");
		return 2;
	}
	if (ibkea_params_parse(argv[1], strlen(argv[1]), &p, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibkea-probe: %s\n", err);
		return 2;
	}
	if (ibkea_new(&p, log_stderr, &k, err, sizeof(err)) < 0) {
		fprintf(stderr, "ibkea-probe: %s\n", err);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (strcmp(line, "quit") == 0)
			break;
		if (strcmp(line, "ready") == 0)
			printf("%d\n", ibkea_ready(k) ? 1 : 0);
		else if (strcmp(line, "count") == 0)
			printf("%zu\n", ibkea_count(k));
		else if (strncmp(line, "mac ", 4) == 0)
			answer_mac(k, line + 4);
		else if (strncmp(line, "ip ", 3) == 0)
			answer_ip(k, line + 3);
		else
			printf("error: unknown command\n");
		fflush(stdout);
	}
	ibkea_free(k);
	return 0;
}
