/* host — the host runtime: an action's command run directly, for an
 * initramfs with no container engine.
 *
 * DESIGN: the command is forked into its own process group with the
 * action's "K=V" environment added to the agent's (PATH included, so
 * that command[0] is found as execvp finds it), stdin from /dev/null and
 * stdout and stderr on one pipe, read line by line. The parent polls the
 * pipe about once a second, which is when it calls the tick hook (the
 * heartbeat) and checks the action's timeout; to stop the command it
 * sends SIGTERM to the whole group, waits AGENT_STOP_GRACE_MS, then
 * SIGKILL, so that a shell's children go too. The image, volumes and
 * namespaces mean nothing here and are ignored. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent-internal.h"

void agent_lines_feed(struct agent_lines *l, const char *p, size_t n, const struct agent_hooks *h)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			size_t len = l->n;
			if (len && l->buf[len - 1] == '\r')
				len--;
			h->line(h->arg, l->buf, len);
			l->n = 0;
			continue;
		}
		if (l->n == sizeof(l->buf)) {
			h->line(h->arg, l->buf, l->n);
			l->n = 0;
		}
		l->buf[l->n++] = p[i];
	}
}

void agent_lines_flush(struct agent_lines *l, const struct agent_hooks *h)
{
	if (l->n)
		h->line(h->arg, l->buf, l->n);
	l->n = 0;
}

/* The child: never returns. */
static void child(const struct agent_action *a, int out)
{
	int nul = open("/dev/null", O_RDONLY);
	setpgid(0, 0);
	if (nul < 0 || dup2(nul, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		_exit(126);
	for (size_t i = 0; i < a->nenv; i++)
		if (strchr(a->env[i], '=') && putenv(a->env[i]) != 0)
			_exit(126);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	/* protobuf-c's repeated strings have no NULL at their end. */
	char **argv = calloc(a->ncmd + 1, sizeof(*argv));
	if (!argv)
		_exit(126);
	memcpy(argv, a->command, a->ncmd * sizeof(*argv));
	execvp(argv[0], argv);
	fprintf(stderr, "ironbell-agent: %s: %s\n", a->command[0], strerror(errno));
	_exit(127);
}

/* Stops the group: SIGTERM, the grace, SIGKILL. Returns the status. */
static int stop_group(pid_t pid)
{
	int st = 0;
	kill(-pid, SIGTERM);
	for (int i = 0; i < AGENT_STOP_GRACE_MS / 100; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			kill(-pid, SIGKILL);
			return st;
		}
		usleep(100000);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

enum agent_outcome agent_host_run(const struct agent_settings *s, const struct agent_action *a,
				  const struct agent_hooks *h, char *why, size_t whycap)
{
	struct agent_lines lines = { .n = 0 };
	enum agent_outcome o = AGENT_OUT_FAILED;
	uint64_t deadline = a->timeout_s ? agent_mono_ms() + a->timeout_s * 1000 : UINT64_MAX;
	uint64_t next_tick = agent_mono_ms() + 1000;
	int p[2], st = 0;
	bool eof = false;
	if (a->ncmd == 0 || !a->command[0][0]) {
		snprintf(why, whycap,
			 "the action has no command (the host runtime runs the command)");
		return AGENT_OUT_FAILED;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(why, whycap, "pipe: %s", strerror(errno));
		return AGENT_OUT_FAILED;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, whycap, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return AGENT_OUT_FAILED;
	}
	if (pid == 0)
		child(a, p[1]);
	setpgid(pid, pid);
	close(p[1]);
	for (;;) {
		uint64_t now = agent_mono_ms();
		if (now >= deadline) {
			o = AGENT_OUT_TIMEOUT;
			snprintf(why, whycap, "timed out after %llus",
				 (unsigned long long)a->timeout_s);
			st = stop_group(pid);
			goto out;
		}
		if (now >= next_tick) {
			next_tick = now + 1000;
			if (h->tick(h->arg) || agent_stop) {
				o = AGENT_OUT_STOPPED;
				snprintf(why, whycap, "stopped");
				st = stop_group(pid);
				goto out;
			}
		}
		if (eof) {
			pid_t w = waitpid(pid, &st, WNOHANG);
			if (w == pid)
				break;
			usleep(100000);
			continue;
		}
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		uint64_t wait = next_tick - now;
		if (deadline - now < wait)
			wait = deadline - now;
		int r = poll(&pf, 1, (int)wait);
		/* The command may be gone while a child of its keeps the pipe. */
		if (r == 0 && waitpid(pid, &st, WNOHANG) == pid)
			break;
		if (r <= 0)
			continue;
		char buf[4096];
		ssize_t n = read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			eof = true;
		else
			agent_lines_feed(&lines, buf, (size_t)n, h);
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		o = AGENT_OUT_SUCCESS;
		snprintf(why, whycap, "exit status 0");
	} else if (WIFEXITED(st)) {
		snprintf(why, whycap, "exit status %d", WEXITSTATUS(st));
	} else {
		snprintf(why, whycap, "killed by signal %d", WTERMSIG(st));
	}
	/* The group's other processes do not outlive the action. */
	kill(-pid, SIGKILL);
out:
	agent_lines_flush(&lines, h);
	close(p[0]);
	return o;
}
