/* bench_store — how fast the store takes a fleet and answers DHCP lookups.
 *
 * DESIGN: applies N realistic Hardware objects (one interface with MAC, IP,
 * netmask, gateway, hostname, lease time, allowPXE, and an instance
 * block with a UUID-shaped id) through store_write(), B per atomic APPLY
 * request, and reports objects/s; applies them all again (every one
 * unchanged) to show the no-op path; then looks up N random MACs through
 * one reader and reports p50/p99/max in microseconds; last the process's
 * peak RSS. It prints figures and asserts nothing about time (the bench
 * target, not make check, runs it).
 *
 * Usage: bench_store [-n objects] [-b batch] [-d dir] [-k]
 *   -d  where to make the temporary database directory ($TMPDIR or /tmp)
 *   -k  keep the database afterwards
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/common.h"
#include "store/store.h"

#define BENCH_MAX_OBJECTS 10000000u
#define BENCH_MAX_BATCH 100000u

static json_t *make_hw(uint32_t i)
{
	char name[32], mac[32], ip[32], uuid[40];
	uint32_t a = i / 250;
	snprintf(name, sizeof(name), "node-%06u", i);
	snprintf(mac, sizeof(mac), "02:00:%02x:%02x:%02x:%02x", (i >> 24) & 255, (i >> 16) & 255,
		 (i >> 8) & 255, i & 255);
	snprintf(ip, sizeof(ip), "10.%u.%u.%u", a / 250 + 1, a % 250 + 1, i % 250 + 1);
	snprintf(uuid, sizeof(uuid), "%08x-0000-4000-8000-%012x", i, i * 7u);
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}},"
			 " s:{s:[{s:{s:s, s:{s:s, s:s, s:s}, s:s, s:i, s:s, s:b},"
			 " s:{s:b, s:b}}],"
			 " s:{s:{s:s, s:s, s:b, s:{s:s, s:s}}}}}",
			 "apiVersion", "tinkerbell.org/v1alpha1", "kind", "Hardware", "metadata",
			 "name", name, "namespace", "default", "labels", "rack", "r1", "spec",
			 "interfaces", "dhcp", "mac", mac, "ip", "address", ip, "netmask",
			 "255.255.0.0", "gateway", "10.1.1.254", "hostname", name, "lease_time",
			 86400, "arch", "x86_64", "uefi", 1, "netboot", "allowPXE", 1,
			 "allowWorkflow", 1, "metadata", "instance", "id", uuid, "hostname", name,
			 "allow_pxe", 1, "operating_system", "slug", "ubuntu_22_04", "distro",
			 "ubuntu");
}

/* Applies n objects, batch per atomic request; returns seconds or < 0. */
static double apply_all(struct store *s, uint32_t n, uint32_t batch, enum store_result want,
			size_t *ret_want)
{
	struct store_op *ops = calloc(batch, sizeof(*ops));
	uint64_t t0 = now_mono_ns();
	double secs = -1;
	*ret_want = 0;
	if (!ops)
		return -1;
	for (uint32_t base = 0; base < n; base += batch) {
		uint32_t m = n - base < batch ? n - base : batch;
		for (uint32_t j = 0; j < m; j++)
			ops[j] = (struct store_op){ .type = STORE_OP_APPLY,
						    .kind = STORE_KIND_HARDWARE,
						    .body = make_hw(base + j) };
		int e = store_write(s, ops, m, true);
		if (e < 0)
			fprintf(stderr, "bench_store: apply: %s\n", store_op_message(&ops[0]));
		for (uint32_t j = 0; j < m; j++) {
			if (ops[j].result == want)
				(*ret_want)++;
			json_decref(ops[j].body);
			store_op_clear(&ops[j]);
		}
		if (e < 0)
			goto out;
	}
	secs = (double)(now_mono_ns() - t0) / 1e9;
out:
	free(ops);
	return secs;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Looks up n random MACs, decoded (store_hardware_by_mac: index, row and
 * jansson decode) or raw (store_hardware_json_by_mac: index and row). */
static int lookups(struct store *s, uint32_t n, bool raw)
{
	struct store_reader *r = store_reader_new(s);
	struct buf text = BUF_INIT(1 << 20);
	uint64_t *ns = calloc(n, sizeof(*ns));
	uint64_t seed = 0x9e3779b97f4a7c15u;
	int e = -ENOMEM;
	if (!r || !ns)
		goto out;
	for (uint32_t k = 0; k < n; k++) {
		char mac[32];
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		uint32_t i = (uint32_t)(seed % n);
		snprintf(mac, sizeof(mac), "02:00:%02x:%02x:%02x:%02x", (i >> 24) & 255,
			 (i >> 16) & 255, (i >> 8) & 255, i & 255);
		json_t *o = NULL;
		buf_reset(&text);
		uint64_t t0 = now_mono_ns();
		e = raw ? store_hardware_json_by_mac(r, mac, &text) : store_hardware_by_mac(r, mac, &o);
		ns[k] = now_mono_ns() - t0;
		json_decref(o);
		if (e == 0 && raw && !strstr(text.data, mac))
			e = -EIO; /* the row must be the machine asked for */
		if (e < 0) {
			fprintf(stderr, "bench_store: lookup %s: %s\n", mac, strerror(-e));
			goto out;
		}
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	printf("lookup by MAC (%s): %u random lookups, p50 %.1f us, p99 %.1f us, max %.1f us\n",
	       raw ? "index + row, JSON text" : "index + row + jansson decode", n,
	       (double)ns[n / 2] / 1e3, (double)ns[(size_t)n * 99 / 100] / 1e3,
	       (double)ns[n - 1] / 1e3);
	e = 0;
out:
	buf_free(&text);
	free(ns);
	store_reader_free(r);
	return e;
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char p[1400];
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	uint64_t n = 100000, batch = 1000;
	const char *base = getenv("TMPDIR");
	bool keep = false;
	char dir[1024], path[1100], err[256];
	struct store *s = NULL;
	int c, rc = 1;

	while ((c = getopt(argc, argv, "n:b:d:k")) != -1) {
		if (c == 'n' && num_parse_u64_str(optarg, BENCH_MAX_OBJECTS, &n) == 0 && n > 0)
			continue;
		if (c == 'b' && num_parse_u64_str(optarg, BENCH_MAX_BATCH, &batch) == 0 &&
		    batch > 0)
			continue;
		if (c == 'd') {
			base = optarg;
			continue;
		}
		if (c == 'k') {
			keep = true;
			continue;
		}
		fprintf(stderr, "usage: bench_store [-n objects] [-b batch] [-d dir] [-k]\n");
		return 2;
	}
	log_init(LOG_LVL_WARN, false);
	snprintf(dir, sizeof(dir), "%s/bench_store.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir)) {
		perror("bench_store: mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/ironbell.db", dir);
	if (store_open(path, NULL, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_store: %s\n", err);
		goto out;
	}
	size_t created, unchanged;
	double t = apply_all(s, (uint32_t)n, (uint32_t)batch, STORE_RESULT_CREATED, &created);
	if (t < 0)
		goto out;
	printf("apply: %zu Hardware created in %.2f s (%llu per atomic request): %.0f objects/s\n",
	       created, t, (unsigned long long)batch, (double)n / t);
	t = apply_all(s, (uint32_t)n, (uint32_t)batch, STORE_RESULT_UNCHANGED, &unchanged);
	if (t < 0)
		goto out;
	printf("re-apply: %zu unchanged in %.2f s: %.0f objects/s\n", unchanged, t, (double)n / t);
	if (lookups(s, (uint32_t)n, true) < 0 || lookups(s, (uint32_t)n, false) < 0)
		goto out;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS: %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
	rc = created == n && unchanged == n ? 0 : 1;
out:
	store_close(s);
	if (!keep)
		remove_dir(dir);
	else
		printf("database kept in %s\n", dir);
	return rc;
}
