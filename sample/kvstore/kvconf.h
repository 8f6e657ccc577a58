/* SPDX-License-Identifier: BSD-3-Clause */
/* kvstore.conf: what the kvstore adds to paxos.conf. The shipped file documents each key. */
#ifndef KVSTORE_KVCONF_H
#define KVSTORE_KVCONF_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

/* When a replica tells the acceptors to trim (thesis 3.4.1). */
enum kv_trim {
	KV_TRIM_ALL, /* up to the lowest snapshot of all replicas: a restart always catches up */
	KV_TRIM_OWN, /* up to its own snapshot: a replica left behind needs a peer's snapshot */
	KV_TRIM_OFF, /* never */
};

struct kv_config {
	struct sockaddr_in reply_group; /* replicas multicast replies here */
	uint32_t replicas;              /* replica ids 0..replicas-1 */
	uint32_t snapshot_every;        /* commands applied between snapshots; 0: none */
	enum kv_trim trim;
	uint32_t resubmit_ms;     /* clients' sessions resubmit a command unseen this long */
	uint32_t session_clients; /* clients the replicas' session tables keep */
	uint16_t read_port;       /* replica i of partition p serves local reads here + i +
				     replicas * p, on the multicast interface's address */
};

void kv_config_defaults(struct kv_config *c);
/* Reads path on top of the defaults; 0, or -1 with "FILE:LINE: what" in err. */
int kv_config_load(struct kv_config *c, const char *path, char *err, size_t errlen);

#endif
