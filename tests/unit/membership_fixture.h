/* SPDX-License-Identifier: BSD-3-Clause */
/* What the durable membership tests share (test_membership_durable.c, test_membership_node.c). */
#ifndef PAXOS_TEST_MEMBERSHIP_FIXTURE_H
#define PAXOS_TEST_MEMBERSHIP_FIXTURE_H

#include <paxos/membership.h>

#define ALPHA 10

/* {0,1,2} from 1, grown to {0..4} by instance 1 (from 11), shrunk to {2,3,4} by instance 11
 * (from 21): acceptors 0 and 1 replaced by 3 and 4. */
struct paxos_membership *replaced_history(void);

/* A fresh directory for the test's stores (make_base), and its removal with all it holds. */
extern char base_dir[64];
void make_base(void);
void remove_base(void);

#endif
