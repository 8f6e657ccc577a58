/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's error sentence and its fatal stop, below everything else of the node. */
#include "log_line.h"
#include "parts.h"

#include <stdarg.h>
#include <stdio.h>

void node_set_error(struct paxos_node *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(n->error, sizeof(n->error), fmt, ap);
	va_end(ap);
}

void node_fail(struct paxos_node *n, int status, const char *what)
{
	n->failed = status;
	/* The status says only "storage error"; the backend's sentence says which and why
	 * (map full, disk full, I/O error), which is what an operator needs to act. */
	const char *why = paxos_storage_error(n->storage);
	if (why[0])
		node_set_error(n, "%s: %s: %s", what, paxos_strerror(status), why);
	else
		node_set_error(n, "%s: %s", what, paxos_strerror(status));
	paxos_logf(PAXOS_LOG_ERROR, "paxos: fatal: %s; stopping", n->error);
	event_base_loopbreak(n->base);
}
