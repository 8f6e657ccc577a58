/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The network seam: a node hands whole datagrams to a transport and gets whole datagrams back
 * from it, per role group (paxos/types.h); it knows no socket. The transport reads and sends
 * in batches: everything one read returns is delivered together (an acceptor makes it one
 * group commit). libpaxos ships two: UDP multicast (one group per role group) and UDP
 * unicast (each member at its own address, learners subscribing); another (kernel bypass, a
 * simulated network) fills in the same table.
 */
#ifndef PAXOS_TRANSPORT_H
#define PAXOS_TRANSPORT_H

#include <paxos/config.h>
#include <paxos/types.h>

struct event_base;
struct paxos_transport;

/** A datagram received: valid during the deliver call only. */
struct paxos_rx_datagram {
	uint8_t *data;    /**< the datagram's bytes, owned by the transport */
	size_t len;       /**< how many bytes data holds */
	bool truncated;   /**< longer than max-datagram: cut, not to be decoded */
	const void *from; /**< the sender, for paxos_transport_ops.sender_name */
	/** The sender's address as a number, equal for datagrams of one socket (0: the transport
	 * cannot tell). The node believes one address per member id at a time (lib/node/origin.h).
	 */
	uint64_t origin;
};

/** A datagram to send to a group; sent says whether the network took it, copies how many
 * times (1 for a multicast group, once per member it reached for unicast). */
struct paxos_tx_datagram {
	enum paxos_group to; /**< the group to send it to */
	/** The bytes, owned by the caller; sent or copied before send returns. */
	const uint8_t *data;
	size_t len;      /**< how many bytes data holds */
	bool sent;       /**< set by send: whether the network took it */
	uint32_t copies; /**< set by send: how many copies left */
};

/** The node's side: n datagrams read from group g at once. */
typedef void (*paxos_transport_deliver_fn)(void *arg, enum paxos_group g,
					   struct paxos_rx_datagram *d, size_t n);

/** A transport's functions, one table per implementation. The node calls them from its event
 * loop thread only, and the transport delivers on that thread (from base's callbacks). */
struct paxos_transport_ops {
	const char *name; /**< the transport's name: "multicast", "unicast" */
	/** The node hosts role id (an acceptor or a proposer; the serializer is both acceptor 0 and
	 * proposer 0): receive what is sent to that member from now on. Called before the joins
	 * that need it. NULL: the transport needs no member addresses (multicast). */
	int (*host)(struct paxos_transport *t, enum paxos_role role, uint32_t id, char *err,
		    size_t errlen);
	/** Receive group g from now on, delivering as datagrams arrive. */
	int (*join)(struct paxos_transport *t, enum paxos_group g, char *err, size_t errlen);
	/** Lazy: do not deliver group g as it arrives; the node reads it with read(). */
	int (*set_lazy)(struct paxos_transport *t, enum paxos_group g, bool lazy);
	/** One batch of what waits on group g, delivered now; returns how many were read. */
	size_t (*read)(struct paxos_transport *t, enum paxos_group g);
	/** The most datagrams one read returns. */
	size_t (*batch)(const struct paxos_transport *t);
	/** Sends d[0..n) (any number), setting each one's sent. */
	void (*send)(struct paxos_transport *t, struct paxos_tx_datagram *d, size_t n);
	/** The sender of a datagram read, in words ("10.0.0.1:7103"). */
	void (*sender_name)(const struct paxos_transport *t, const void *from, char *buf,
			    size_t cap);
	void (*destroy)(struct paxos_transport *t); /**< closes its sockets and frees it */
	/** Member role id is at address @p e from now on (membership-alpha: an acceptor added
	 * with its address in the command). NULL: the transport needs no addresses
	 * (multicast). */
	int (*set_address)(struct paxos_transport *t, enum paxos_role role, uint32_t id,
			   const struct paxos_endpoint *e);
	/** Ignored: what arrives on lazy group g until this is undone is stale to the node,
	 * which will read it only to drop it; the transport may let the kernel drop it instead
	 * (a receive buffer at its minimum) so that taking the group back costs a read or two,
	 * not a socket buffer's worth. NULL: the node reads and drops it. */
	int (*set_ignored)(struct paxos_transport *t, enum paxos_group g, bool ignored);
};

/** A transport: implementations embed this as their first member. Owned by the node it was
 * opened for. */
struct paxos_transport {
	const struct paxos_transport_ops *ops; /**< the implementation */
};

/** Opens a transport for a node: deliver(deliver_arg, ...) is where it hands what it reads. */
typedef struct paxos_transport *(*paxos_transport_open_fn)(void *arg, struct event_base *base,
							   const struct paxos_config *cfg,
							   paxos_transport_deliver_fn deliver,
							   void *deliver_arg, char *err,
							   size_t errlen);

/** UDP multicast on base's event loop: one group per role (paxos.conf's *-group addresses),
 * sent from multicast-interface with multicast-ttl; datagrams of up to max-datagram bytes. */
PAXOS_API struct paxos_transport *paxos_transport_multicast_new(struct event_base *base,
								const struct paxos_config *cfg,
								paxos_transport_deliver_fn deliver,
								void *arg, char *err,
								size_t errlen);

/** UDP unicast on base's event loop: a hosted acceptor or proposer receives on its configured
 * address (paxos.conf "acceptor ID HOST:PORT"); a learner receives on a port of its own and
 * subscribes to every acceptor (and proposer, whose accepts it hears) with a lease of
 * subscription-lease-ms, renewed while it runs. Sending to a group sends to each of its members
 * (learners: each live subscriber; a proposer's accepts: its subscribers too). */
PAXOS_API struct paxos_transport *paxos_transport_unicast_new(struct event_base *base,
							      const struct paxos_config *cfg,
							      paxos_transport_deliver_fn deliver,
							      void *arg, char *err, size_t errlen);

/** The transport cfg names (paxos.conf "transport"), as a paxos_transport_open_fn (arg unused). */
PAXOS_API struct paxos_transport *paxos_transport_open(void *arg, struct event_base *base,
						       const struct paxos_config *cfg,
						       paxos_transport_deliver_fn deliver,
						       void *deliver_arg, char *err, size_t errlen);

/** paxos_transport_multicast_new as a paxos_transport_open_fn (arg unused). */
PAXOS_API struct paxos_transport *paxos_transport_multicast_open(void *arg, struct event_base *base,
								 const struct paxos_config *cfg,
								 paxos_transport_deliver_fn deliver,
								 void *deliver_arg, char *err,
								 size_t errlen);

#endif
