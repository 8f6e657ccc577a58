/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PAXOS_ASSERT(cond, msg): an invariant of the protocol or of the library's own state, never
 * a check of input (bad input gets an error, not an abort). Compiled in when PAXOS_ASSERTS is
 * defined non-zero (CMake option PAXOS_ASSERTS: on in Debug, sanitizer and fuzz builds, and
 * always in the simulator's copy of the cores); otherwise cond is not evaluated. A failure
 * prints file:line, the expression and msg to stderr and aborts.
 */
#ifndef PAXOS_CORE_ASSERT_H
#define PAXOS_CORE_ASSERT_H

/* Prints where and what broke, then aborts. */
_Noreturn void paxos_assert_fail(const char *file, int line, const char *expr, const char *msg);

#if defined(PAXOS_ASSERTS) && PAXOS_ASSERTS

#define PAXOS_ASSERT(cond, msg)                                                                    \
	((cond) ? (void)0 : paxos_assert_fail(__FILE__, __LINE__, #cond, msg))

#else

/* Not evaluated, but still compiled: an assertion cannot rot while they are off. */
#define PAXOS_ASSERT(cond, msg) ((void)sizeof(!(cond)), (void)sizeof(msg))

#endif

#endif
