/* SPDX-License-Identifier: BSD-3-Clause */
/* A learner that submits one value and stops once it was delivered (docs/using.md). */
#include <paxos/paxos.h>

#include <event2/event.h>
#include <stdio.h>
#include <string.h>

struct app {
	struct event_base *base;
	int delivered;
};

/// [deliver]
/* Called on the loop's thread, in instance order, once per value; v lives during the call. */
static void deliver(void *arg, paxos_iid iid, uint32_t position, const struct paxos_value *v)
{
	struct app *app = arg;
	printf("instance %llu, value %u: %.*s\n", (unsigned long long)iid, position, (int)v->len,
	       (const char *)v->data);
	if (v->len == 5 && memcmp(v->data, "hello", 5) == 0) {
		app->delivered = 1;
		event_base_loopbreak(app->base); /* ours came back: stop */
	}
}
/// [deliver]

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf(
		    "Usage: %s [paxos.conf]\nSubmits \"hello\" and stops once it is delivered.\n",
		    argv[0]);
		return 0;
	}
	/// [lifecycle]
	char err[256];
	paxos_set_log(paxos_log_stderr, NULL);         /* before any node: leader changes, errors */
	struct paxos_config *cfg = paxos_config_new(); /* the defaults */
	if (!cfg) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	if (argc > 1 && paxos_config_load(cfg, argv[1], err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "%s\n", err); /* "paxos.conf:12: ..." */
		paxos_config_free(cfg);
		return 1;
	}
	struct app app = {event_base_new(), 0};
	struct paxos_node *node = paxos_node_new(app.base, cfg, err, sizeof(err));
	paxos_config_free(cfg); /* the node keeps its own copy */
	if (!node) {
		fprintf(stderr, "%s\n", err);
		event_base_free(app.base);
		return 1;
	}
	int rc = paxos_node_add_learner(node, deliver, &app);
	/// [lifecycle]
	/// [submit]
	if (rc == PAXOS_OK)
		rc = paxos_node_submit(node, "hello", 5); /* no guarantee: learn it to know */
	if (rc != PAXOS_OK)
		fprintf(stderr, "%s: %s\n", paxos_strerror(rc), paxos_node_error(node));
	/// [submit]
	/// [loop]
	struct timeval limit = {10, 0}; /* give up after 10 s (no proposer or acceptors) */
	if (rc == PAXOS_OK) {
		event_base_loopexit(app.base, &limit);
		event_base_dispatch(app.base); /* every callback runs here, on this thread */
	}
	if (paxos_node_failed(node))
		fprintf(stderr, "node failed: %s\n", paxos_node_error(node));
	paxos_node_free(node); /* before its event_base */
	event_base_free(app.base);
	/// [loop]
	return app.delivered ? 0 : 1;
}
