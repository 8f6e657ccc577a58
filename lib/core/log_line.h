/* SPDX-License-Identifier: BSD-3-Clause */
/* Writing one line to the library's log (paxos/log.h). */
#ifndef PAXOS_LOG_LINE_H
#define PAXOS_LOG_LINE_H

#include <paxos/log.h>

/* Formats a line (no newline) and hands it to the log function, if one is set. */
void paxos_logf(enum paxos_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
