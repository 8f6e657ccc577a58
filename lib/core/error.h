/* SPDX-License-Identifier: BSD-3-Clause */
/* Error sentences for callers' buffers, shared by the parts that report through err/errlen. */
#ifndef PAXOS_ERROR_H
#define PAXOS_ERROR_H

#include <stddef.h>

/* printf into err (when err is not NULL and errlen > 0), always NUL-terminated. */
void paxos_error_format(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
