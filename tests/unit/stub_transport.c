/* SPDX-License-Identifier: BSD-3-Clause */
#include "stub_transport.h"

#include <check.h>

#include <stdio.h>
#include <string.h>

#include "codec.h"

static int stub_join(struct paxos_transport *t, enum paxos_group g, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	((struct stub *)t)->joined[g] = true;
	return PAXOS_OK;
}

static int stub_set_lazy(struct paxos_transport *t, enum paxos_group g, bool lazy)
{
	((struct stub *)t)->lazy[g] = lazy;
	return PAXOS_OK;
}

static size_t stub_read(struct paxos_transport *t, enum paxos_group g)
{
	struct stub *s = (struct stub *)t;
	s->reads[g]++;
	if (!s->waiting[g])
		return 0;
	struct paxos_rx_datagram d = {.data = s->waiting[g], .len = s->waiting_len[g]};
	s->waiting[g] = NULL;
	s->deliver(s->deliver_arg, g, &d, 1);
	return 1;
}

static size_t stub_batch(const struct paxos_transport *t)
{
	(void)t;
	return 1;
}

static void stub_send(struct paxos_transport *t, struct paxos_tx_datagram *d, size_t n)
{
	struct stub *s = (struct stub *)t;
	for (size_t i = 0; i < n; i++) {
		d[i].sent = s->sent < STUB_MAX && d[i].len <= sizeof(s->sent_data[0]);
		d[i].copies = d[i].sent;
		if (!d[i].sent)
			continue;
		s->sent_to[s->sent] = d[i].to;
		memcpy(s->sent_data[s->sent], d[i].data, d[i].len);
		s->sent_len[s->sent++] = d[i].len;
	}
}

static void stub_sender_name(const struct paxos_transport *t, const void *from, char *buf,
			     size_t cap)
{
	(void)t;
	(void)from;
	snprintf(buf, cap, "stub");
}

static void stub_destroy(struct paxos_transport *t)
{
	((struct stub *)t)->destroyed = true;
}

static const struct paxos_transport_ops stub_ops = {
    .name = "stub",
    .join = stub_join,
    .set_lazy = stub_set_lazy,
    .read = stub_read,
    .batch = stub_batch,
    .send = stub_send,
    .sender_name = stub_sender_name,
    .destroy = stub_destroy,
};

/* As unicast does: where the node sends to acceptor id from now on. */
static int stub_set_address(struct paxos_transport *t, enum paxos_role role, uint32_t id,
			    const struct paxos_endpoint *e)
{
	struct stub *s = (struct stub *)t;
	if (role != PAXOS_ROLE_ACCEPTOR || id >= PAXOS_MAX_ACCEPTORS || !e || !e->port)
		return PAXOS_E_INVALID;
	s->acceptor_address[id] = *e;
	s->addresses_set++;
	return PAXOS_OK;
}

static const struct paxos_transport_ops stub_unicast_ops = {
    .name = "stub-unicast",
    .join = stub_join,
    .set_lazy = stub_set_lazy,
    .read = stub_read,
    .batch = stub_batch,
    .send = stub_send,
    .sender_name = stub_sender_name,
    .destroy = stub_destroy,
    .set_address = stub_set_address,
};

struct paxos_transport *stub_open(void *arg, struct event_base *base,
				  const struct paxos_config *cfg,
				  paxos_transport_deliver_fn deliver, void *deliver_arg, char *err,
				  size_t errlen)
{
	(void)base;
	(void)cfg;
	(void)err;
	(void)errlen;
	struct stub *s = arg;
	s->t.ops = s->unicast ? &stub_unicast_ops : &stub_ops;
	s->deliver = deliver;
	s->deliver_arg = deliver_arg;
	return &s->t;
}

size_t stub_encode(uint8_t *buf, size_t cap, enum paxos_role role, uint32_t id, uint32_t version,
		   const struct paxos_message *m)
{
	struct paxos_header from = {.role = role, .sender_id = id, .version = version};
	struct paxos_encoder e;
	paxos_encoder_init(&e, buf, cap, &from);
	ck_assert_int_eq(paxos_encoder_add(&e, m), PAXOS_OK);
	return e.len;
}

void stub_deliver(struct stub *s, enum paxos_group g, enum paxos_role role, uint32_t id,
		  const struct paxos_message *m)
{
	uint8_t buf[STUB_DATAGRAM];
	struct paxos_rx_datagram d = {.data = buf,
				      .len = stub_encode(buf, sizeof(buf), role, id, 0, m)};
	s->deliver(s->deliver_arg, g, &d, 1);
}

void stub_each_sent(const struct stub *s, size_t first, stub_message_fn each, void *arg)
{
	struct paxos_decoder dec;
	paxos_decoder_init(&dec);
	for (size_t i = first; i < s->sent; i++) {
		struct paxos_header h;
		struct paxos_message m[PAXOS_MAX_MESSAGES_PER_DATAGRAM];
		size_t count;
		ck_assert_int_eq(paxos_decode(&dec, s->sent_data[i], s->sent_len[i], &h, m,
					      PAXOS_MAX_MESSAGES_PER_DATAGRAM, &count),
				 PAXOS_OK);
		for (size_t k = 0; k < count; k++)
			each(arg, &h, &m[k]);
	}
	paxos_decoder_destroy(&dec);
}

static int epochs_next(struct paxos_epoch_store *es, uint32_t *epoch)
{
	*epoch = ++((struct memory_epochs *)es)->stored;
	return PAXOS_OK;
}

static int epochs_store(struct paxos_epoch_store *es, uint32_t epoch)
{
	((struct memory_epochs *)es)->stored = epoch;
	return PAXOS_OK;
}

static void epochs_destroy(struct paxos_epoch_store *es)
{
	(void)es;
}

static const char *epochs_error(struct paxos_epoch_store *es)
{
	(void)es;
	return "";
}

const struct paxos_epoch_store_ops memory_epoch_ops = {
    .name = "stub",
    .next = epochs_next,
    .store = epochs_store,
    .destroy = epochs_destroy,
    .error = epochs_error,
};
