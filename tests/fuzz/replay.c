/* replay — runs every file named on the command line (or every file in the
 * directories named) through LLVMFuzzerTestOneInput, and prints one TAP
 * line per input. A crash or a sanitizer report fails the run; that is the
 * assertion: the parser must survive every seed. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

#define REPLAY_MAX_INPUT (16u << 20)

static int ntests;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("not ok %d - %s: %s\n", ++ntests, path, strerror(errno));
		return 1;
	}
	uint8_t *data = malloc(REPLAY_MAX_INPUT);
	size_t n = data ? fread(data, 1, REPLAY_MAX_INPUT, f) : 0;
	fclose(f);
	if (!data) {
		printf("not ok %d - %s: out of memory\n", ++ntests, path);
		return 1;
	}
	/* An exact-size copy, so ASan sees reads past the input. */
	uint8_t *exact = malloc(n ? n : 1);
	memcpy(exact, data, n);
	free(data);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	printf("ok %d - %s\n", ++ntests, strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	fflush(stdout);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	int fails = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			char *names[4096];
			size_t nn = 0;
			struct dirent *de;
			while (d && (de = readdir(d)) && nn < 4096)
				if (de->d_name[0] != '.')
					names[nn++] = strdup(de->d_name);
			if (d)
				closedir(d);
			qsort(names, nn, sizeof(char *), cmp);
			for (size_t j = 0; j < nn; j++) {
				char p[4096];
				snprintf(p, sizeof(p), "%s/%s", argv[i], names[j]);
				fails += run_file(p);
				free(names[j]);
			}
		} else {
			fails += run_file(argv[i]);
		}
	}
	if (ntests == 0) {
		printf("not ok 1 - no corpus files found\n");
		ntests = 1;
		fails = 1;
	}
	printf("1..%d\n", ntests);
	return fails ? 1 : 0;
}
