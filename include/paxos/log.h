/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The library's log: it never writes to stderr by itself; the application says where its
 * lines go (the role binaries print them). One log function serves every node of the process.
 */
#ifndef PAXOS_LOG_H
#define PAXOS_LOG_H

#include <paxos/types.h>

/** How much a log line matters. */
enum paxos_log_level {
	PAXOS_LOG_ERROR = 0,   /**< the node stops (storage failure, duplicate acceptor, ...) */
	PAXOS_LOG_WARNING = 1, /**< refused input, a peer misbehaving */
	PAXOS_LOG_INFO = 2,    /**< leader changes, recovery, counters */
};

/** Receives one log line, without a newline, e.g. "paxos: proposer 1: leader is now 1 (was 0)
 * from instance 42"; @p line is valid during the call only. @p arg is what paxos_set_log() was
 * given. Called on the thread of the node that logs (its event loop thread); it must not call
 * back into that node. */
typedef void (*paxos_log_fn)(void *arg, enum paxos_log_level level, const char *line);

/** Where the log lines of every node of this process go: @p fn(@p arg, level, line); NULL
 * (the default) drops them. @p arg is not owned by the library and must stay valid while @p fn
 * may be called. Set it before creating nodes: it is not synchronised with nodes running on
 * other threads. */
PAXOS_API void paxos_set_log(paxos_log_fn fn, void *arg);

/** A log function that writes each line to stderr, as the role binaries do (@p arg unused):
 * paxos_set_log(paxos_log_stderr, NULL). */
PAXOS_API void paxos_log_stderr(void *arg, enum paxos_log_level level, const char *line);

#endif
