/* SPDX-License-Identifier: BSD-3-Clause */
#include <paxos/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log_line.h"

static paxos_log_fn log_fn;
static void *log_arg;

void paxos_set_log(paxos_log_fn fn, void *arg)
{
	log_fn = fn;
	log_arg = arg;
}

void paxos_log_stderr(void *arg, enum paxos_log_level level, const char *line)
{
	(void)arg;
	(void)level;
	fprintf(stderr, "%s\n", line);
}

void paxos_vlogf(enum paxos_log_level level, const char *prefix, const char *suffix,
		 const char *fmt, va_list ap)
{
	if (!log_fn)
		return;
	char line[2048];
	size_t len = (size_t)snprintf(line, sizeof(line), "%s", prefix);
	if (len < sizeof(line))
		vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	len = strlen(line);
	snprintf(line + len, sizeof(line) - len, "%s", suffix);
	log_fn(log_arg, level, line);
}

void paxos_logf(enum paxos_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	paxos_vlogf(level, "", "", fmt, ap);
	va_end(ap);
}
