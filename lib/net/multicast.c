/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The UDP multicast transport (paxos/transport.h): one sending socket, one receiving socket
 * per joined group (lib/net/udp.c opens them), read with recvmmsg when libevent says a
 * socket is readable (or when the node asks, for a lazy group) and written with sendmmsg.
 */
#include <paxos/transport.h>

#include <arpa/inet.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "udp.h"
#include "config_fields.h"

/* Datagrams one sendmmsg writes. */
#define SEND_BATCH 32

struct multicast {
	struct paxos_transport t;
	struct event_base *base;
	size_t max_datagram;
	paxos_transport_deliver_fn deliver;
	void *arg;
	struct paxos_config cfg;
	int send_fd;
	struct sockaddr_in dest[PAXOS_GROUP_COUNT];
	int recv_fd[PAXOS_GROUP_COUNT];
	struct event *recv_ev[PAXOS_GROUP_COUNT];
	bool lazy[PAXOS_GROUP_COUNT];
	bool ignored[PAXOS_GROUP_COUNT]; /* left: see mc_set_ignored */
	struct udp_rx in;                /* datagrams of max_datagram bytes */
	struct paxos_rx_datagram rx[UDP_READ_BATCH];
	struct mmsghdr tx_hdr[SEND_BATCH];
	struct iovec tx_iov[SEND_BATCH];
};

static struct multicast *of(const struct paxos_transport *t)
{
	return (struct multicast *)t;
}

static size_t read_group(struct multicast *m, enum paxos_group g)
{
	if (m->recv_fd[g] < 0)
		return 0;
	size_t got = udp_rx_read(&m->in, m->recv_fd[g]);
	for (size_t i = 0; i < got; i++)
		m->rx[i] = udp_rx_datagram(&m->in, i);
	if (got)
		m->deliver(m->arg, g, m->rx, got);
	return got;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct multicast *m = arg;
	for (int g = 0; g < PAXOS_GROUP_COUNT; g++)
		if (m->recv_fd[g] == fd) {
			read_group(m, (enum paxos_group)g);
			return;
		}
}

static int mc_join(struct paxos_transport *t, enum paxos_group g, char *err, size_t errlen)
{
	struct multicast *m = of(t);
	if (m->recv_fd[g] >= 0)
		return PAXOS_OK;
	int fd = paxos_transport_receiver(&m->cfg, g, err, errlen);
	if (fd < 0)
		return PAXOS_E_IO;
	m->recv_fd[g] = fd;
	m->recv_ev[g] = event_new(m->base, fd, EV_READ | EV_PERSIST, on_readable, m);
	if (!m->recv_ev[g] || (!m->lazy[g] && event_add(m->recv_ev[g], NULL) != 0)) {
		snprintf(err, errlen, "cannot add a socket to the event loop");
		return PAXOS_E_NOMEM;
	}
	return PAXOS_OK;
}

static int mc_set_lazy(struct paxos_transport *t, enum paxos_group g, bool lazy)
{
	struct multicast *m = of(t);
	if (m->lazy[g] == lazy)
		return PAXOS_OK;
	m->lazy[g] = lazy;
	if (!m->recv_ev[g])
		return PAXOS_OK;
	if (lazy)
		return event_del(m->recv_ev[g]) == 0 ? PAXOS_OK : PAXOS_E_IO;
	return event_add(m->recv_ev[g], NULL) == 0 ? PAXOS_OK : PAXOS_E_NOMEM;
}

/* An ignored group is left: the kernel hands the socket nothing, where a full buffer would
 * drop (and count, in the host's receive errors) every datagram of the group. */
static int mc_set_ignored(struct paxos_transport *t, enum paxos_group g, bool ignored)
{
	struct multicast *m = of(t);
	if (m->recv_fd[g] < 0 || m->ignored[g] == ignored)
		return PAXOS_OK;
	if (paxos_transport_member(m->recv_fd[g], &m->cfg, g, !ignored) != 0)
		return PAXOS_E_IO;
	m->ignored[g] = ignored;
	return PAXOS_OK;
}

static size_t mc_read(struct paxos_transport *t, enum paxos_group g)
{
	return read_group(of(t), g);
}

static size_t mc_batch(const struct paxos_transport *t)
{
	(void)t;
	return UDP_READ_BATCH;
}

/* As many per sendmmsg as the kernel takes; a datagram it refuses is skipped (UDP may lose
 * it anyway: Paxos retries). */
static void mc_send(struct paxos_transport *t, struct paxos_tx_datagram *d, size_t n)
{
	struct multicast *m = of(t);
	for (size_t base = 0; base < n; base += SEND_BATCH) {
		size_t count = n - base < SEND_BATCH ? n - base : SEND_BATCH;
		for (size_t i = 0; i < count; i++) {
			struct paxos_tx_datagram *x = &d[base + i];
			x->sent = false;
			x->copies = 0;
			m->tx_iov[i] = (struct iovec){(void *)x->data, x->len};
			m->tx_hdr[i].msg_hdr =
			    (struct msghdr){.msg_name = &m->dest[x->to],
					    .msg_namelen = sizeof(m->dest[x->to]),
					    .msg_iov = &m->tx_iov[i],
					    .msg_iovlen = 1};
		}
		size_t done = 0;
		while (done < count) {
			int sent =
			    sendmmsg(m->send_fd, m->tx_hdr + done, (unsigned)(count - done), 0);
			if (sent <= 0) {
				done++;
				continue;
			}
			for (int i = 0; i < sent; i++) {
				d[base + done + (size_t)i].sent = true;
				d[base + done + (size_t)i].copies = 1;
			}
			done += (size_t)sent;
		}
	}
}

static void mc_sender_name(const struct paxos_transport *t, const void *from, char *buf, size_t cap)
{
	(void)t;
	const struct sockaddr_in *a = from;
	char addr[INET_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET, &a->sin_addr, addr, sizeof(addr));
	snprintf(buf, cap, "%s:%u", addr, (unsigned)ntohs(a->sin_port));
}

static void mc_destroy(struct paxos_transport *t)
{
	struct multicast *m = of(t);
	if (!m)
		return;
	for (int g = 0; g < PAXOS_GROUP_COUNT; g++) {
		if (m->recv_ev[g])
			event_free(m->recv_ev[g]);
		if (m->recv_fd[g] >= 0)
			close(m->recv_fd[g]);
	}
	if (m->send_fd >= 0)
		close(m->send_fd);
	udp_rx_free(&m->in);
	free(m);
}

static const struct paxos_transport_ops multicast_ops = {
    .name = "multicast",
    .join = mc_join,
    .set_lazy = mc_set_lazy,
    .set_ignored = mc_set_ignored,
    .read = mc_read,
    .batch = mc_batch,
    .send = mc_send,
    .sender_name = mc_sender_name,
    .destroy = mc_destroy,
};

struct paxos_transport *paxos_transport_multicast_new(struct event_base *base,
						      const struct paxos_config *cfg,
						      paxos_transport_deliver_fn deliver, void *arg,
						      char *err, size_t errlen)
{
	struct multicast *m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->t.ops = &multicast_ops;
	m->base = base;
	m->cfg = *cfg;
	m->max_datagram = cfg->max_datagram;
	m->deliver = deliver;
	m->arg = arg;
	m->send_fd = -1;
	for (int g = 0; g < PAXOS_GROUP_COUNT; g++) {
		m->recv_fd[g] = -1;
		paxos_transport_address(cfg, (enum paxos_group)g, &m->dest[g]);
	}
	if (udp_rx_init(&m->in, m->max_datagram) != PAXOS_OK) {
		snprintf(err, errlen, "out of memory");
		mc_destroy(&m->t);
		return NULL;
	}
	m->send_fd = paxos_transport_sender(cfg, err, errlen);
	if (m->send_fd < 0) {
		mc_destroy(&m->t);
		return NULL;
	}
	return &m->t;
}

struct paxos_transport *paxos_transport_multicast_open(void *arg, struct event_base *base,
						       const struct paxos_config *cfg,
						       paxos_transport_deliver_fn deliver,
						       void *deliver_arg, char *err, size_t errlen)
{
	(void)arg;
	return paxos_transport_multicast_new(base, cfg, deliver, deliver_arg, err, errlen);
}
