/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor test fixture (acceptor_fixture.h): a memory store, counters, an acceptor and a
 * recorder of what it emits, fresh for every test. */
#include "acceptor_fixture.h"

#include <check.h>
#include <paxos/storage_backends.h>

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
