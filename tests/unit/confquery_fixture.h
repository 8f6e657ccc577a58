/* SPDX-License-Identifier: BSD-3-Clause */
/* The configuration histories of the configuration request tests (test_confquery*.c). */
#ifndef PAXOS_TEST_CONFQUERY_FIXTURE_H
#define PAXOS_TEST_CONFQUERY_FIXTURE_H

#include <paxos/membership.h>

#define ALPHA 8u

/* Applies the acceptor set command made against the newest configuration, in instance iid. */
void change(struct paxos_membership *m, paxos_iid iid, uint32_t members);
/* The log of the tests: {0,1,2} -> {0,1,2,3} (instance 10) -> {0,1,3} (20) -> {0,3,4} (30),
 * applied up to upto; cut after `changes` changes. */
struct paxos_membership *history(uint32_t changes, paxos_iid upto);

#endif
