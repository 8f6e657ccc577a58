/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor test fixture shared by test_acceptor.c, test_acceptor_recovery.c and
 * test_acceptor_ready.c: one acceptor (id ACCEPTOR_ID) over a memory store, and messages handed to
 * it one at a time. */
#ifndef PAXOS_TEST_ACCEPTOR_FIXTURE_H
#define PAXOS_TEST_ACCEPTOR_FIXTURE_H

#include <paxos/acceptor.h>
#include <paxos/storage.h>

#include "support.h"

#define ACCEPTOR_ID 3u

extern struct paxos_storage *st;
extern struct paxos_counters counters;
extern struct paxos_acceptor *acc;
extern struct recorder *out; /* what the acceptor emitted */

/* Check fixture: a fresh store, acceptor and recorder; and freeing them. */
void setup(void);
void teardown(void);

/* One message to the acceptor; its status. */
int prepare(paxos_iid iid, paxos_ballot b);
int accept_value(paxos_iid iid, paxos_ballot b, struct paxos_value v);
int accept_text(paxos_iid iid, paxos_ballot b, const char *v);
int repeat(paxos_iid from, paxos_iid to);
int trim(paxos_iid iid);

/* The messages those send, to step the acceptor with. */
struct paxos_message prepare_msg(paxos_iid iid, paxos_ballot b);
struct paxos_message accept_msg(paxos_iid iid, paxos_ballot b, struct paxos_value v);
struct paxos_message repeat_msg(paxos_iid from, paxos_iid to);
struct paxos_message trim_msg(paxos_iid iid);

/* The only message recorded, which must have this type and group. */
const struct paxos_message *only(enum paxos_msg_type type, enum paxos_group group);
/* The record the store holds for iid (which must hold one). */
struct paxos_record stored(paxos_iid iid);

#endif
