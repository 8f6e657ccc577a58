/* SPDX-License-Identifier: BSD-3-Clause */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

void paxos_error_format(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
