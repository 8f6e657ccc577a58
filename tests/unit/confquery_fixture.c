/* SPDX-License-Identifier: BSD-3-Clause */
#include "confquery_fixture.h"

#include <check.h>

void change(struct paxos_membership *m, paxos_iid iid, uint32_t members)
{
	uint8_t buf[PAXOS_MEMBERSHIP_COMMAND_LEN];
	paxos_membership_command(paxos_membership_latest(m)->id, members, buf);
	struct paxos_value v = {buf, sizeof(buf)};
	ck_assert_int_eq(paxos_membership_apply(m, iid, &v), 1);
}

struct paxos_membership *history(uint32_t changes, paxos_iid upto)
{
	struct paxos_membership *m = paxos_membership_create(0x7, 0x3, ALPHA);
	const uint32_t sets[] = {0xf, 0xb, 0x19};
	for (uint32_t k = 0; k < changes; k++)
		change(m, 10 * (k + 1), sets[k]);
	paxos_membership_skip_to(m, upto);
	return m;
}
