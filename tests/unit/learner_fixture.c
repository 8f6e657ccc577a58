/* SPDX-License-Identifier: BSD-3-Clause */
/* The learner fixture (learner_fixture.h). */
#include "learner_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void copy_value(char *dst, const struct paxos_value *v)
{
	size_t n = v->len < SINK_VALUE - 1 ? v->len : SINK_VALUE - 1;
	memcpy(dst, v->data, n);
	dst[n] = '\0';
}

void on_deliver(void *arg, paxos_iid iid, const struct paxos_value *v)
{
	struct sink *s = arg;
	ck_assert_uint_lt(s->delivered, SINK_MAX);
	s->delivered_iid[s->delivered] = iid;
	copy_value(s->delivered_value[s->delivered], v);
	s->next_during_deliver[s->delivered] = paxos_learner_next_iid(s->learner);
	s->delivered++;
}

void on_closed(void *arg, paxos_iid iid, const struct paxos_value *v)
{
	struct sink *s = arg;
	(void)v;
	if (s->closed < SINK_MAX) /* instances waiting for a hole may be reported many times */
		s->closed_iid[s->closed] = iid;
	s->closed++;
}

void on_trimmed(void *arg, paxos_iid from, paxos_iid to)
{
	struct sink *s = arg;
	ck_assert_uint_lt(s->trimmed, SINK_MAX);
	s->trimmed_from[s->trimmed] = from;
	s->trimmed_to[s->trimmed] = to;
	s->delivered_before_trimmed[s->trimmed] = s->delivered;
	s->next_during_trimmed[s->trimmed] = paxos_learner_next_iid(s->learner);
	s->trimmed++;
}

struct fixture *fixture_new_sized(uint32_t window, uint32_t repeat_batch,
				  enum paxos_learner_start start, uint32_t max_value)
{
	struct fixture *f = calloc(1, sizeof(*f));
	f->sink = calloc(1, sizeof(*f->sink));
	f->rec = recorder_new();
	f->opt.acceptors = 3;
	f->opt.window = window;
	f->opt.max_value = max_value;
	f->opt.repeat_batch = repeat_batch;
	f->opt.hole_check = 1000;
	f->opt.start = start;
	f->opt.deliver = on_deliver;
	f->opt.deliver_arg = f->sink;
	f->opt.closed = on_closed;
	f->opt.closed_arg = f->sink;
	f->opt.trimmed = on_trimmed;
	f->opt.trimmed_arg = f->sink;
	f->l = paxos_learner_new(&f->opt, &f->counters);
	ck_assert_ptr_nonnull(f->l);
	f->sink->learner = f->l;
	return f;
}

struct fixture *fixture_new(uint32_t window, uint32_t repeat_batch, enum paxos_learner_start start)
{
	return fixture_new_sized(window, repeat_batch, start, 64);
}

struct fixture *fixture_default(void)
{
	return fixture_new(16, 4, PAXOS_START_FROM_FIRST);
}

void fixture_free(struct fixture *f)
{
	paxos_learner_free(f->l);
	recorder_free(f->rec);
	free(f->sink);
	free(f);
}

void send_accepted_value(struct fixture *f, paxos_iid iid, paxos_ballot ballot, uint32_t acceptor,
			 struct paxos_value v, bool final)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = iid;
	m.u.accepted.ballot = ballot;
	m.u.accepted.value = v;
	m.u.accepted.acceptor_id = acceptor;
	m.u.accepted.final = final;
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

void send_accepted(struct fixture *f, paxos_iid iid, paxos_ballot ballot, uint32_t acceptor,
		   const char *value)
{
	send_accepted_value(f, iid, ballot, acceptor, value_of(value), false);
}

void close_instance(struct fixture *f, paxos_iid iid, const char *value)
{
	send_accepted(f, iid, 101, 0, value);
	send_accepted(f, iid, 101, 1, value);
}

void send_acceptor_state(struct fixture *f, uint32_t acceptor, paxos_iid highest)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state.acceptor_id = acceptor;
	m.u.acceptor_state.highest_accepted = highest;
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

void send_quorum_state(struct fixture *f, paxos_iid highest)
{
	send_acceptor_state(f, 0, highest);
	send_acceptor_state(f, 1, highest);
}

void send_trimmed(struct fixture *f, uint32_t acceptor, paxos_iid iid)
{
	struct paxos_message m = {.type = PAXOS_MSG_TRIMMED};
	m.u.trimmed.acceptor_id = acceptor;
	m.u.trimmed.iid = iid;
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

void send_acceptor_trim(struct fixture *f, uint32_t acceptor, paxos_iid highest, paxos_iid trim)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTOR_STATE};
	m.u.acceptor_state.acceptor_id = acceptor;
	m.u.acceptor_state.highest_accepted = highest;
	m.u.acceptor_state.trim_iid = trim;
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

void later(struct fixture *f)
{
	f->now += f->opt.hole_check / 4;
}

void tick(struct fixture *f, paxos_time now)
{
	paxos_learner_tick(f->l, now, &f->rec->emitter);
}

size_t repeats(const struct fixture *f)
{
	return recorder_count(f->rec, PAXOS_MSG_REPEAT, PAXOS_GROUP_ACCEPTORS);
}

const struct paxos_repeat *repeat_at(const struct fixture *f, size_t n)
{
	const struct paxos_message *m = recorder_find(f->rec, PAXOS_MSG_REPEAT, n);
	ck_assert_ptr_nonnull(m);
	return &m->u.repeat;
}

void send_accept(struct fixture *f, paxos_iid iid, paxos_ballot ballot, const char *value)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept.iid = iid;
	m.u.accept.ballot = ballot;
	m.u.accept.value = value_of(value);
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

void send_accept_saying(struct fixture *f, paxos_iid iid, paxos_ballot ballot, const char *value,
			paxos_iid chosen_from, paxos_iid chosen_to)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPT};
	m.u.accept.iid = iid;
	m.u.accept.ballot = ballot;
	m.u.accept.value = value_of(value);
	m.u.accept.chosen_from = chosen_from;
	m.u.accept.chosen_to = chosen_to;
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

void send_chosen(struct fixture *f, paxos_ballot ballot, paxos_iid from, paxos_iid to)
{
	struct paxos_message m = {.type = PAXOS_MSG_CHOSEN};
	m.u.chosen = (struct paxos_chosen){ballot, from, to};
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

void send_valueless(struct fixture *f, paxos_iid iid, paxos_ballot ballot, uint32_t acceptor)
{
	struct paxos_message m = {.type = PAXOS_MSG_ACCEPTED};
	m.u.accepted.iid = iid;
	m.u.accepted.ballot = ballot;
	m.u.accepted.acceptor_id = acceptor;
	m.u.accepted.valueless = true;
	paxos_learner_handle(f->l, &m, f->now, &f->rec->emitter);
}

void value_text(char *buf, size_t cap, paxos_iid iid, paxos_ballot ballot)
{
	if (ballot == 1)
		snprintf(buf, cap, "stale-%llu", (unsigned long long)iid);
	else
		snprintf(buf, cap, "value-%llu", (unsigned long long)iid);
}
