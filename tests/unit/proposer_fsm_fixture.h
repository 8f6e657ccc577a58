/* SPDX-License-Identifier: BSD-3-Clause */
/* The fixture of the proposer state machine's tests (proposer_fsm_fixture.c). */
#ifndef PAXOS_TEST_PROPOSER_FSM_FIXTURE_H
#define PAXOS_TEST_PROPOSER_FSM_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "batch.h"
#include "instance.h"
#include "pending.h"
#include "support.h"

#define IID 7u
#define PROPOSER 2u
#define B_FIRST 102u
#define MAXV 64u

/* BATCHING: batch_limit 4 instead of 1; CLIENT_BATCH: v2 is the client frame "mine,more". */
enum variant { PLAIN, FOUND_V1, CLIENT_V2, BATCHING, CLIENT_BATCH };

extern struct pending q;
extern uint32_t scratch[8];
extern struct paxos_counters counters;
extern struct instance_ctx ctx;
extern struct instance inst;
extern struct recorder *rec;

/* A pending list of 4, ctx for proposer 2 of 3 acceptors, a fresh recorder; and their end. */
void fsm_setup(void);
void fsm_teardown(void);
/* The frame of the comma-separated client values in list ("a,b": two values). */
struct paxos_value frame(const char *list);
bool frame_is(const struct paxos_value *v, const char *list);
/* s appended to the pending list. */
void push(const char *s);
/* inst's v1 (found at vb) and v2 (comma-separated client values, cv: ours), framed. */
void set_v1(const char *s, paxos_ballot vb);
void set_v2(const char *s, bool cv);
/* The standard record for a state (test_proposer_fsm.c says what it holds). */
void build(enum instance_state s, enum variant var);
struct paxos_value v2_of(const struct instance *i);
/* Event ev on inst at time 1000, with the standard inputs; D delivers `delivered` ("mine"
 * when NULL). */
enum instance_state fire(enum instance_event ev, const char *delivered);

#endif
