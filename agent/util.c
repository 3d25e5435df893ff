/* util — the agent's pure helpers: its default settings, durations as
 * tink-agent writes them, and the detection of the actions that take the
 * machine down.
 *
 * DESIGN: Tinkerbell's kexec and reboot actions never report SUCCESS: the
 * machine is gone before tink-agent could, so such workflows end in
 * TIMEOUT. ironbell-agent reports SUCCESS first, then runs them. Which
 * actions those are is a list (--down), matched here without I/O so that
 * the unit tests can hold every case. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent.h"

void agent_settings_init(struct agent_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->runtime = AGENT_RUNTIME_DOCKER;
	snprintf(s->docker_socket, sizeof(s->docker_socket), "%s", "/var/run/docker.sock");
	s->max_backoff_ms = 5000;
	s->heartbeat_ms = 10000;
	s->privileged = true;
	snprintf(s->down, sizeof(s->down), "%s", AGENT_DOWN_DEFAULT);
}

/* Go's fmtFrac: the fraction of v below 10^prec, trailing zeros dropped,
 * written backwards before *w. */
static void go_frac(char *buf, size_t *w, uint64_t *v, int prec)
{
	bool print = false;
	for (int i = 0; i < prec; i++) {
		unsigned digit = (unsigned)(*v % 10);
		print = print || digit != 0;
		if (print)
			buf[--*w] = (char)('0' + digit);
		*v /= 10;
	}
	if (print)
		buf[--*w] = '.';
}

static void go_int(char *buf, size_t *w, uint64_t v)
{
	if (v == 0) {
		buf[--*w] = '0';
		return;
	}
	while (v > 0) {
		buf[--*w] = (char)('0' + v % 10);
		v /= 10;
	}
}

char *agent_duration_format(uint64_t ns, char out[AGENT_DURATION_MAX])
{
	char buf[AGENT_DURATION_MAX];
	size_t w = sizeof(buf);
	buf[--w] = '\0';
	if (ns < 1000000000ull) {
		/* Go: "0s" for zero, else ns, µs or ms with a fraction. */
		int prec;
		const char *unit;
		if (ns == 0) {
			memcpy(out, "0s", 3);
			return out;
		} else if (ns < 1000ull) {
			prec = 0, unit = "ns";
		} else if (ns < 1000000ull) {
			prec = 3, unit = "\xc2\xb5s";
		} else {
			prec = 6, unit = "ms";
		}
		size_t ul = strlen(unit);
		w -= ul;
		memcpy(buf + w, unit, ul);
		go_frac(buf, &w, &ns, prec);
		go_int(buf, &w, ns);
	} else {
		buf[--w] = 's';
		go_frac(buf, &w, &ns, 9);
		go_int(buf, &w, ns % 60);
		ns /= 60;
		if (ns > 0) {
			buf[--w] = 'm';
			go_int(buf, &w, ns % 60);
			ns /= 60;
			if (ns > 0) {
				buf[--w] = 'h';
				go_int(buf, &w, ns);
			}
		}
	}
	memcpy(out, buf + w, sizeof(buf) - w);
	return out;
}

/* The image's repository path without its tag or digest. */
static size_t image_name_len(const char *image)
{
	size_t n = strcspn(image, "@");
	const char *slash = memrchr(image, '/', n);
	const char *colon =
		memrchr(slash ? slash : image, ':', n - (size_t)((slash ? slash : image) - image));
	return colon ? (size_t)(colon - image) : n;
}

static bool ends_with(const char *s, size_t n, const char *suf, size_t sn)
{
	return n >= sn && memcmp(s + n - sn, suf, sn) == 0;
}

/* Whether the words of entry (n bytes) are cmd's first words, command[0]
 * compared by its basename. */
static bool cmd_matches(const char *entry, size_t n, char *const *cmd, size_t ncmd)
{
	size_t i = 0;
	while (n > 0) {
		size_t wl = strcspn(entry, " ");
		if (wl > n)
			wl = n;
		if (i >= ncmd)
			return false;
		const char *word = cmd[i];
		if (i == 0 && strrchr(word, '/'))
			word = strrchr(word, '/') + 1;
		if (strlen(word) != wl || memcmp(word, entry, wl) != 0)
			return false;
		i++;
		entry += wl;
		n -= wl;
		while (n > 0 && *entry == ' ')
			entry++, n--;
	}
	return i > 0;
}

/* cmd split on blanks into words (for "sh -c 'kexec -e'"); at most max. */
static size_t split_words(char *s, char **words, size_t max)
{
	size_t n = 0;
	for (char *t = s; *t && n < max;) {
		while (*t == ' ' || *t == '\t' || *t == '\'' || *t == '"')
			*t++ = '\0';
		if (!*t)
			break;
		words[n++] = t;
		t += strcspn(t, " \t'\";&|");
		if (*t == ';' || *t == '&' || *t == '|')
			break;
	}
	return n;
}

bool agent_is_down(const char *list, bool host, const char *image, char *const *cmd, size_t ncmd,
		   char *const *env, size_t nenv)
{
	size_t iname = image_name_len(image);
	char shbuf[512];
	char *shw[16];
	size_t nsh = 0;
	if (ends_with(image, iname, "/waitdaemon", 11)) {
		for (size_t i = 0; i < nenv; i++)
			if (strncmp(env[i], "IMAGE=", 6) == 0)
				return agent_is_down(list, host, env[i] + 6, cmd, ncmd, NULL, 0);
	}
	/* sh -c "CMD": the words of CMD's first command. */
	if (ncmd >= 3 && strcmp(cmd[1], "-c") == 0) {
		const char *sh = strrchr(cmd[0], '/') ? strrchr(cmd[0], '/') + 1 : cmd[0];
		if (strcmp(sh, "sh") == 0 || strcmp(sh, "bash") == 0) {
			snprintf(shbuf, sizeof(shbuf), "%s", cmd[2]);
			nsh = split_words(shbuf, shw, sizeof(shw) / sizeof(shw[0]));
		}
	}
	for (const char *e = list; *e;) {
		size_t n = strcspn(e, ",");
		if (n > 0 && e[0] == '/') {
			if (ends_with(image, iname, e, n))
				return true;
		} else if (n > 0 && host) {
			/* A command is judged only for the host runtime: in an
			 * image, "reboot" may be anything. */
			if (cmd_matches(e, n, cmd, ncmd) || cmd_matches(e, n, shw, nsh))
				return true;
		}
		e += n;
		if (*e == ',')
			e++;
	}
	return false;
}
