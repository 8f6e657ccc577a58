/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proposer's unit tests' harness (test_proposer*.c): the proposer through its public
 * API, against three acceptors simulated here (promise when the ballot is at least the
 * promised one, accept likewise, reject otherwise) and a tiny quorum learner that reports
 * closed/delivered instances back, like the internal learner. Messages travel through a
 * simulated network that can lose, drop by type and reorder. Instance values are frames of
 * client values (lib/core/batch.h); the learner here unpacks them and records each client
 * value with its instance and position. A ready's epoch is stored as soon as the proposer
 * emits after taking it (the first one noted in raised_to).
 */
#ifndef PAXOS_TEST_PROPOSER_FIXTURE_H
#define PAXOS_TEST_PROPOSER_FIXTURE_H

#include <paxos/options.h>
#include <paxos/proposer.h>
#include <stdbool.h>
#include <stdint.h>

#define NACC 3u
#define QUORUM 2u
#define MAX_IID 1024u
#define MAX_VALUES 2048u
#define VMAX 32u
#define NET_MAX 65536u
#define PHASE1_TIMEOUT 5000u
#define PHASE2_TIMEOUT 7000u

struct packet {
	enum paxos_group to;
	struct paxos_message m;
	uint8_t buf[VMAX];
};

struct acceptor_slot {
	paxos_ballot promised;
	paxos_ballot accepted;
	uint8_t value[VMAX];
	uint32_t len;
};

struct learner_slot {
	paxos_ballot ballot[NACC]; /* 0: nothing heard from that acceptor */
	uint8_t value[NACC][VMAX];
	uint32_t len[NACC];
	bool closed;
	uint8_t chosen[VMAX];
	uint32_t chosen_len;
	paxos_ballot chosen_ballot; /* the quorum's: its value was proposed there */
};

struct sim {
	struct paxos_proposer *p;
	struct paxos_counters counters;
	struct paxos_emitter out;
	uint32_t concurrency;
	paxos_time now;
	/* network */
	struct packet *net;
	size_t net_len;
	uint64_t rng;
	unsigned loss_percent;
	bool reorder;
	bool drop[PAXOS_MSG_TYPE_MAX + 1];
	/* acceptors and learner */
	struct acceptor_slot acc[NACC][MAX_IID];
	struct learner_slot learn[MAX_IID];
	paxos_iid next_deliver;
	char delivered[MAX_VALUES][VMAX + 1]; /* client values, in delivery order */
	paxos_iid delivered_iid[MAX_VALUES];
	uint32_t delivered_pos[MAX_VALUES];
	size_t ndelivered;
	size_t ninstances; /* instances delivered */
	size_t nskips;     /* of those, skips */
	/* what the proposer sent */
	bool accept_sent[MAX_IID];
	uint32_t max_in_phase2;
	paxos_ballot prepares[MAX_IID][8]; /* ballots of the prepares for an iid, in order */
	uint32_t nprepares[MAX_IID];
	/* Deliveries name the ballot the value was proposed at (the learner's does); what the
	 * accepts said was chosen, checked against the learner (observe). */
	bool deliver_ballots;
	paxos_iid said_from, said_to;     /* the last accept's range, 0: none said */
	bool said_rest;                   /* the last accept's spares_rest */
	size_t instances_said;            /* summed over the accepts */
	size_t chosen_sent;               /* chosen messages: an idle leader's word */
	paxos_iid chosen_from, chosen_to; /* the last one's range */
};

uint32_t rnd(struct sim *s);
void observe(struct sim *s, const struct paxos_message *m);
void net_emit(void *ctx, enum paxos_group to, const struct paxos_message *m);
/* For the next sim_new. */
extern uint32_t sim_batch_limit;
extern uint32_t sim_max_backlog;
extern paxos_time sim_skip_idle;
struct paxos_proposer_options sim_options(uint32_t window, uint32_t concurrency,
					  uint32_t pending_size);
struct sim *sim_new(uint32_t window, uint32_t concurrency, uint32_t pending_size);
void sim_free(struct sim *s);
void acceptor_reply(struct sim *s, enum paxos_group to, struct paxos_message *m);
void reject(struct sim *s, uint32_t a, paxos_iid iid, paxos_ballot promised);
void acceptor_handle(struct sim *s, uint32_t a, const struct paxos_message *m);
void deliver_ready(struct sim *s);
void learner_handle(struct sim *s, const struct paxos_accepted *ac);
bool pump(struct sim *s);
void run(struct sim *s);
void advance(struct sim *s, paxos_time dt);
int submit(struct sim *s, const char *v);
int submit_id(struct sim *s, const char *v, uint64_t id);
void frame_add(uint8_t *buf, uint32_t *used, const char *v, uint64_t id);
void lead(struct sim *s);
struct paxos_value frame1(const char *s);
bool frame1_is(const struct paxos_value *v, const char *s);
void seed_accepted(struct sim *s, uint32_t a, paxos_iid iid, paxos_ballot b, const char *v);
void send_repair(struct sim *s, paxos_iid from, paxos_iid to);
/* The first epoch a ready held, and the prepares emitted before it was reported. */
extern uint32_t raised_to;
extern uint32_t prepares_before_raise;
uint32_t prepares_seen(const struct sim *s);
void note_due(struct sim *s);

#endif
