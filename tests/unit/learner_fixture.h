/* SPDX-License-Identifier: BSD-3-Clause */
/* One learner core under test, what its callbacks saw, and the messages the tests hand it
 * (tests/unit/test_learner*.c). */
#ifndef PAXOS_TEST_LEARNER_FIXTURE_H
#define PAXOS_TEST_LEARNER_FIXTURE_H

#include <paxos/learner.h>

#include "support.h"

#define SINK_MAX 8192
#define SINK_VALUE 64

/* What the callbacks saw, in order. */
struct sink {
	struct paxos_learner *learner;
	size_t delivered;
	paxos_iid delivered_iid[SINK_MAX];
	char delivered_value[SINK_MAX][SINK_VALUE];
	paxos_iid next_during_deliver[SINK_MAX];
	size_t closed;
	paxos_iid closed_iid[SINK_MAX];
	size_t trimmed;
	paxos_iid trimmed_from[SINK_MAX], trimmed_to[SINK_MAX];
	size_t delivered_before_trimmed[SINK_MAX];
	paxos_iid next_during_trimmed[SINK_MAX];
};

/* One learner under test with everything it talks to. */
struct fixture {
	struct paxos_learner_options opt;
	struct paxos_counters counters;
	struct sink *sink;
	struct recorder *rec;
	struct paxos_learner *l;
	paxos_time now; /* the time messages arrive at */
};

/* A value as a C string, into SINK_VALUE bytes. */
void copy_value(char *dst, const struct paxos_value *v);
void on_deliver(void *arg, paxos_iid iid, const struct paxos_value *v);
void on_closed(void *arg, paxos_iid iid, const struct paxos_value *v);
void on_trimmed(void *arg, paxos_iid from, paxos_iid to);
/* A vote's value: "stale-IID" at ballot 1, else "value-IID". */
void value_text(char *buf, size_t cap, paxos_iid iid, paxos_ballot ballot);
struct fixture *fixture_new_sized(uint32_t window, uint32_t repeat_batch,
				  enum paxos_learner_start start, uint32_t max_value);
struct fixture *fixture_new(uint32_t window, uint32_t repeat_batch, enum paxos_learner_start start);
struct fixture *fixture_default(void);
void fixture_free(struct fixture *f);
void send_accepted_value(struct fixture *f, paxos_iid iid, paxos_ballot ballot, uint32_t acceptor,
			 struct paxos_value v, bool final);
void send_accepted(struct fixture *f, paxos_iid iid, paxos_ballot ballot, uint32_t acceptor,
		   const char *value);
/* Closes iid at ballot 101 with acceptors 0 and 1. */
void close_instance(struct fixture *f, paxos_iid iid, const char *value);
void send_acceptor_state(struct fixture *f, uint32_t acceptor, paxos_iid highest);
/* Acceptors 0 and 1, a quorum of the 3, report instances up to highest. */
void send_quorum_state(struct fixture *f, paxos_iid highest);
void send_trimmed(struct fixture *f, uint32_t acceptor, paxos_iid iid);
void send_acceptor_trim(struct fixture *f, uint32_t acceptor, paxos_iid highest, paxos_iid trim);
/* A quarter hole check on: a learner that asked the acceptors for what a quorum reports
 * trimmed skips it at the next report from then on. */
void later(struct fixture *f);
void tick(struct fixture *f, paxos_time now);
size_t repeats(const struct fixture *f);
const struct paxos_repeat *repeat_at(const struct fixture *f, size_t n);
void send_accept(struct fixture *f, paxos_iid iid, paxos_ballot ballot, const char *value);
/* The leader's accept, saying that in chosen_from..chosen_to its accepts at ballot were
 * chosen (paxos_accept.chosen_to; 0, 0: nothing said). */
/* An idle leader's word on what was chosen (paxos_chosen). */
void send_chosen(struct fixture *f, paxos_ballot ballot, paxos_iid from, paxos_iid to);
void send_accept_saying(struct fixture *f, paxos_iid iid, paxos_ballot ballot, const char *value,
			paxos_iid chosen_from, paxos_iid chosen_to);
/* An acceptor's answer to an accept: (iid, ballot) without the value. */
void send_valueless(struct fixture *f, paxos_iid iid, paxos_ballot ballot, uint32_t acceptor);

#endif
