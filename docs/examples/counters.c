/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a node's counters by name and by index (docs/using.md). */
#include <paxos/paxos.h>

#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/// [counters]
/* Every counter of the learner that is not zero, by index: works with any later library. */
static void print_learner_counters(const struct paxos_node *node)
{
	const struct paxos_counters *c = paxos_node_counters(node, PAXOS_ROLE_LEARNER);
	if (!c)
		return; /* no learner hosted */
	for (size_t i = 0; i < paxos_counter_count(); i++)
		if (paxos_counter_value(c, i))
			printf("%s=%" PRIu64 "\n", paxos_counter_name(i),
			       paxos_counter_value(c, i));
	uint64_t delivered;
	if (paxos_counter_get(c, "instances_delivered", &delivered) == PAXOS_OK)
		printf("delivered %" PRIu64 " instances, next is %" PRIu64 "\n", delivered,
		       (uint64_t)paxos_node_next_iid(node));
}
/// [counters]

static void ignore(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	(void)arg, (void)iid, (void)position, (void)v;
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: %s\nPrints the counters of a learner that was just added.\n",
		       argv[0]);
		return 0;
	}
	char err[256];
	struct paxos_config *cfg = paxos_config_new();
	struct event_base *base = event_base_new();
	struct paxos_node *node = cfg && base ? paxos_node_new(base, cfg, err, sizeof(err)) : NULL;
	int ok = node && paxos_node_add_learner(node, ignore, NULL) == PAXOS_OK;
	if (ok)
		print_learner_counters(node);
	else
		fprintf(stderr, "%s\n", node ? paxos_node_error(node) : "cannot create the node");
	paxos_node_free(node);
	if (base)
		event_base_free(base);
	paxos_config_free(cfg);
	return ok ? 0 : 1;
}
