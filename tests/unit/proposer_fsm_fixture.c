/* SPDX-License-Identifier: BSD-3-Clause */
/* The standard instance records and event inputs of the proposer state machine's tests
 * (test_proposer_fsm*.c): see test_proposer_fsm.c for what they hold. */
#include "proposer_fsm_fixture.h"

#include <check.h>
#include <string.h>

struct pending q;
uint32_t scratch[8];
struct paxos_counters counters;
struct instance_ctx ctx;
static uint8_t v1buf[MAXV], v2buf[MAXV];
struct instance inst;
struct recorder *rec;

void fsm_setup(void)
{
	ck_assert_int_eq(pending_init(&q, 4, 8, MAXV - PAXOS_BATCH_HEADER), PAXOS_OK);
	memset(&counters, 0, sizeof(counters));
	ctx = (struct instance_ctx){
	    .proposer_id = PROPOSER,
	    .acceptors = 3,
	    .max_value = MAXV,
	    .batch_limit = 1,
	    .scratch = scratch,
	    .phase1_timeout = 1000,
	    .phase2_timeout = 2000,
	    .pending = &q,
	    .counters = &counters,
	};
	rec = recorder_new();
}

void fsm_teardown(void)
{
	pending_destroy(&q);
	recorder_free(rec);
}

/* The frame of the comma-separated client values in list ("a,b": two values), in one of a
 * few rotating buffers so that several can be alive at once. */
struct paxos_value frame(const char *list)
{
	static uint8_t bufs[4][2 * MAXV + 8];
	static unsigned next;
	uint8_t *buf = bufs[next++ % 4];
	uint32_t used = 0;
	for (const char *p = list;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		struct paxos_value one = {(const uint8_t *)p, (uint32_t)n};
		ck_assert_int_eq(paxos_batch_append(buf, sizeof(bufs[0]), &used, &one), PAXOS_OK);
		if (!end)
			break;
		p = end + 1;
	}
	struct paxos_value v = {buf, used};
	return v;
}

bool frame_is(const struct paxos_value *v, const char *list)
{
	struct paxos_value want = frame(list);
	return v->len == want.len && memcmp(v->data, want.data, want.len) == 0;
}

void push(const char *s)
{
	ck_assert_int_eq(pending_push_back(&q, (const uint8_t *)s, (uint32_t)strlen(s)), PAXOS_OK);
}

void set_v1(const char *s, paxos_ballot vb)
{
	struct paxos_value f = frame(s);
	inst.v1_len = f.len;
	memcpy(inst.v1, f.data, f.len);
	inst.vb = vb;
}

/* s: comma-separated client values, framed. */
void set_v2(const char *s, bool cv)
{
	struct paxos_value f = frame(s);
	uint32_t count = 0;
	ck_assert_int_eq(paxos_batch_count(&f, &count), PAXOS_OK);
	inst.v2_len = f.len;
	memcpy(inst.v2, f.data, f.len);
	inst.has_v2 = true;
	inst.cv = cv;
	inst.values = cv ? count : 0;
}

/* The record for a state, written directly through instance.h. */
void build(enum instance_state s, enum variant var)
{
	instance_init(&inst, v1buf, v2buf);
	instance_reset(&inst, IID);
	inst.state = s;
	if (s == INSTANCE_EMPTY)
		return;
	inst.ballot = B_FIRST;
	if (s == INSTANCE_P1_PENDING) {
		inst.pset = 1u << 0;
		inst.deadline = 500;
		if (var == FOUND_V1)
			set_v1("found", 101);
	}
	if (s == INSTANCE_P2_PENDING) {
		inst.deadline = 500;
		set_v2("mine", true);
	}
	if (s == INSTANCE_CLOSED || var == CLIENT_V2)
		set_v2("mine", true);
	if (var == CLIENT_BATCH)
		set_v2("mine,more", true);
	ctx.batch_limit = var == BATCHING || var == CLIENT_BATCH ? 4 : 1;
}

struct paxos_value v2_of(const struct instance *i)
{
	struct paxos_value v = {i->v2, i->v2_len};
	return v;
}

enum instance_state fire(enum instance_event ev, const char *delivered)
{
	struct paxos_promise promise = {.iid = IID, .ballot = B_FIRST, .acceptor_id = 1};
	struct paxos_reject reject = {.iid = IID, .ballot = 507, .acceptor_id = 1};
	struct paxos_value value = frame(delivered ? delivered : "mine");
	struct instance_arg arg = {.promise = &promise, .reject = &reject, .value = &value};
	return instance_step(&ctx, &inst, ev, &arg, 1000, &rec->emitter);
}
