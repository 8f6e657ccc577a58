/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A node's samples: the counters of each hosted role (the transport's as role "transport",
 * id 0) and the levels of paxos/node.h as gauges. A learner is role "learner", id 0, in
 * every process that has one: a learner binary, and a proposer or learning acceptor, which
 * learn through one of their own. With several partitions each sample is labelled with its
 * node's partition.
 */
#include "collect.h"

/* Indexed by enum paxos_role; clients have nothing to report. */
static const char *const role_names[PAXOS_ROLE_COUNT] = {"acceptor", "proposer", "learner", NULL};

/* The levels, at most this many per node (see add_levels). */
#define LEVELS_MAX 16

size_t metrics_sample_room(void)
{
	return (PAXOS_ROLE_COUNT + 1) * paxos_counter_count() + LEVELS_MAX;
}

static size_t gauge(struct paxos_sample *out, const char *name, const char *help,
		    enum paxos_role role, uint32_t id, uint64_t value)
{
	*out = (struct paxos_sample){.name = name,
				     .help = help,
				     .type = PAXOS_METRIC_GAUGE,
				     .role = role_names[role],
				     .id = id,
				     .value = value};
	return 1;
}

/* A level of paxos/node.h, read for the role it belongs to: the same signature for all, so
 * that one table lists them. */
typedef uint64_t level_reader(const struct paxos_node *n, uint32_t id);

#define READ_NODE(fn)                                                                              \
	static uint64_t read_##fn(const struct paxos_node *n, uint32_t id)                         \
	{                                                                                          \
		(void)id;                                                                          \
		return (uint64_t)paxos_node_##fn(n);                                               \
	}
READ_NODE(leader)
READ_NODE(quorum_heard)
READ_NODE(ballot)
READ_NODE(pending)
READ_NODE(window_in_use)
READ_NODE(highest_seen)
READ_NODE(generation)
READ_NODE(highest_accepted)
READ_NODE(trimmed)
READ_NODE(recovering)
#undef READ_NODE

static uint64_t read_leading(const struct paxos_node *n, uint32_t id)
{
	return paxos_node_leader(n) == id;
}

static uint64_t read_delivered(const struct paxos_node *n, uint32_t id)
{
	(void)id;
	paxos_iid next = paxos_node_next_iid(n);
	return next ? next - 1 : 0;
}

static const struct level {
	enum paxos_role role;
	const char *name, *help;
	level_reader *read;
} levels[] = {
    {PAXOS_ROLE_PROPOSER, "proposer_leader", "the proposer this one takes for the leader",
     read_leader},
    {PAXOS_ROLE_PROPOSER, "proposer_leading", "1 while this proposer leads, else 0", read_leading},
    {PAXOS_ROLE_PROPOSER, "proposer_quorum",
     "1 while it hears an acceptor quorum, else 0: out of the election (check-quorum)",
     read_quorum_heard},
    {PAXOS_ROLE_PROPOSER, "proposer_ballot", "the highest ballot it prepared with", read_ballot},
    {PAXOS_ROLE_PROPOSER, "proposer_pending_values",
     "client values waiting in the pending list (pending-list-size)", read_pending},
    {PAXOS_ROLE_PROPOSER, "proposer_window_in_use",
     "instances of the window holding a value, in phase 2 or closed and waiting for delivery "
     "(proposer-window)",
     read_window_in_use},
    {PAXOS_ROLE_LEARNER, "learner_delivered_instance",
     "the highest instance delivered in order (0: none)", read_delivered},
    {PAXOS_ROLE_LEARNER, "learner_seen_instance",
     "the highest instance the acceptors report accepted", read_highest_seen},
    {PAXOS_ROLE_LEARNER, "learner_log_generation",
     "the generation of the log it delivers (a new log restarts at 1)", read_generation},
    {PAXOS_ROLE_ACCEPTOR, "acceptor_accepted_instance",
     "the highest instance its store holds an accepted value of", read_highest_accepted},
    {PAXOS_ROLE_ACCEPTOR, "acceptor_trimmed_instance",
     "the highest instance trimmed from its store (0: none)", read_trimmed},
    {PAXOS_ROLE_ACCEPTOR, "acceptor_recovering",
     "1 while it recovers lost state and withholds its votes, else 0", read_recovering},
};

static size_t add_levels(const struct paxos_node *n, enum paxos_role role, uint32_t id,
			 struct paxos_sample *out)
{
	size_t k = 0;
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (levels[i].role == role)
			k += gauge(out + k, levels[i].name, levels[i].help, role, id,
				   levels[i].read(n, id));
	uint64_t used, limit;
	if (role == PAXOS_ROLE_ACCEPTOR && paxos_node_storage_space(n, &used, &limit) == PAXOS_OK) {
		k += gauge(out + k, "acceptor_storage_bytes",
			   "bytes its store takes (lmdb: map pages up to the highest in use)", role,
			   id, used);
		if (limit)
			k += gauge(out + k, "acceptor_storage_limit_bytes",
				   "the most its store may take (lmdb-map-size)", role, id, limit);
	}
	return k;
}

size_t metrics_collect(const struct paxos_node *n, struct paxos_sample *out)
{
	size_t k = 0;
	uint32_t id;
	for (int r = 0; r < PAXOS_ROLE_COUNT; r++)
		if (role_names[r] && paxos_node_role_id(n, (enum paxos_role)r, &id) == PAXOS_OK)
			k += paxos_counter_samples(paxos_node_counters(n, (enum paxos_role)r),
						   role_names[r], id, out + k);
	k += paxos_counter_samples(paxos_node_transport_counters(n), "transport", 0, out + k);
	for (int r = 0; r < PAXOS_ROLE_COUNT; r++)
		if (role_names[r] && paxos_node_role_id(n, (enum paxos_role)r, &id) == PAXOS_OK)
			k += add_levels(n, (enum paxos_role)r, id, out + k);
	/* Several logs: every sample says whose. */
	uint32_t count, partition = paxos_node_partition(n, &count);
	for (size_t i = 0; count > 1 && i < k; i++) {
		out[i].partitioned = true;
		out[i].partition = partition;
	}
	return k;
}
