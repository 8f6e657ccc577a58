/* SPDX-License-Identifier: BSD-3-Clause */
#include "membership_fixture.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "support.h"

struct paxos_membership *replaced_history(void)
{
	struct paxos_membership *m = paxos_membership_new(0x7, ALPHA);
	uint8_t b1[PAXOS_MEMBERSHIP_COMMAND_LEN], b2[PAXOS_MEMBERSHIP_COMMAND_LEN];
	struct paxos_value grow = support_command(1, 0x1f, b1),
			   shrink = support_command(2, 0x1c, b2);
	ck_assert_int_eq(paxos_membership_apply(m, 1, &grow), 1);
	ck_assert_int_eq(paxos_membership_apply(m, 11, &shrink), 1);
	return m;
}

char base_dir[64];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void make_base(void)
{
	snprintf(base_dir, sizeof(base_dir), "/tmp/paxos-membership-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base_dir));
}

void remove_base(void)
{
	nftw(base_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
