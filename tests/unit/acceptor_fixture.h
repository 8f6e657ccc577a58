/* SPDX-License-Identifier: BSD-3-Clause */
/* The acceptor test fixture shared by the test_acceptor*.c suites: one acceptor (id ACCEPTOR_ID)
 * over a memory store, and messages handed to it one at a time; a storage that fails on
 * demand, and an emitter that watches its transactions. */
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

/*
 * ---- a storage that fails on demand ----
 * It wraps the memory backend and holds it to the letter of the interface: a value from get
 * is a copy that put, trim and commit overwrite, so an acceptor that used one too late
 * would send garbage.
 */

enum storage_op { OP_BEGIN, OP_GET, OP_PUT, OP_COMMIT, OP_TRIM, OP_NONE };

#define STRICT_VALUE_MAX 256u

struct failing_storage {
	struct paxos_storage base;
	struct paxos_storage *inner;
	enum storage_op fail;
	uint8_t value[STRICT_VALUE_MAX];
	unsigned begins, commits; /* successful ones */
	bool open;                /* between a begin and its commit */
};

/* The acceptor made anew over a failing storage (never failing until fail is set). */
struct failing_storage *use_failing_storage(void);

/* Group commit: an emitter that counts the replies that leave while a transaction of the
 * watched storage is open (or before its first commit), then records them in out. */
extern struct failing_storage *watched;
extern unsigned emitted_before_commit;
extern const struct paxos_emitter watched_out;
/* msgs to the acceptor as one batch, through watched_out. */
int batch(const struct paxos_message *msgs, size_t n);
/* The acceptor made anew over a failing storage it watches. */
struct failing_storage *use_watched_storage(void);

/* Recovery from lost state: the acceptor joins 5 acceptors and 2 proposers (amnesiac: without
 * its earlier state); a RECOVER_INFO answer from role/sender; hellos from acceptor id; a hello
 * and an acceptor's answer naming a log generation; a join of an amnesiac that kept its
 * generation. */
void join(bool amnesiac, uint64_t incarnation);
int info(uint32_t role, uint32_t sender, uint64_t incarnation, paxos_iid iid, paxos_ballot ballot);
int hello_from(uint32_t id, uint64_t incarnation, bool recovering, uint64_t age, uint64_t echo);
int hello(uint32_t id, uint64_t incarnation, bool recovering);
int hello_gen(uint32_t id, uint64_t incarnation, bool recovering, uint64_t generation);
int answer_gen(uint32_t sender, uint64_t generation, bool founder);
void join_kept(uint64_t generation);

#endif
