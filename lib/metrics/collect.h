/* SPDX-License-Identifier: BSD-3-Clause */
/* What a node exposes as metrics: its counters and levels as samples for the exposition
 * (lib/core/exposition.h), read through the node's public interface only. */
#ifndef PAXOS_METRICS_COLLECT_H
#define PAXOS_METRICS_COLLECT_H

#include <paxos/node.h>

#include "exposition.h"

/* The most samples metrics_collect writes. */
size_t metrics_sample_room(void);

/* Fills out (metrics_sample_room() of them) with every counter of each hosted role and of the
 * transport, then the hosted roles' levels. Returns how many. */
size_t metrics_collect(const struct paxos_node *n, struct paxos_sample *out);

#endif
