/* SPDX-License-Identifier: BSD-3-Clause */
/* A learner of every partition that submits one value to each and stops once all came back
 * (docs/using.md, "Partitions"). */
#include <paxos/paxos.h>

#include <event2/event.h>
#include <stdio.h>
#include <string.h>

struct app {
	struct event_base *base;
	uint32_t waiting; /* values not delivered yet */
};

/// [deliver]
/* With learner-merge yes, the calls come in the order every merging learner shares; without,
 * in instance order within each partition only. */
static void deliver(void *arg, uint32_t partition, paxos_iid iid, uint32_t position,
		    const struct paxos_value *v)
{
	struct app *app = arg;
	printf("partition %u, instance %llu, value %u: %.*s\n", partition, (unsigned long long)iid,
	       position, (int)v->len, (const char *)v->data);
	if (--app->waiting == 0)
		event_base_loopbreak(app->base);
}
/// [deliver]

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf(
		    "Usage: %s [paxos.conf]\nSubmits a value to each partition and stops once all "
		    "are delivered.\n",
		    argv[0]);
		return 0;
	}
	char err[256];
	paxos_set_log(paxos_log_stderr, NULL);
	struct paxos_config *cfg = paxos_config_new();
	if (!cfg || (argc > 1 && paxos_config_load(cfg, argv[1], err, sizeof(err)) != PAXOS_OK)) {
		fprintf(stderr, "%s\n", cfg ? err : "out of memory");
		paxos_config_free(cfg);
		return 1;
	}
	/// [group]
	uint32_t count = paxos_config_partitions(cfg);
	uint64_t every = count >= 64 ? UINT64_MAX : (1ull << count) - 1; /* bit P: partition P */
	struct app app = {event_base_new(), count};
	struct paxos_partitions *group =
	    paxos_partitions_new(app.base, cfg, every, err, sizeof(err));
	paxos_config_free(cfg);
	if (!group) {
		fprintf(stderr, "%s\n", err);
		event_base_free(app.base);
		return 1;
	}
	int rc = paxos_partitions_add_learner(group, deliver, &app);
	for (uint32_t p = 0; p < count && rc == PAXOS_OK; p++) {
		char value[32];
		int len = snprintf(value, sizeof(value), "hello, partition %u", p);
		rc = paxos_partitions_submit(group, p, value, (size_t)len);
	}
	if (rc != PAXOS_OK)
		fprintf(stderr, "%s: %s\n", paxos_strerror(rc), paxos_partitions_error(group));
	/// [group]
	struct timeval limit = {10, 0};
	if (rc == PAXOS_OK) {
		event_base_loopexit(app.base, &limit);
		event_base_dispatch(app.base);
	}
	paxos_partitions_free(group); /* its nodes too, before the event_base */
	event_base_free(app.base);
	return app.waiting == 0 ? 0 : 1;
}
