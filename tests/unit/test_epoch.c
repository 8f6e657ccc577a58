/* SPDX-License-Identifier: BSD-3-Clause */
/* The file epoch store (lib/storage/epoch.c): DIR/epoch, and where a node keeps it,
 * <storage-path>/proposer-<id>. */
#include "check_main.h"
#include <ftw.h>
#include <paxos/epoch.h>
#include <paxos/proposer.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config_fields.h"

static char base[64];
static struct paxos_config cfg;
static char err[512];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void setup(void)
{
	snprintf(base, sizeof(base), "/tmp/paxos-epoch-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	paxos_config_defaults(&cfg);
	snprintf(cfg.storage_path, sizeof(cfg.storage_path), "%s/a/b", base);
}

static void teardown(void)
{
	nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(uint32_t id, const char *text)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/proposer-%u/epoch", cfg.storage_path, id);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void read_file(uint32_t id, char *buf, size_t cap)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/proposer-%u/epoch", cfg.storage_path, id);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Proposer id's store, as a node opens it. */
static struct paxos_epoch_store *open_store(uint32_t id)
{
	char dir[PATH_MAX];
	ck_assert_int_eq(paxos_epoch_store_dir(&cfg, id, dir, sizeof(dir)), PAXOS_OK);
	struct paxos_epoch_store *es = paxos_epoch_store_open(dir, err, sizeof(err));
	ck_assert_msg(es != NULL, "%s", err);
	return es;
}

/* What a start takes, through a store of its own as each process opens one. */
static int take_next(uint32_t id, uint32_t *epoch)
{
	struct paxos_epoch_store *es = open_store(id);
	int rc = es->ops->next(es, epoch);
	snprintf(err, sizeof(err), "%s", paxos_epoch_store_error(es));
	paxos_epoch_store_destroy(es);
	return rc;
}

static int raise_to(uint32_t id, uint32_t epoch)
{
	struct paxos_epoch_store *es = open_store(id);
	int rc = es->ops->store(es, epoch);
	snprintf(err, sizeof(err), "%s", paxos_epoch_store_error(es));
	paxos_epoch_store_destroy(es);
	return rc;
}

static uint32_t next(uint32_t id)
{
	uint32_t e = 12345;
	ck_assert_msg(take_next(id, &e) == PAXOS_OK, "%s", err);
	return e;
}

START_TEST(first_start_and_restarts)
{
	/* No file (and no directory yet): the first incarnation is epoch 1. */
	ck_assert_uint_eq(next(3), 1);
	ck_assert_uint_eq(next(3), 2);
	ck_assert_uint_eq(next(3), 3);
	char text[32];
	read_file(3, text, sizeof(text));
	ck_assert_str_eq(text, "3\n");
	/* Each proposer id has its own. */
	ck_assert_uint_eq(next(4), 1);
	ck_assert_uint_eq(next(3), 4);
	/* No temporary file is left behind. */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/proposer-3/epoch.tmp", cfg.storage_path);
	ck_assert_int_ne(access(path, F_OK), 0);
	/* The directory is private. */
	struct stat sb;
	snprintf(path, sizeof(path), "%s/proposer-3", cfg.storage_path);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0700);
}
END_TEST

START_TEST(raise_only_goes_up)
{
	ck_assert_uint_eq(next(0), 1);
	ck_assert_int_eq(raise_to(0, 10), PAXOS_OK);
	ck_assert_int_eq(raise_to(0, 5), PAXOS_OK);
	char text[32];
	read_file(0, text, sizeof(text));
	ck_assert_str_eq(text, "10\n");
	/* A restart goes above every epoch used, raised ones included. */
	ck_assert_uint_eq(next(0), 11);
	/* Raising a proposer that never started creates the file. */
	ck_assert_int_eq(raise_to(9, 2), PAXOS_OK);
	ck_assert_uint_eq(next(9), 3);
	ck_assert_int_eq(raise_to(0, PAXOS_PROPOSER_EPOCH_LIMIT), PAXOS_E_INVALID);
	/* Nor to an implausible epoch: a forged ballot must not use up the epochs. */
	ck_assert_int_eq(raise_to(0, PAXOS_PLAUSIBLE_EPOCHS), PAXOS_E_INVALID);
	ck_assert_msg(strstr(err, "beyond the last plausible"), "%s", err);
	ck_assert_int_eq(raise_to(0, PAXOS_PLAUSIBLE_EPOCHS - 1), PAXOS_OK);
}
END_TEST

START_TEST(file_without_newline_accepted)
{
	ck_assert_uint_eq(next(1), 1);
	write_file(1, "41");
	ck_assert_uint_eq(next(1), 42);
}
END_TEST

/* A corrupt file is an error that says what is wrong, and it is left as it was. */
START_TEST(corrupt_file_refused)
{
	const char *bad[] = {
	    "",          "\n", "abc\n", "12x\n", "-1\n", "1 2\n", "99999999999999\n",
	    "33554432\n" /* the limit, 2^25 */};
	ck_assert_uint_eq(next(2), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(2, bad[i]);
		uint32_t e = 7;
		ck_assert_int_eq(take_next(2, &e), PAXOS_E_STORAGE);
		ck_assert_uint_eq(e, 7);
		ck_assert_msg(strstr(err, "corrupt") && strstr(err, "proposer-2/epoch"), "%s", err);
		ck_assert_int_eq(raise_to(2, 9), PAXOS_E_STORAGE);
		char text[32];
		read_file(2, text, sizeof(text));
		ck_assert_str_eq(text, bad[i]);
	}
	/* The last plausible epoch (paxos/types.h) is the last one a proposer can take. */
	write_file(2, "1048574\n");
	ck_assert_uint_eq(next(2), PAXOS_PLAUSIBLE_EPOCHS - 1);
	uint32_t e;
	ck_assert_int_eq(take_next(2, &e), PAXOS_E_STORAGE);
	ck_assert_msg(strstr(err, "used up its 1048576 epochs"), "%s", err);
	/* A file beyond it (from an older version) is read, but no epoch follows it. */
	write_file(2, "33554430\n");
	ck_assert_int_eq(take_next(2, &e), PAXOS_E_STORAGE);
	ck_assert_msg(strstr(err, "epochs"), "%s", err);
}
END_TEST

START_TEST(unusable_path_refused)
{
	char file[128];
	snprintf(file, sizeof(file), "%s/file", base);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/x/proposer-0", file);
	ck_assert_ptr_null(paxos_epoch_store_open(dir, err, sizeof(err)));
	ck_assert_msg(strstr(err, "cannot create") && strstr(err, "Not a directory"), "%s", err);
	ck_assert_ptr_null(paxos_epoch_store_open(NULL, err, sizeof(err)));
	ck_assert_ptr_null(paxos_epoch_store_open("", err, sizeof(err)));
	/* A store path that does not fit is refused, not cut short. */
	char small[8];
	ck_assert_int_eq(paxos_epoch_store_dir(&cfg, 0, small, sizeof(small)), PAXOS_E_INVALID);
	ck_assert_int_eq(paxos_epoch_store_dir(NULL, 0, dir, sizeof(dir)), PAXOS_E_INVALID);
	struct paxos_epoch_store *es = open_store(0);
	ck_assert_int_eq(es->ops->next(es, NULL), PAXOS_E_INVALID);
	paxos_epoch_store_destroy(es);
}
END_TEST

/* One store serves a whole life: a start, then raises, each durable at once. */
START_TEST(one_store_for_a_life)
{
	struct paxos_epoch_store *es = open_store(5);
	ck_assert_str_eq(es->ops->name, "file");
	uint32_t e = 0;
	ck_assert_int_eq(es->ops->next(es, &e), PAXOS_OK);
	ck_assert_uint_eq(e, 1);
	ck_assert_int_eq(es->ops->store(es, 4), PAXOS_OK);
	char text[32];
	read_file(5, text, sizeof(text));
	ck_assert_str_eq(text, "4\n");
	ck_assert_int_eq(es->ops->store(es, 6), PAXOS_OK);
	read_file(5, text, sizeof(text));
	ck_assert_str_eq(text, "6\n");
	ck_assert_str_eq(paxos_epoch_store_error(es), "");
	/* Another process (another store on the same directory) starts above it. */
	ck_assert_uint_eq(next(5), 7);
	ck_assert_int_eq(es->ops->next(es, &e), PAXOS_OK);
	ck_assert_uint_eq(e, 8);
	paxos_epoch_store_destroy(es);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("epoch");
	TCase *tc = tcase_create("epoch");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, first_start_and_restarts);
	tcase_add_test(tc, raise_only_goes_up);
	tcase_add_test(tc, file_without_newline_accepted);
	tcase_add_test(tc, corrupt_file_refused);
	tcase_add_test(tc, unusable_path_refused);
	tcase_add_test(tc, one_store_for_a_life);
	suite_add_tcase(s, tc);
	return s;
}
