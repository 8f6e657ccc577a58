/* SPDX-License-Identifier: BSD-3-Clause */
/* Pipelined commits: durable later, on the backend's thread, through sync. */
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

/* Opens backend i if its commits are pipelined; loop tests skip the others. */
static bool open_pipelined(int i)
{
	if (!backends[i].pipelined)
		return false;
	open_backend(i);
	return true;
}

/* Commits with changes are numbered and become durable through sync, which counts the
 * flushes: on the backend's thread (sync_fd says when one finished) or, with wait, on the
 * caller's. A batch of reads is no commit. */
START_TEST(pipelined_progress)
{
	if (!open_pipelined(_i))
		return;
	struct paxos_storage_progress p;
	ck_assert_uint_eq(st->ops->committed(st), 0);
	ck_assert_int_eq(st->ops->sync(st, false, &p), PAXOS_OK);
	ck_assert_uint_eq(p.committed, 0);
	ck_assert_uint_eq(p.durable, 0);
	ck_assert_uint_eq(p.flushes, 0);
	char v[16];
	for (paxos_iid i = 1; i <= 20; i++) {
		int len = snprintf(v, sizeof(v), "p%llu", (unsigned long long)i);
		ck_assert_int_eq(put(i, 101, 101, v, (uint32_t)len, false), PAXOS_OK);
		ck_assert_uint_eq(st->ops->committed(st), i);
	}
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(get(3, &rec), 1);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_uint_eq(st->ops->committed(st), 20);

	struct pollfd pfd = {.fd = st->ops->sync_fd(st), .events = POLLIN};
	ck_assert_int_eq(poll(&pfd, 1, 0), 0); /* commits alone start no flush */
	ck_assert_int_eq(st->ops->sync(st, false, &p), PAXOS_OK);
	ck_assert_uint_eq(p.durable, 0);
	ck_assert_int_eq(poll(&pfd, 1, 10000), 1);
	ck_assert_int_eq(st->ops->sync(st, false, &p), PAXOS_OK);
	ck_assert_uint_eq(p.durable, 20);
	ck_assert_uint_eq(p.flushes, 1);
	/* With wait, on this thread. */
	ck_assert_int_eq(put(21, 101, 101, "p21", 3, false), PAXOS_OK);
	ck_assert_int_eq(st->ops->sync(st, true, &p), PAXOS_OK);
	ck_assert_uint_eq(p.committed, 21);
	ck_assert_uint_eq(p.durable, 21);
	ck_assert_uint_eq(p.flushes, 2);
	ck_assert_uint_eq(p.flushed_records, 21);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0); /* nothing runs, nothing wakes */
	for (paxos_iid i = 1; i <= 20; i++) {
		int len = snprintf(v, sizeof(v), "p%llu", (unsigned long long)i);
		expect_record(i, 101, 101, v, (uint32_t)len, false);
	}
	close_backend();
}
END_TEST

/* Reads see the newest commit while older ones are flushed. A batch still open stays out of
 * every flush, its trim too, and is dropped when the store is closed. */
START_TEST(pipelined_open_batch)
{
	if (!open_pipelined(_i))
		return;
	static uint8_t big[2000], want[2000];
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	for (paxos_iid i = 1; i <= 300; i++) {
		fill(big, sizeof(big), (uint8_t)i);
		struct paxos_record rec = {i, 101, 101, {big, sizeof(big)}, false};
		ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	}
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->sync(st, false, NULL), PAXOS_OK);
	/* Its flush likely runs now: a second commit rewrites every other instance. */
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	for (paxos_iid i = 2; i <= 300; i += 2) {
		struct paxos_record rec = {i, 202, 202, {(const uint8_t *)"new", 3}, false};
		ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	}
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	for (int round = 0; round < 2; round++) {
		for (paxos_iid i = 1; i <= 300; i++) {
			fill(want, sizeof(want), (uint8_t)i);
			if (i % 2)
				expect_record(i, 101, 101, want, sizeof(want), false);
			else
				expect_record(i, 202, 202, "new", 3, false);
		}
		if (round == 0)
			reopen();
	}

	/* An open batch with a trim: sync makes the commits durable, not the batch. */
	struct paxos_storage_progress p;
	struct paxos_record rec = {400, 303, 303, {(const uint8_t *)"open", 4}, false};
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->trim(st, 100), PAXOS_OK);
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	ck_assert_int_eq(st->ops->sync(st, true, &p), PAXOS_OK);
	ck_assert_uint_eq(p.durable, p.committed);
	ck_assert_int_eq(get(50, &rec), 0);
	expect_record(400, 303, 303, "open", 4, false);
	reopen();
	ck_assert_uint_eq(st->ops->trim_iid(st), 0);
	ck_assert_uint_eq(st->ops->highest_accepted(st), 300);
	expect_record(50, 202, 202, "new", 3, false);
	ck_assert_int_eq(get(400, &rec), 0);

	/* Committed, the same batch is kept. */
	rec = (struct paxos_record){400, 303, 303, {(const uint8_t *)"open", 4}, false};
	ck_assert_int_eq(st->ops->begin(st), PAXOS_OK);
	ck_assert_int_eq(st->ops->trim(st, 100), PAXOS_OK);
	ck_assert_int_eq(st->ops->put(st, &rec), PAXOS_OK);
	ck_assert_int_eq(st->ops->commit(st), PAXOS_OK);
	reopen();
	ck_assert_uint_eq(st->ops->trim_iid(st), 100);
	ck_assert_int_eq(get(100, &rec), 0);
	fill(want, sizeof(want), 101);
	expect_record(101, 101, 101, want, sizeof(want), false);
	expect_record(400, 303, 303, "open", 4, false);
	close_backend();
}
END_TEST

/*
 * kill -9 at several points while flushes run: every commit that sync reported durable is in
 * the store afterwards, and what is there is a prefix of the commits. Commit n writes instance
 * n + 1 and records n in instance 1's promise.
 */
START_TEST(pipelined_kill)
{
	if (!backends[_i].pipelined)
		return;
	static const unsigned kill_after[] = {1, 20, 150}; /* durable advances before the kill */
	for (size_t k = 0; k < sizeof(kill_after) / sizeof(kill_after[0]); k++) {
		snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
		ck_assert_ptr_nonnull(mkdtemp(dir));
		int fds[2];
		ck_assert_int_eq(pipe(fds), 0);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(fds[0]);
			struct paxos_storage *c = open_in(_i, dir);
			if (!c)
				_exit(2);
			for (paxos_iid n = 1;; n++) {
				struct paxos_record a = {
				    n + 1, 101, 101, {(const uint8_t *)"kill", 4}, false};
				struct paxos_record mark = {1, n, 0, {NULL, 0}, false};
				struct paxos_storage_progress p;
				if (c->ops->begin(c) || c->ops->put(c, &a) ||
				    c->ops->put(c, &mark) || c->ops->commit(c) ||
				    c->ops->sync(c, false, &p))
					_exit(3);
				if (write(fds[1], &p.durable, sizeof(p.durable)) !=
				    sizeof(p.durable))
					_exit(4);
				/* Commits stay a few flushes ahead, not a store's worth. */
				if (p.committed - p.durable > 64)
					usleep(200);
			}
		}
		close(fds[1]);
		uint64_t durable = 0, got;
		unsigned advances = 0;
		while (advances < kill_after[k] && read(fds[0], &got, sizeof(got)) == sizeof(got))
			if (got > durable) {
				durable = got;
				advances++;
			}
		kill(pid, SIGKILL);
		int status;
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		close(fds[0]);
		ck_assert_msg(advances == kill_after[k],
			      "%s: the writer stopped by itself (status %d)", backends[_i].label,
			      status);

		st = open_in(_i, dir);
		ck_assert_msg(st != NULL, "%s after kill -9: %s", backends[_i].label, storage_err);
		struct paxos_record rec;
		ck_assert_int_eq(get(1, &rec), 1);
		paxos_iid last = rec.promised; /* the last commit in the store */
		ck_assert_msg(
		    last >= durable, "%s: commit %llu was durable, the store ends at %llu",
		    backends[_i].label, (unsigned long long)durable, (unsigned long long)last);
		for (paxos_iid n = 1; n <= last; n++)
			expect_record(n + 1, 101, 101, "kill", 4, false);
		ck_assert_int_eq(get(last + 2, &rec), 0);
		ck_assert_uint_eq(st->ops->highest_accepted(st), last + 1);
		close_backend();
	}
}
END_TEST

/* A map that fills up fails a flush: the commit or sync after it says why, and the commits
 * sync called durable before are intact. */
START_TEST(lmdb_map_full_pipelined)
{
	snprintf(dir, sizeof(dir), "/tmp/paxos-storage-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	st = paxos_storage_lmdb_new(dir, PAXOS_DURABILITY_SYNC, 1u << 20, storage_err,
				    sizeof(storage_err));
	ck_assert_msg(st != NULL, "%s", storage_err);
	static uint8_t v[4000];
	int rc = PAXOS_OK;
	paxos_iid i;
	uint64_t durable = 0;
	for (i = 1; i <= 1000 && rc == PAXOS_OK; i++) {
		struct paxos_record rec = {i, 101, 101, {v, sizeof(v)}, false};
		struct paxos_storage_progress p;
		rc = st->ops->begin(st);
		if (rc == PAXOS_OK)
			rc = st->ops->put(st, &rec);
		if (rc == PAXOS_OK)
			rc = st->ops->commit(st);
		if (rc == PAXOS_OK)
			rc = st->ops->sync(st, i % 8 == 0, &p);
		if (rc == PAXOS_OK)
			durable = p.durable;
	}
	if (rc == PAXOS_OK)
		rc = st->ops->sync(st, true, NULL);
	ck_assert_int_eq(rc, PAXOS_E_STORAGE);
	ck_assert_uint_gt(durable, 10);
	const char *msg = paxos_storage_error(st);
	ck_assert_msg(strstr(msg, "full") && strstr(msg, "lmdb-map-size") &&
			  strstr(msg, "1048576") && strstr(msg, "MDB_MAP_FULL"),
		      "%s", msg);
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->get(st, 1, &rec), PAXOS_E_STORAGE);
	ck_assert_int_eq(st->ops->sync(st, false, NULL), PAXOS_E_STORAGE);
	paxos_storage_destroy(st);
	st = paxos_storage_lmdb_new(dir, PAXOS_DURABILITY_SYNC, 1u << 20, storage_err,
				    sizeof(storage_err));
	ck_assert_msg(st != NULL, "%s", storage_err);
	for (paxos_iid n = 1; n <= durable; n++)
		ck_assert_int_eq(get(n, &rec), 1);
	close_backend();
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("storage_pipelined");
	TCase *pipelined = tcase_create("pipelined");
	tcase_set_timeout(pipelined, 120);
	tcase_add_loop_test(pipelined, pipelined_progress, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(pipelined, pipelined_open_batch, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_loop_test(pipelined, pipelined_kill, FIRST_DURABLE, BACKEND_COUNT);
	tcase_add_test(pipelined, lmdb_map_full_pipelined);
	suite_add_tcase(s, pipelined);
	return s;
}
