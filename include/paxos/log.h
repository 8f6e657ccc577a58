/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's log: it never writes to stderr by itself; the application says where its
 * lines go (the role binaries print them). */
#ifndef PAXOS_LOG_H
#define PAXOS_LOG_H

#include <paxos/types.h>

enum paxos_log_level {
	PAXOS_LOG_ERROR = 0,   /* the node stops (storage failure, duplicate acceptor, ...) */
	PAXOS_LOG_WARNING = 1, /* refused input, a peer misbehaving */
	PAXOS_LOG_INFO = 2,    /* leader changes, recovery, counters */
};

/* One line, without a newline, e.g. "paxos: proposer 1: leader is now 1 (was 0) from
 * instance 42"; valid during the call only. */
typedef void (*paxos_log_fn)(void *arg, enum paxos_log_level level, const char *line);

/* Where the log lines of every node of this process go; NULL (the default) drops them.
 * Set it before creating nodes; it is not synchronised with nodes running on threads. */
PAXOS_API void paxos_set_log(paxos_log_fn fn, void *arg);

/* A log function that writes each line to stderr, as the role binaries do. */
PAXOS_API void paxos_log_stderr(void *arg, enum paxos_log_level level, const char *line);

#endif
