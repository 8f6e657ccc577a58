/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration history survives a restart (paxos_membership_restore, DIR/membership): a
 * restored history rejects what apply could not have made; the file round-trips and refuses
 * to guess at a corrupt one; an acceptor's recovery counts answers in the configurations it
 * learned, and one the newest configuration leaves out says so. Nodes keeping their changes:
 * test_membership_node.c.
 */
#include "check_main.h"
#include <event2/event.h>
#include <ftw.h>
#include <paxos/acceptor.h>
#include <paxos/membership.h>
#include <paxos/paxos.h>
#include <paxos/storage_backends.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin_mac.h"
#include "codec.h"
#include "config_fields.h"
#include "membership_file.h"
#include "stub_transport.h"
#include "membership_fixture.h"
#include "support.h"

START_TEST(test_restore_rules)
{
	struct paxos_membership *m = replaced_history();
	uint32_t count;
	const struct paxos_configuration *h = paxos_membership_history(m, &count);
	ck_assert_uint_eq(count, 3);
	struct paxos_configuration c[3];
	memcpy(c, h, sizeof(c));
	paxos_iid applied = paxos_membership_applied(m);

	struct paxos_membership *r = paxos_membership_restore(c, 3, applied, ALPHA);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(paxos_membership_latest(r)->id, 3);
	ck_assert_uint_eq(paxos_membership_members(r, 20), 0x1f);
	ck_assert_uint_eq(paxos_membership_members(r, 21), 0x1c);
	ck_assert(paxos_membership_known(r, applied + ALPHA));
	/* The log delivered again from instance 1: nothing applies twice. */
	uint8_t b[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value grow = support_command(1, 0x1f, b);
	ck_assert_int_eq(paxos_membership_apply(r, 1, &grow), 0);
	ck_assert_uint_eq(paxos_membership_latest(r)->id, 3);
	/* And goes on from where it was. */
	struct paxos_value next = support_command(3, 0x1e, b);
	ck_assert_int_eq(paxos_membership_apply(r, applied + 1, &next), 1);
	ck_assert_uint_eq(paxos_membership_latest(r)->first, applied + 1 + ALPHA);
	paxos_membership_free(r);

	/* What apply could not have made. */
	ck_assert_ptr_null(paxos_membership_restore(c, 0, applied, ALPHA));
	ck_assert_ptr_null(paxos_membership_restore(c, 3, applied, 0));
	ck_assert_ptr_null(paxos_membership_restore(c, 3, applied - 1, ALPHA)); /* 21 > 10 + 10 */
	struct paxos_configuration bad[3];
	memcpy(bad, c, sizeof(bad));
	bad[2].id = 4; /* a gap */
	ck_assert_ptr_null(paxos_membership_restore(bad, 3, applied, ALPHA));
	memcpy(bad, c, sizeof(bad));
	bad[2].first = bad[1].first; /* not increasing */
	ck_assert_ptr_null(paxos_membership_restore(bad, 3, applied, ALPHA));
	memcpy(bad, c, sizeof(bad));
	bad[1].members = 0;
	ck_assert_ptr_null(paxos_membership_restore(bad, 3, applied, ALPHA));
	memcpy(bad, c, sizeof(bad));
	bad[0].first = 5; /* configuration 1 governs from instance 1 */
	ck_assert_ptr_null(paxos_membership_restore(bad, 3, applied, ALPHA));
	paxos_membership_free(m);
}
END_TEST

/* Recovery covers the configurations acceptor 2 was a member of, newest first. */
START_TEST(test_voted_in)
{
	struct paxos_membership *m = replaced_history();
	uint32_t out[4] = {9, 9, 9, 9};
	paxos_iid ends[4];
	ck_assert_uint_eq(paxos_membership_voted_in(m, 2, out, ends, 4), 3);
	ck_assert_uint_eq(out[0], 0x1c);
	ck_assert_uint_eq(out[1], 0x1f);
	ck_assert_uint_eq(out[2], 0x07);
	ck_assert_uint_eq(out[3], 0);
	ck_assert_uint_eq(ends[0], 0); /* the newest: no end */
	ck_assert_uint_eq(ends[1], 20);
	ck_assert_uint_eq(ends[2], 10);
	ck_assert_uint_eq(paxos_membership_voted_in(m, 0, out, NULL, 4), 2); /* removed from 3 */
	ck_assert_uint_eq(out[0], 0x1f);
	ck_assert_uint_eq(paxos_membership_voted_in(m, 6, out, NULL, 4), 1); /* never a member */
	ck_assert_uint_eq(out[0], 0x1c);
	ck_assert_uint_eq(out[1], 0);
	ck_assert_uint_eq(paxos_membership_voted_in(m, 2, out, NULL, 2), 2);
	paxos_membership_free(m);
}
END_TEST

START_TEST(test_file_round_trip)
{
	make_base();
	struct paxos_membership *m = replaced_history(), *r = (void *)1;
	char err[512], dir[128], path[160];
	snprintf(dir, sizeof(dir), "%s/acceptor-2", base_dir);
	ck_assert_int_eq(paxos_membership_file_read(dir, ALPHA, &r, err, sizeof(err)), PAXOS_OK);
	ck_assert_ptr_null(r); /* none yet */
	ck_assert_int_eq(paxos_membership_file_write(dir, m, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_membership_file_read(dir, ALPHA, &r, err, sizeof(err)), PAXOS_OK);
	ck_assert_ptr_nonnull(r);
	uint32_t n1, n2;
	const struct paxos_configuration *a = paxos_membership_history(m, &n1);
	const struct paxos_configuration *b = paxos_membership_history(r, &n2);
	ck_assert_uint_eq(n1, n2);
	/* Field by field: the struct's padding holds whatever its allocation did. */
	for (uint32_t i = 0; i < n1; i++) {
		ck_assert_uint_eq(a[i].first, b[i].first);
		ck_assert_uint_eq(a[i].id, b[i].id);
		ck_assert_uint_eq(a[i].members, b[i].members);
		ck_assert_uint_eq(a[i].proposers, b[i].proposers);
	}
	ck_assert_uint_eq(paxos_membership_applied(r), paxos_membership_applied(m));
	paxos_membership_free(r);

	/* A file of before proposer sets (format 1): every proposer may lead. */
	snprintf(path, sizeof(path), "%s/membership", dir);
	FILE *old = fopen(path, "w");
	fputs("paxos-membership 1\nalpha 10\napplied 11\nconfiguration 1 1 0x7\n"
	      "configuration 2 11 0x1f\n",
	      old);
	fclose(old);
	ck_assert_int_eq(paxos_membership_file_read(dir, ALPHA, &r, err, sizeof(err)), PAXOS_OK);
	ck_assert_uint_eq(paxos_membership_members(r, 11), 0x1f);
	ck_assert_uint_eq(paxos_membership_proposers(r, 11), UINT32_MAX);
	paxos_membership_free(r);
	/* A proposer set kept and read back. */
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value cmd = {buf, sizeof(buf)};
	struct paxos_membership *p = paxos_membership_create(0x7, 0x3, ALPHA);
	paxos_membership_command_of(PAXOS_MEMBERSHIP_PROPOSERS, 1, 0x2, buf);
	ck_assert_int_eq(paxos_membership_apply(p, 4, &cmd), 1);
	paxos_membership_set_address(p, 5, 0x0400007f, 7206); /* 127.0.0.4 */
	ck_assert_int_eq(paxos_membership_file_write(dir, p, err, sizeof(err)), PAXOS_OK);
	ck_assert_int_eq(paxos_membership_file_read(dir, ALPHA, &r, err, sizeof(err)), PAXOS_OK);
	ck_assert_uint_eq(paxos_membership_proposers(r, 1), 0x3);
	ck_assert_uint_eq(paxos_membership_proposers(r, 4 + ALPHA), 0x2);
	uint32_t a5;
	uint16_t port5;
	ck_assert(paxos_membership_address(r, 5, &a5, &port5));
	ck_assert_uint_eq(a5, 0x0400007f);
	ck_assert_uint_eq(port5, 7206);
	ck_assert(!paxos_membership_address(r, 4, &a5, &port5));
	paxos_membership_free(r);
	paxos_membership_free(p);
	ck_assert_int_eq(paxos_membership_file_write(dir, m, err, sizeof(err)), PAXOS_OK);

	/* Another alpha: every process needs the same. */
	ck_assert_int_eq(paxos_membership_file_read(dir, 256, &r, err, sizeof(err)),
			 PAXOS_E_INVALID);
	ck_assert_msg(strstr(err, "learned with membership-alpha 10, paxos.conf says 256"), "%s",
		      err);

	/* Corrupt: never guessed at. */
	snprintf(path, sizeof(path), "%s/membership", dir);
	const char *bad[] = {
	    "",
	    "paxos-membership 1\nalpha 10\napplied 11\nconfiguration 1 1 0x7\nconfiguration 3 "
	    "11 0x1f\n",
	    "paxos-membership 1\nalpha 10\napplied 11\nconfiguration 1 1 0x7\nsomething\n",
	    "paxos-membership 3\nalpha 10\napplied 11\nconfiguration 1 1 0x7\n",
	    "paxos-membership 2\nalpha 10\napplied 11\nconfiguration 1 1 0x7 0x3\n"
	    "address 40 0x1 7201\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");
		fputs(bad[i], f);
		fclose(f);
		ck_assert_int_eq(paxos_membership_file_read(dir, ALPHA, &r, err, sizeof(err)),
				 PAXOS_E_STORAGE);
		ck_assert_ptr_null(r);
		ck_assert_msg(strstr(err, "corrupt ") && strstr(err, "delete it to start from"),
			      "%s", err);
	}
	paxos_membership_free(m);
	remove_base();
}
END_TEST

/* ---- recovery in the configuration in force ---- */

static void answer(struct paxos_acceptor *a, uint32_t self, uint32_t from, uint64_t incarnation)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){.role = PAXOS_ROLE_ACCEPTOR,
						       .sender_id = from,
						       .acceptor_id = self,
						       .incarnation = incarnation,
						       .highest_iid = 30,
						       .highest_ballot = 1000};
	struct recorder *r = recorder_new();
	paxos_acceptor_handle(a, &m, &r->emitter);
	recorder_free(r);
}

/* Acceptor 2 lost its state after 0 and 1 were replaced by 3 and 4. Counted in paxos.conf's
 * first configuration {0,1,2} (the first slice's behaviour), answers from the retired 0 and
 * 1 let it vote again, though a quorum {3,4} of {2,3,4} may have accepted above what they
 * report; counted in the configurations it learned, it waits for 3 and 4. */
START_TEST(test_recovery_counts_learned_configuration)
{
	struct paxos_membership *h = replaced_history();
	for (int learned = 0; learned < 2; learned++) {
		struct paxos_counters c = {0};
		struct paxos_storage *st = paxos_storage_memory_new();
		struct paxos_acceptor *a =
		    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = 2}, st, &c);
		struct paxos_acceptor_membership m = {
		    .proposers = 0, .incarnation = 9, .amnesiac = true, .configurations = {0x7}};
		if (learned)
			paxos_membership_voted_in(h, 2, m.configurations, NULL,
						  PAXOS_ACCEPTOR_CONFIGURATIONS);
		ck_assert_int_eq(paxos_acceptor_join(a, &m), PAXOS_OK);
		answer(a, 2, 0, 9);
		answer(a, 2, 1, 9);
		ck_assert(paxos_acceptor_recovering(a) == (learned == 1));
		if (learned) {
			answer(a, 2, 3, 9);
			ck_assert(paxos_acceptor_recovering(a));
			answer(a, 2, 4, 9);
			ck_assert(!paxos_acceptor_recovering(a));
		}
		paxos_acceptor_free(a);
		paxos_storage_destroy(st);
	}
	paxos_membership_free(h);
}
END_TEST

static void proposer_answer(struct paxos_acceptor *a, uint32_t self, uint64_t incarnation)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){.role = PAXOS_ROLE_PROPOSER,
						       .sender_id = 0,
						       .acceptor_id = self,
						       .incarnation = incarnation,
						       .highest_iid = 30,
						       .highest_ballot = 2000};
	struct recorder *r = recorder_new();
	paxos_acceptor_handle(a, &m, &r->emitter);
	recorder_free(r);
}

static void hello_of(struct paxos_acceptor *a, uint32_t from, uint64_t incarnation, bool recovering)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_HELLO};
	m.u.acceptor_hello = (struct paxos_acceptor_hello){
	    .acceptor_id = from, .incarnation = incarnation, .recovering = recovering, .age = 1};
	struct recorder *r = recorder_new();
	paxos_acceptor_handle(a, &m, &r->emitter);
	recorder_free(r);
}

static void hello_recovering(struct paxos_acceptor *a, uint32_t from)
{
	hello_of(a, from, 77, true);
}

/* Acceptor 3 lost its state after 0 and 1 were retired for good: {0..4} (instances 11..20)
 * can never answer with 3 of its other members again. Once the proposer answered and 2 and 4
 * report instance 30, every instance of it lies below the floor: recovery needs no more. */
START_TEST(test_recovery_skips_ended_configuration)
{
	struct paxos_membership *h = replaced_history();
	for (int with_ends = 0; with_ends < 3; with_ends++) {
		struct paxos_counters c = {0};
		struct paxos_storage *st = paxos_storage_memory_new();
		struct paxos_acceptor *a =
		    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = 3}, st, &c);
		struct paxos_acceptor_membership m = {
		    .proposers = 1, .incarnation = 9, .amnesiac = true, .recovery_ticks = 0};
		ck_assert_uint_eq(paxos_membership_voted_in(h, 3, m.configurations,
							    with_ends ? m.configuration_ends : NULL,
							    PAXOS_ACCEPTOR_CONFIGURATIONS),
				  2);
		ck_assert_int_eq(paxos_acceptor_join(a, &m), PAXOS_OK);
		/* The third time 0 comes back without its state: {0..4} may have lost a
		 * quorum (0 and 1 of a double crash), so 3 waits and says so. */
		if (with_ends == 2)
			hello_recovering(a, 0);
		answer(a, 3, 2, 9);
		answer(a, 3, 4, 9);
		ck_assert(paxos_acceptor_recovering(a)); /* the proposer has not answered */
		proposer_answer(a, 3, 9);
		ck_assert(paxos_acceptor_recovering(a) == (with_ends != 1));
		if (with_ends == 1) {
			ck_assert_uint_eq(paxos_acceptor_floor(a), 30);
			ck_assert_uint_eq(paxos_acceptor_fence(a), 2000);
		}
		paxos_acceptor_free(a);
		paxos_storage_destroy(st);
	}
	paxos_membership_free(h);
}
END_TEST

/* As the third time above (0 and 3 lost their state together), but a hello of 0's earlier
 * life that held its state comes late, after 0's new life said it recovers: 0 still recovers,
 * so 3 still waits. It goes on once 0 itself says it recovered, or answers. */
START_TEST(test_recovery_ignores_late_hello_of_earlier_life)
{
	struct paxos_membership *h = replaced_history();
	for (int by_answer = 0; by_answer < 2; by_answer++) {
		struct paxos_counters c = {0};
		struct paxos_storage *st = paxos_storage_memory_new();
		struct paxos_acceptor *a =
		    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = 3}, st, &c);
		struct paxos_acceptor_membership m = {
		    .proposers = 1, .incarnation = 9, .amnesiac = true, .recovery_ticks = 0};
		paxos_membership_voted_in(h, 3, m.configurations, m.configuration_ends,
					  PAXOS_ACCEPTOR_CONFIGURATIONS);
		ck_assert_int_eq(paxos_acceptor_join(a, &m), PAXOS_OK);
		hello_recovering(a, 0);
		hello_of(a, 0, 55, false); /* the earlier life's, seen late */
		answer(a, 3, 2, 9);
		answer(a, 3, 4, 9);
		proposer_answer(a, 3, 9);
		ck_assert(paxos_acceptor_recovering(a));
		struct paxos_acceptor_recovery_wait w;
		paxos_acceptor_recovery_wait(a, &w);
		ck_assert_uint_eq(w.acceptors_recovering & 0x1, 0x1);
		if (by_answer) {
			answer(a, 3, 0, 9);
		} else {
			hello_of(a, 0, 77, false); /* 0 recovered */
			answer(a, 3, 2, 9);
		}
		ck_assert(!paxos_acceptor_recovering(a));
		ck_assert_uint_eq(paxos_acceptor_floor(a), 30);
		paxos_acceptor_free(a);
		paxos_storage_destroy(st);
	}
	paxos_membership_free(h);
}
END_TEST

Suite *test_suite(void)
{
	Suite *s = suite_create("membership_durable");
	TCase *t = tcase_create("core");
	tcase_add_test(t, test_restore_rules);
	tcase_add_test(t, test_voted_in);
	tcase_add_test(t, test_file_round_trip);
	tcase_add_test(t, test_recovery_counts_learned_configuration);
	tcase_add_test(t, test_recovery_skips_ended_configuration);
	tcase_add_test(t, test_recovery_ignores_late_hello_of_earlier_life);
	suite_add_tcase(s, t);
	return s;
}
