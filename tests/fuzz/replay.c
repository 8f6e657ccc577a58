/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs a fuzz target's LLVMFuzzerTestOneInput on files, without libFuzzer: the seed corpus
 * and every input that once crashed are replayed by ctest in any build (gcc, sanitizers).
 * Usage: fuzz_X_replay FILE|DIR...; a directory means every regular file in it.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned replayed;

/* Reads the whole file into an exactly sized buffer, so overreads show under ASan. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	struct stat st;
	if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
		perror(path);
		fclose(f);
		return -1;
	}
	size_t size = (size_t)st.st_size;
	uint8_t *data = malloc(size ? size : 1);
	if (!data || fread(data, 1, size, f) != size) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	/* Named before the run: a failing input aborts the process. */
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	replayed++;
	return 0;
}

static int replay_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d) {
		perror(path);
		return -1;
	}
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue; /* ".", "..", and hidden files such as .gitkeep */
		char file[4096];
		struct stat st;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		if (stat(file, &st) == 0 && S_ISREG(st.st_mode))
			rc = replay_file(file);
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if ((S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i])) != 0)
			return 1;
	}
	printf("%s: %u inputs replayed without a failure\n", argv[0], replayed);
	return 0;
}
