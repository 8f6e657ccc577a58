/* SPDX-License-Identifier: BSD-3-Clause */
/* The durable backends: reopening, group commit, a process crash, refusals (a second open, an
 * unusable path, a corrupt store, another format), a full map, and the storage factory. */
#include "check_main.h"
#include <paxos/storage_backends.h>
#include <paxos/storage.h>

#include <fcntl.h>
#include <ftw.h>
#include <lmdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#include "config_fields.h"
#endif

#include "storage_fixture.h"

START_TEST(reopen_keeps_state)
{
	open_backend(_i);
	static uint8_t big[5000];
	fill(big, sizeof(big), 7);
	char v[16];
	for (paxos_iid i = 1; i <= 10; i++) {
		int len = snprintf(v, sizeof(v), "v%llu", (unsigned long long)i);
		ck_assert_int_eq(put(i, 101, 101, v, (uint32_t)len, false), PAXOS_OK);
	}
	ck_assert_int_eq(put(11, 303, 202, big, sizeof(big), true), PAXOS_OK);
	ck_assert_int_eq(put(12, 404, 0, NULL, 0, false), PAXOS_OK); /* promise only */
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->trim(st, 4), PAXOS_OK);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_int_eq(put(13, 505, 0, NULL, 0, false), PAXOS_OK);

	reopen();
	ck_assert_uint_eq(st->ops->trim_iid(st), 4);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 11);
	struct paxos_record rec;
	for (paxos_iid i = 1; i <= 4; i++)
		ck_assert_int_eq(get(i, &rec), 0);
	for (paxos_iid i = 5; i <= 10; i++) {
		int len = snprintf(v, sizeof(v), "v%llu", (unsigned long long)i);
		expect_record(i, 101, 101, v, (uint32_t)len, false);
	}
	expect_record(11, 303, 202, big, sizeof(big), true);
	expect_record(12, 404, 0, NULL, 0, false);
	expect_record(13, 505, 0, NULL, 0, false);
	ck_assert_int_eq(get(14, &rec), 0);

	/* Trimming past the highest accepted instance deletes its record, not the number. */
	ck_assert_int_eq(st->ops->trim(st, 20), PAXOS_OK);
	reopen();
	ck_assert_uint_eq(st->ops->trim_iid(st), 20);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 11);
	ck_assert_int_eq(get(11, &rec), 0);
	ck_assert_int_eq(put(21, 101, 101, "v21", 3, false), PAXOS_OK);
	ck_assert_int_eq(put(22, 101, 0, NULL, 0, false), PAXOS_OK);
	reopen();
	ck_assert_uint_eq(st->ops->highest_accepted(st), 21);
	expect_record(21, 101, 101, "v21", 3, false);
	close_backend();
}
END_TEST

/* Everything between begin and commit is one transaction; an unfinished one is dropped. */
START_TEST(group_commit)
{
	open_backend(_i);
	char v[16];
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	for (paxos_iid i = 1; i <= 500; i++) {
		int len = snprintf(v, sizeof(v), "g%llu", (unsigned long long)i);
		struct paxos_record rec = {.iid = i,
					   .promised = 101,
					   .accepted = 101,
					   .value = {(const uint8_t *)v, (uint32_t)len}};
		ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	}
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	reopen();
	for (paxos_iid i = 1; i <= 500; i++) {
		int len = snprintf(v, sizeof(v), "g%llu", (unsigned long long)i);
		expect_record(i, 101, 101, v, (uint32_t)len, false);
	}
	ck_assert_uint_eq(st->ops->highest_accepted(st), 500);

	/* bdb inmemory-log commits what precedes a trim (its log could not hold a big one), so
	 * its unfinished batch here has no trim. */
	bool trim_in_batch = backends[_i].mode != PAXOS_DURABILITY_INMEMORY_LOG;
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	struct paxos_record rec = {.iid = 501, .promised = 101, .accepted = 101};
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	if (trim_in_batch)
		ck_assert_int_eq(st->ops->trim(st, 100), PAXOS_OK);
	reopen(); /* closes in the middle of the batch */
	ck_assert_int_eq(get(501, &rec), 0);
	ck_assert_uint_eq(st->ops->trim_iid(st), 0);
	ck_assert_int_eq(get(100, &rec), 1);
	close_backend();
}
END_TEST

/* A child process commits and dies without closing; the parent reopens. */
START_TEST(process_crash)
{
	open_backend(_i);
	paxos_storage_destroy(st); /* the child takes the store */
	st = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct paxos_storage *c = open_in(_i, dir);
		if (!c)
			_exit(2);
		for (paxos_iid i = 1; i <= 50; i++) {
			struct paxos_record rec = {.iid = i,
						   .promised = 101,
						   .accepted = 101,
						   .value = {(const uint8_t *)"crash", 5}};
			if (c->ops->begin(c) || c->ops->put(c, &rec) || c->ops->commit(c))
				_exit(3);
		}
		if (c->ops->begin(c) || c->ops->trim(c, 10) || c->ops->commit(c))
			_exit(4);
		/* Pipelined commits are durable once sync says so (see pipelined_kill). */
		if (paxos_storage_pipelined(c) && c->ops->sync(c, true, NULL) != PAXOS_OK)
			_exit(5);
		_exit(0); /* no destroy: as if killed */
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed: %d", status);

	st = open_in(_i, dir);
	struct paxos_record rec;
	switch (backends[_i].crash) {
	case CRASH_KEEPS_ALL:
		ck_assert_msg(st != NULL, "%s", storage_err);
		ck_assert_uint_eq(st->ops->trim_iid(st), 10);
		ck_assert_uint_eq(st->ops->highest_accepted(st), 50);
		ck_assert_int_eq(get(10, &rec), 0);
		for (paxos_iid i = 11; i <= 50; i++)
			expect_record(i, 101, 101, "crash", 5, false);
		break;
	case CRASH_MAY_LOSE:
		ck_assert_msg(st != NULL, "%s", storage_err);
		for (paxos_iid i = 1; i <= 50; i++)
			if (get(i, &rec) == 1)
				expect_record(i, 101, 101, "crash", 5, false);
		break;
	case CRASH_REFUSED:
		ck_assert_ptr_null(st);
		ck_assert_msg(strstr(storage_err, "not closed cleanly") &&
				  strstr(storage_err, "storage-fresh"),
			      "%s", storage_err);
		break;
	case CRASH_NOT_DURABLE:
		break;
	}
	if (st)
		close_backend();
	else
		remove_tree(dir);
}
END_TEST

/* Two acceptors must never share a store: the second open of a directory is refused, by any
 * durable backend, from this process or another, until the first closes it. */
START_TEST(second_open_is_refused)
{
	open_backend(_i);
	ck_assert_int_eq(put(1, 101, 101, "mine", 4, false), PAXOS_OK);
	for (int j = FIRST_DURABLE; j < BACKEND_COUNT; j++) {
		struct paxos_storage *other = open_in(j, dir);
		ck_assert_msg(other == NULL, "%s opened a store %s holds", backends[j].label,
			      backends[_i].label);
		ck_assert_msg(strstr(storage_err, "is locked") && strstr(storage_err, dir), "%s",
			      storage_err);
		ck_assert_msg(strstr(storage_err, "another acceptor"), "%s", storage_err);
	}
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct paxos_storage *other = open_in(_i, dir);
		_exit(other == NULL && strstr(storage_err, "is locked") ? 0 : 1);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the refused opens changed nothing */
	struct paxos_record rec;
	ck_assert_int_eq(get(1, &rec), 1);
	expect_value(&rec, "mine");
	reopen(); /* free again once closed */
	ck_assert_int_eq(get(1, &rec), 1);
	close_backend();
}
END_TEST

START_TEST(unusable_path_refused)
{
	char file[] = "/tmp/paxos-storage-file-XXXXXX", path[128];
	int fd = mkstemp(file);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/store", file);
	ck_assert_ptr_null(open_in(_i, path));
	ck_assert_msg(strstr(storage_err, path) && strstr(storage_err, "Not a directory"), "%s",
		      storage_err);
	unlink(file);
	snprintf(path, sizeof(path), "/tmp/paxos-storage-missing-%d/store", (int)getpid());
	ck_assert_ptr_null(open_in(_i, path));
	ck_assert_msg(strstr(storage_err, path) && strstr(storage_err, "No such file or directory"),
		      "%s", storage_err);
}
END_TEST

START_TEST(corrupt_store_refused)
{
	open_backend(_i);
	ck_assert_int_eq(put(1, 101, 101, "x", 1, false), PAXOS_OK);
	paxos_storage_destroy(st);
	st = NULL;
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir,
		 strcmp(backends[_i].name, "lmdb") == 0 ? "data.mdb" : "paxos.db");
	FILE *f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	static uint8_t junk[65536];
	fill(junk, sizeof(junk), 99);
	ck_assert_uint_eq(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
	ck_assert_ptr_null(open_in(_i, dir));
	ck_assert_msg(strstr(storage_err, "corrupt") && strstr(storage_err, dir), "%s",
		      storage_err);
	remove_tree(dir);
}
END_TEST

/* Replaces (or, with meta NULL, deletes) the metadata record (key: iid 0) of the LMDB store
 * in dir, behind the backend's back, as another libpaxos version would have left it. */
static void lmdb_set_meta(const uint8_t *meta, size_t len)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	uint8_t key_bytes[8] = {0};
	MDB_val key = {sizeof(key_bytes), key_bytes}, data = {len, (void *)meta};
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_set_mapsize(env, LMDB_TEST_MAP_SIZE), 0);
	ck_assert_int_eq(mdb_env_open(env, dir, 0, 0600), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, NULL, 0, &dbi), 0);
	if (meta)
		ck_assert_int_eq(mdb_put(txn, dbi, &key, &data, 0), 0);
	else
		ck_assert_int_eq(mdb_del(txn, dbi, &key, NULL), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
}

/* A store of another format version (version 1 had 32-bit ballots) is refused, saying so. */
START_TEST(other_format_version_refused)
{
	open_backend(1); /* lmdb */
	ck_assert_int_eq(put(1, 4294967396ull, 4294967396ull, "x", 1, false), PAXOS_OK);
	reopen(); /* a store of this version opens again, 64-bit ballots intact */
	struct paxos_record rec;
	ck_assert_int_eq(get(1, &rec), 1);
	ck_assert_uint_eq(rec.promised, 4294967396ull);
	paxos_storage_destroy(st);
	st = NULL;
	/* "PXST", version 1, trim 0, highest accepted 0 */
	static const uint8_t v1[24] = {'P', 'X', 'S', 'T', 0, 0, 0, 1};
	lmdb_set_meta(v1, sizeof(v1));
	ck_assert_ptr_null(open_in(1, dir));
	ck_assert_msg(strstr(storage_err, "format version 1") &&
			  strstr(storage_err, "format version 2") &&
			  strstr(storage_err, "storage-fresh") && strstr(storage_err, dir),
		      "%s", storage_err);
	/* Version 1 stores that were never trimmed have no metadata record at all. */
	lmdb_set_meta(NULL, 0);
	ck_assert_ptr_null(open_in(1, dir));
	ck_assert_msg(strstr(storage_err, "format version 1") &&
			  strstr(storage_err, "no format record"),
		      "%s", storage_err);
	remove_tree(dir);
}
END_TEST

/* A small map fills up: the put fails cleanly and says why; its space said it was coming. */
START_TEST(lmdb_map_full)
{
	snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	st = paxos_storage_lmdb_new(dir, PAXOS_DURABILITY_NOSYNC, 1u << 20, storage_err,
				    sizeof(storage_err));
	ck_assert_msg(st != NULL, "%s", storage_err);
	uint64_t empty, used, limit;
	ck_assert_int_eq(paxos_storage_space(st, &empty, &limit), PAXOS_OK);
	ck_assert_uint_eq(limit, 1u << 20);
	ck_assert_uint_gt(empty, 0);
	ck_assert_uint_lt(empty, limit / 8);
	static uint8_t v[4000];
	int rc = PAXOS_OK;
	paxos_iid i;
	for (i = 1; i <= 1000 && rc == PAXOS_OK; i++) {
		struct paxos_record rec = {
		    .iid = i, .promised = 101, .accepted = 101, .value = {v, sizeof(v)}};
		rc = st->ops->begin(st);
		if (rc == PAXOS_OK)
			rc = st->ops->put(st, &rec);
		if (rc == PAXOS_OK)
			rc = st->ops->commit(st);
	}
	ck_assert_int_eq(rc, PAXOS_E_STORAGE);
	ck_assert_uint_gt(i, 10);
	ck_assert_int_eq(paxos_storage_space(st, &used, &limit), PAXOS_OK);
	ck_assert_uint_eq(limit, 1u << 20);
	ck_assert_uint_gt(used, limit / 4 * 3);
	ck_assert_uint_le(used, limit);
	const char *msg = paxos_storage_error(st);
	ck_assert_msg(strstr(msg, "full") && strstr(msg, "lmdb-map-size") &&
			  strstr(msg, "1048576") && strstr(msg, "MDB_MAP_FULL"),
		      "%s", msg);
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->get(st, 1, &rec), PAXOS_E_STORAGE); /* stopped for good */
	/* What was committed before is intact. */
	paxos_storage_destroy(st);
	st = paxos_storage_lmdb_new(dir, PAXOS_DURABILITY_NOSYNC, 1u << 20, storage_err,
				    sizeof(storage_err));
	ck_assert_msg(st != NULL, "%s", storage_err);
	ck_assert_int_eq(get(1, &rec), 1);
	ck_assert_uint_eq(rec.value.len, sizeof(v));
	close_backend();
}
END_TEST

START_TEST(bad_arguments_refused)
{
	ck_assert_ptr_null(paxos_storage_lmdb_new("/tmp", PAXOS_DURABILITY_DBSYNC, 1u << 20,
						  storage_err, sizeof(storage_err)));
	ck_assert_msg(strstr(storage_err, "dbsync") && strstr(storage_err, "nosync or sync"), "%s",
		      storage_err);
	ck_assert_ptr_null(paxos_storage_lmdb_new(NULL, PAXOS_DURABILITY_SYNC, 1u << 20,
						  storage_err, sizeof(storage_err)));
	ck_assert_ptr_null(
	    paxos_storage_bdb_new("/tmp", PAXOS_DURABILITY_NONE, storage_err, sizeof(storage_err)));
	ck_assert_msg(strstr(storage_err, "none"), "%s", storage_err);
	ck_assert_ptr_null(paxos_storage_open(NULL, 0, false, storage_err, sizeof(storage_err)));
	ck_assert_str_eq(paxos_storage_error(NULL), "");
}
END_TEST

static struct paxos_storage *open_acceptor(const struct paxos_config *cfg, uint32_t id, bool fresh)
{
	storage_err[0] = '\0';
	struct paxos_storage *s =
	    paxos_storage_open(cfg, id, fresh, storage_err, sizeof(storage_err));
	ck_assert_msg(s != NULL, "acceptor %u: %s", id, storage_err);
	return s;
}

static void configure(struct paxos_config *cfg, const char *text)
{
	ck_assert_msg(paxos_config_parse(cfg, text, strlen(text), "test", storage_err,
					 sizeof(storage_err)) == PAXOS_OK,
		      "%s", storage_err);
}

START_TEST(factory)
{
	char base[] = "/tmp/paxos-storage-XXXXXX", text[512], path[256];
	ck_assert_ptr_nonnull(mkdtemp(base));
	struct paxos_config cfg;
	paxos_config_defaults(&cfg);
	st = open_acceptor(&cfg, 0, false);
	ck_assert_str_eq(st->ops->name, "memory");
	paxos_storage_destroy(st);

	snprintf(text, sizeof(text),
		 "storage lmdb\ndurability nosync\nlmdb-map-size 8388608\nstorage-path %s/a/b\n",
		 base);
	configure(&cfg, text);
	st = open_acceptor(&cfg, 3, false);
	ck_assert_str_eq(st->ops->name, "lmdb");
	ck_assert_int_eq(paxos_storage_dir(&cfg, 3, path, sizeof(path)), PAXOS_OK);
	snprintf(text, sizeof(text), "%s/a/b/acceptor-3", base);
	ck_assert_str_eq(path, text);
	struct stat sb;
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert(S_ISDIR(sb.st_mode));
	ck_assert_int_eq(paxos_storage_dir(&cfg, 3, path, 8), PAXOS_E_INVALID);
	ck_assert_int_eq(put(1, 101, 101, "one", 3, false), PAXOS_OK);

	/* another acceptor on the same host has its own directory */
	struct paxos_storage *four = open_acceptor(&cfg, 4, false);
	struct paxos_record rec;
	ck_assert_int_eq(four->ops->get(four, 1, &rec), 0);
	paxos_storage_destroy(four);
	/* a fresh start of a store in use is refused and deletes nothing */
	ck_assert_ptr_null(paxos_storage_open(&cfg, 3, true, storage_err, sizeof(storage_err)));
	ck_assert_msg(strstr(storage_err, "is locked"), "%s", storage_err);
	ck_assert_int_eq(get(1, &rec), 1);
	paxos_storage_destroy(st);

	st = open_acceptor(&cfg, 3, false); /* recovers */
	ck_assert_int_eq(get(1, &rec), 1);
	expect_value(&rec, "one");
	paxos_storage_destroy(st);
	snprintf(text, sizeof(text), "%s/a/b/acceptor-3/membership", base);
	FILE *kept = fopen(text, "w");
	ck_assert_ptr_nonnull(kept);
	fclose(kept);
	st = open_acceptor(&cfg, 3, true); /* fresh, but the configuration history stays */
	ck_assert_int_eq(get(1, &rec), 0);
	ck_assert_int_eq(stat(text, &sb), 0);
	ck_assert_int_eq(put(2, 101, 101, "two", 3, false), PAXOS_OK);
	paxos_storage_destroy(st);
	cfg.storage_fresh = true; /* storage-fresh yes does the same */
	st = open_acceptor(&cfg, 3, false);
	ck_assert_int_eq(get(2, &rec), 0);
	paxos_storage_destroy(st);

	snprintf(text, sizeof(text), "storage bdb\ndurability write-nosync\nstorage-path %s/a/b\n",
		 base);
	configure(&cfg, text);
	st = open_acceptor(&cfg, 5, false);
	ck_assert_str_eq(st->ops->name, "bdb");
	ck_assert_int_eq(put(7, 101, 101, "seven", 5, false), PAXOS_OK);
	paxos_storage_destroy(st);
	st = open_acceptor(&cfg, 5, false);
	ck_assert_int_eq(get(7, &rec), 1);
	paxos_storage_destroy(st);
	st = NULL;

	/* inmemory-log after a crash: refused, and a fresh start is the way out */
	snprintf(text, sizeof(text), "storage bdb\ndurability inmemory-log\nstorage-path %s\n",
		 base);
	configure(&cfg, text);
	paxos_storage_dir(&cfg, 0, path, sizeof(path));
	st = open_acceptor(&cfg, 0, false);
	paxos_storage_destroy(st);
	snprintf(text, sizeof(text), "%s/paxos.open", path);
	FILE *marker = fopen(text, "w"); /* what a crash leaves behind */
	ck_assert_ptr_nonnull(marker);
	fclose(marker);
	ck_assert_ptr_null(paxos_storage_open(&cfg, 0, false, storage_err, sizeof(storage_err)));
	ck_assert_msg(strstr(storage_err, "not closed cleanly"), "%s", storage_err);
	st = open_acceptor(&cfg, 0, true);
	paxos_storage_destroy(st);
	st = NULL;

	/* a storage-path under a regular file */
	snprintf(text, sizeof(text), "%s/file", base);
	marker = fopen(text, "w");
	ck_assert_ptr_nonnull(marker);
	fclose(marker);
	snprintf(cfg.storage_path, sizeof(cfg.storage_path), "%s/file/x", base);
	ck_assert_ptr_null(paxos_storage_open(&cfg, 0, false, storage_err, sizeof(storage_err)));
	ck_assert_msg(strstr(storage_err, "cannot create") &&
			  strstr(storage_err, "Not a directory"),
		      "%s", storage_err);
	remove_tree(base);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("storage_durable");
	TCase *durable = tcase_create("durable");
	tcase_set_timeout(durable, 60);
	tcase_add_loop_test(durable, reopen_keeps_state, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, group_commit, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, process_crash, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, second_open_is_refused, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, unusable_path_refused, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(durable, corrupt_store_refused, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_test(durable, lmdb_map_full);
	tcase_add_test(durable, other_format_version_refused);
	tcase_add_test(durable, bad_arguments_refused);
	tcase_add_test(durable, factory);
	suite_add_tcase(s, durable);
	return s;
}
