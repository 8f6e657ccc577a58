/* SPDX-License-Identifier: BSD-3-Clause */
/* Writing one line to the library's log (paxos/log.h). */
#ifndef PAXOS_LOG_LINE_H
#define PAXOS_LOG_LINE_H

#include <paxos/log.h>

#include <stdarg.h>

/* Formats a line (no newline) and hands it to the log function, if one is set. */
void paxos_logf(enum paxos_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same with the arguments in ap, between prefix and suffix (which are not formats). */
void paxos_vlogf(enum paxos_log_level level, const char *prefix, const char *suffix,
		 const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

#endif
