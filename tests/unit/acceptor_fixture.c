/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor test fixture (acceptor_fixture.h): a memory store, counters, an acceptor and a
 * recorder of what it emits, fresh for every test. */
#include "acceptor_fixture.h"

#include <check.h>
#include <paxos/storage_backends.h>

#include <stdlib.h>
#include <string.h>

struct paxos_storage *st;
struct paxos_counters counters;
struct paxos_acceptor *acc;
struct recorder *out;

void setup(void)
{
	st = paxos_storage_memory_new();
	ck_assert_ptr_nonnull(st);
	memset(&counters, 0, sizeof(counters));
	acc =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = ACCEPTOR_ID}, st, &counters);
	ck_assert_ptr_nonnull(acc);
	out = recorder_new();
}

void teardown(void)
{
	paxos_acceptor_free(acc);
	paxos_storage_destroy(st);
	recorder_free(out);
}

int prepare(paxos_iid iid, paxos_ballot b)
{
	struct paxos_message m = {.type = PAXOS_MSG_PREPARE};
	m.u.prepare.iid = iid;
	m.u.prepare.ballot = b;
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

int accept_value(paxos_iid iid, paxos_ballot b, struct paxos_value v)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept.iid = iid;
	m.u.accept.ballot = b;
	m.u.accept.value = v;
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

int accept_text(paxos_iid iid, paxos_ballot b, const char *v)
{
	return accept_value(iid, b, value_of(v));
}

int repeat(paxos_iid from, paxos_iid to)
{
	struct paxos_message m = {.type = PAXOS_MSG_REPEAT};
	m.u.repeat.from = from;
	m.u.repeat.to = to;
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

int trim(paxos_iid iid)
{
	struct paxos_message m = {.type = PAXOS_MSG_TRIM};
	m.u.trim.iid = iid;
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

/* The only message recorded, which must have this type and group. */
const struct paxos_message *only(enum paxos_msg_type type, enum paxos_group group)
{
	ck_assert_uint_eq(out->count, 1);
	ck_assert_int_eq(out->msg[0].type, type);
	ck_assert_int_eq(out->group[0], group);
	return &out->msg[0];
}

struct paxos_record stored(paxos_iid iid)
{
	struct paxos_record rec;
	ck_assert_int_eq(st->ops->get(st, iid, &rec), 1);
	return rec;
}

struct paxos_message prepare_msg(paxos_iid iid, paxos_ballot b)
{
	struct paxos_message m = {.type = PAXOS_MSG_PREPARE};
	m.u.prepare.iid = iid;
	m.u.prepare.ballot = b;
	return m;
}

struct paxos_message accept_msg(paxos_iid iid, paxos_ballot b, struct paxos_value v)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept.iid = iid;
	m.u.accept.ballot = b;
	m.u.accept.value = v;
	return m;
}

struct paxos_message repeat_msg(paxos_iid from, paxos_iid to)
{
	struct paxos_message m = {.type = PAXOS_MSG_REPEAT};
	m.u.repeat.from = from;
	m.u.repeat.to = to;
	return m;
}

struct paxos_message trim_msg(paxos_iid iid)
{
	struct paxos_message m = {.type = PAXOS_MSG_TRIM};
	m.u.trim.iid = iid;
	return m;
}

static void poison(struct failing_storage *f)
{
	memset(f->value, 0xdd, sizeof(f->value));
}

static struct failing_storage *failing(struct paxos_storage *s)
{
	return (struct failing_storage *)s;
}

static int failing_begin(struct paxos_storage *s)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_BEGIN)
		return PAXOS_E_STORAGE;
	ck_assert(!f->open);
	f->begins++;
	f->open = true;
	return f->inner->ops->begin(f->inner);
}

static int failing_commit(struct paxos_storage *s)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_COMMIT)
		return PAXOS_E_STORAGE;
	ck_assert(f->open);
	f->commits++;
	f->open = false;
	int rc = f->inner->ops->commit(f->inner);
	poison(f);
	return rc;
}

static int failing_get(struct paxos_storage *s, paxos_iid iid, struct paxos_record *rec)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_GET)
		return PAXOS_E_STORAGE;
	int rc = f->inner->ops->get(f->inner, iid, rec);
	if (rc == 1 && rec->value.len > 0) {
		ck_assert_uint_le(rec->value.len, STRICT_VALUE_MAX);
		memcpy(f->value, rec->value.data, rec->value.len);
		rec->value.data = f->value;
	}
	return rc;
}

static int failing_put(struct paxos_storage *s, const struct paxos_record *rec)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_PUT)
		return PAXOS_E_STORAGE;
	int rc = f->inner->ops->put(f->inner, rec);
	poison(f);
	return rc;
}

static int failing_trim(struct paxos_storage *s, paxos_iid iid)
{
	struct failing_storage *f = failing(s);
	if (f->fail == OP_TRIM)
		return PAXOS_E_STORAGE;
	int rc = f->inner->ops->trim(f->inner, iid);
	poison(f);
	return rc;
}

static paxos_iid failing_trim_iid(struct paxos_storage *s)
{
	return failing(s)->inner->ops->trim_iid(failing(s)->inner);
}

static paxos_iid failing_highest_accepted(struct paxos_storage *s)
{
	return failing(s)->inner->ops->highest_accepted(failing(s)->inner);
}

static void failing_destroy(struct paxos_storage *s)
{
	paxos_storage_destroy(failing(s)->inner);
	free(s);
}

static const struct paxos_storage_ops failing_ops = {
    .name = "failing",
    .begin = failing_begin,
    .commit = failing_commit,
    .get = failing_get,
    .put = failing_put,
    .trim = failing_trim,
    .trim_iid = failing_trim_iid,
    .highest_accepted = failing_highest_accepted,
    .destroy = failing_destroy,
};

/* Replaces the fixture's storage and acceptor with ones over a failing storage. */
struct failing_storage *use_failing_storage(void)
{
	paxos_acceptor_free(acc);
	struct failing_storage *f = calloc(1, sizeof(*f));
	f->base.ops = &failing_ops;
	f->inner = st;
	f->fail = OP_NONE;
	st = &f->base;
	acc =
	    paxos_acceptor_new(&(struct paxos_acceptor_options){.id = ACCEPTOR_ID}, st, &counters);
	ck_assert_ptr_nonnull(acc);
	return f;
}

/* An emitter that checks no reply leaves while a transaction is open, then records it. */
struct failing_storage *watched;
unsigned emitted_before_commit;

static void watched_emit(void *ctx, enum paxos_group to, const struct paxos_message *m)
{
	(void)ctx;
	if (watched->open || watched->commits == 0)
		emitted_before_commit++;
	out->emitter.emit(out->emitter.ctx, to, m);
}

const struct paxos_emitter watched_out = {.emit = watched_emit, .ctx = NULL};

int batch(const struct paxos_message *msgs, size_t n)
{
	return paxos_acceptor_handle_batch(acc, msgs, n, &watched_out);
}

struct failing_storage *use_watched_storage(void)
{
	watched = use_failing_storage();
	emitted_before_commit = 0;
	return watched;
}

/* ---- recovery from lost state (test_acceptor_recovery.c, test_acceptor_first_start.c) ---- */

void join(bool amnesiac, uint64_t incarnation)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = incarnation,
					      .amnesiac = amnesiac,
					      .recovery_ticks = 0};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
}

int info(uint32_t role, uint32_t sender, uint64_t incarnation, paxos_iid iid, paxos_ballot ballot)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){role, sender, ACCEPTOR_ID, incarnation,
						       iid,  ballot, 0,           false};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

int hello_from(uint32_t id, uint64_t incarnation, bool recovering, uint64_t age, uint64_t echo)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_HELLO};
	m.u.acceptor_hello =
	    (struct paxos_acceptor_hello){id, incarnation, recovering, age, echo, 0};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

int hello(uint32_t id, uint64_t incarnation, bool recovering)
{
	return hello_from(id, incarnation, recovering, 0, 0);
}

/* hello_from with a generation: a recovering acceptor's hello carries the highest it voted in. */
int hello_gen(uint32_t id, uint64_t incarnation, bool recovering, uint64_t generation)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_HELLO};
	m.u.acceptor_hello = (struct paxos_acceptor_hello){.acceptor_id = id,
							   .incarnation = incarnation,
							   .recovering = recovering,
							   .generation = generation};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

/* A peer's answer with the log it serves and whether we founded it. */
int answer_gen(uint32_t sender, uint64_t generation, bool founder)
{
	struct paxos_message m = {.type = PAXOS_MSG_RECOVER_INFO};
	m.u.recover_info = (struct paxos_recover_info){.role = PAXOS_ROLE_ACCEPTOR,
						       .sender_id = sender,
						       .acceptor_id = ACCEPTOR_ID,
						       .incarnation = 77,
						       .highest_iid = 0,
						       .highest_ballot = 0,
						       .generation = generation,
						       .founder = founder};
	return paxos_acceptor_handle(acc, &m, &out->emitter);
}

void join_kept(uint64_t generation)
{
	struct paxos_acceptor_membership m = {.acceptors = 5,
					      .proposers = 2,
					      .incarnation = 77,
					      .amnesiac = true,
					      .recovery_ticks = 2,
					      .generation = generation};
	ck_assert_int_eq(paxos_acceptor_join(acc, &m), PAXOS_OK);
}
