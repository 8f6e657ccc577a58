/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Metrics over HTTP for a node, on the node's libevent loop (paxos.conf metrics-listen):
 *   GET /metrics  every event counter of each hosted role and of the transport, and the
 *                 roles' levels (leader, ballot, instances delivered, ...), in the Prometheus
 *                 text format 0.0.4, labelled role and id
 *   GET /health   200 "ok" while the node works; 503 and the reason, one line, once it
 *                 failed (paxos_node_failed, e.g. its acceptor's storage)
 * Any other path is 404. docs/operating.md, "Metrics", lists the metric names.
 */
#ifndef PAXOS_METRICS_H
#define PAXOS_METRICS_H

#include <paxos/config.h>
#include <paxos/node.h>

struct event_base;
struct paxos_metrics;

/** Listens at cfg's metrics-listen (an IPv4 address of this host, or 0.0.0.0) and serves node,
 * which must outlive the server. Call it, and paxos_metrics_free(), from the loop's thread.
 * Returns the server, owned by the caller, or NULL on error (metrics-listen not set, address not
 * local, port in use), with err filled: "metrics-listen 127.0.0.1:9500: cannot listen: Address
 * already in use". */
PAXOS_API struct paxos_metrics *paxos_metrics_new(struct event_base *base,
						  const struct paxos_node *node,
						  const struct paxos_config *cfg, char *err,
						  size_t errlen);

/** Serves @p node too, from now on: a process that hosts several partitions (one node each)
 * adds the others' nodes to the first one's server, and /metrics labels every sample with its
 * partition; /health is 503 once any of them failed. @p node must outlive the server. Returns
 * PAXOS_OK, PAXOS_E_INVALID for NULL arguments, or PAXOS_E_FULL past PAXOS_MAX_PARTITIONS
 * nodes. Call it from the loop's thread. */
PAXOS_API int paxos_metrics_add_node(struct paxos_metrics *m, const struct paxos_node *node);

/** Stops listening, closes open connections and frees @p m; NULL is ignored. Free it before
 * the node it serves. */
PAXOS_API void paxos_metrics_free(struct paxos_metrics *m);

#endif
