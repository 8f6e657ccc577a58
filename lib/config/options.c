/* SPDX-License-Identifier: BSD-3-Clause */
/* The cores' option structs, filled from a configuration (see paxos/options.h), and the
 * value sizes a configuration allows, which they need. */
#include <paxos/options.h>

#include <paxos/acceptor.h>

#include <string.h>

#include "auth.h"
#include "batch.h"
#include "codec.h"
#include "config_fields.h"

uint32_t paxos_config_max_instance_value(const struct paxos_config *cfg)
{
	/* Only a keyed cluster pays for the tag. */
	uint32_t overhead =
	    PAXOS_WIRE_OVERHEAD + (cfg->auth_key_file[0] ? PAXOS_AUTH_TAG_BYTES : 0);
	if (cfg->max_datagram <= overhead)
		return 0;
	return cfg->max_datagram - overhead;
}

uint32_t paxos_config_max_value(const struct paxos_config *cfg)
{
	uint32_t frame = paxos_config_max_instance_value(cfg);
	return frame > PAXOS_BATCH_HEADER ? frame - PAXOS_BATCH_HEADER : 0;
}

void paxos_acceptor_options_from_config(struct paxos_acceptor_options *o,
					const struct paxos_config *cfg, uint32_t id)
{
	memset(o, 0, sizeof(*o));
	o->id = id;
	o->repeat_batch = cfg->repeat_batch;
}

void paxos_learner_options_from_config(struct paxos_learner_options *o,
				       const struct paxos_config *cfg)
{
	memset(o, 0, sizeof(*o));
	o->acceptors = cfg->acceptors;
	o->window = cfg->learner_window;
	o->max_value = paxos_config_max_instance_value(cfg);
	o->repeat_batch = cfg->repeat_batch;
	o->hole_check = (paxos_time)cfg->hole_check_ms * 1000;
	o->start = cfg->learner_start;
}

void paxos_proposer_options_from_config(struct paxos_proposer_options *o,
					const struct paxos_config *cfg, uint32_t id)
{
	memset(o, 0, sizeof(*o));
	o->id = id;
	o->acceptors = cfg->acceptors;
	o->window = cfg->proposer_window;
	o->concurrency = cfg->proposer_concurrency;
	o->pending_size = cfg->pending_size;
	o->max_value = paxos_config_max_instance_value(cfg);
	o->batch_limit = cfg->value_batch_limit;
	o->max_backlog = cfg->proposer_max_backlog;
	o->phase1_timeout = (paxos_time)cfg->phase1_timeout_ms * 1000;
	o->phase2_timeout = (paxos_time)cfg->phase2_timeout_ms * 1000;
	o->adaptive = cfg->adaptive_timeouts;
	o->timeout_floor = (paxos_time)cfg->timeout_floor_ms * 1000;
	o->timeout_ceiling = (paxos_time)cfg->timeout_ceiling_ms * 1000;
	o->recovery_grace = (paxos_time)PAXOS_RECOVERY_WAIT_MS * 1000;
	o->skip_idle = cfg->learner_merge ? (paxos_time)cfg->merge_skip_ms * 1000 : 0;
}

void paxos_election_options_from_config(struct paxos_election_options *o,
					const struct paxos_config *cfg, uint32_t id)
{
	memset(o, 0, sizeof(*o));
	o->id = id;
	o->proposers = cfg->proposers;
	o->heartbeat_interval = (paxos_time)cfg->heartbeat_interval_ms * 1000;
	o->heartbeat_timeout = (paxos_time)cfg->heartbeat_timeout_ms * 1000;
	o->manual = cfg->election == PAXOS_ELECTION_MANUAL;
	o->manual_leader = cfg->leader;
	o->partition = cfg->partition;
	o->acceptors = cfg->acceptors >= 32 ? UINT32_MAX : (1u << cfg->acceptors) - 1;
	/* Two acceptor reports (every acceptor-repeat-ms, to the proposers group too) fit in the
	 * window, so one lost report does not put a proposer out, plus the slack of a heartbeat
	 * timeout that the proposers give each other for late timers: an idle cluster on a busy
	 * machine keeps its leader. */
	if (cfg->check_quorum)
		o->quorum_timeout =
		    ((paxos_time)cfg->acceptor_repeat_ms * 2 + cfg->heartbeat_timeout_ms) * 1000;
}
