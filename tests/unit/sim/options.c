/* SPDX-License-Identifier: BSD-3-Clause */
/* The simulation's options (see sim.h): defaults, the replay line and its parser. */
#include "sim.h"

#include "network.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fault_names[SIM_FAULT_KINDS] = {"crash",     "pcrash", "leader", "dual",
							 "partition", "lose",   "pcut",   "amnesia",
							 "rolling",   "double", "deaf",   "whole"};
static const char *const mutant_names[] = {"none", "accept-low", "amnesia", "merge-skip"};

const char *sim_violation_name(enum sim_violation v)
{
	static const char *const names[] = {
	    [SIM_OK] = "ok",
	    [SIM_V_AGREEMENT] = "agreement violated",
	    [SIM_V_VALIDITY] = "validity violated",
	    [SIM_V_DUPLICATE] = "value delivered more often than submitted",
	    [SIM_V_ORDER] = "delivery order violated",
	    [SIM_V_PROMISE] = "acceptor promise went down",
	    [SIM_V_MERGE] = "merged order violated",
	    [SIM_V_LIVENESS] = "liveness violated",
	    [SIM_V_INTERNAL] = "simulator error",
	};
	return (unsigned)v <= SIM_V_INTERNAL ? names[v] : "?";
}

void sim_options_default(struct sim_options *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->acceptors = 3;
	o->proposers = 2;
	o->learners = 2;
	o->loss = 10;
	o->dup = 5;
	o->values = 30;
	o->faults = SIM_FAULT_ALL;
	o->learning_acceptors = true;
	o->batch = 8;
	o->partitions = 1;
}

void sim_options_format(const struct sim_options *o, const char *program, char *buf, size_t cap)
{
	char faults[96] = "";
	size_t n = 0;
	for (uint32_t k = 0; k < SIM_FAULT_KINDS; k++)
		if (o->faults & (1u << k))
			n += (size_t)snprintf(faults + n, sizeof(faults) - n, "%s%s", n ? "," : "",
					      fault_names[k]);
	size_t w = (size_t)snprintf(
	    buf, cap,
	    "%s --seed %" PRIu64 " --acceptors %u --proposers %u --learners %u --loss %u --dup %u "
	    "--values %u --batch %u --faults %s",
	    program, o->seed, o->acceptors, o->proposers, o->learners, o->loss, o->dup, o->values,
	    o->batch, n ? faults : "none");
	if (o->mutant != SIM_MUTANT_NONE && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --mutant %s", mutant_names[o->mutant]);
	if (!o->learning_acceptors && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --learning-acceptors no");
	if (o->mixed_learning && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --mixed-learning yes");
	if (o->accept_loss && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --accept-loss %u", o->accept_loss);
	if (o->skip_idle_us && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --skip-idle-us %u", o->skip_idle_us);
	if (o->reconfig && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --reconfig yes");
	if (o->partitions > 1 && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --partitions %u", o->partitions);
	if (o->resubmit_us && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --resubmit-us %u", o->resubmit_us);
	if (o->own_acceptors && w < cap)
		w += (size_t)snprintf(buf + w, cap - w, " --own-acceptors yes");
}

int sim_faults_parse(const char *text, uint32_t *mask)
{
	*mask = 0;
	if (strcmp(text, "none") == 0)
		return 0;
	if (strcmp(text, "all") == 0) {
		*mask = SIM_FAULT_ALL;
		return 0;
	}
	char copy[128];
	snprintf(copy, sizeof(copy), "%s", text);
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t k = 0;
		while (k < SIM_FAULT_KINDS && strcmp(tok, fault_names[k]) != 0)
			k++;
		if (k == SIM_FAULT_KINDS)
			return -1;
		*mask |= 1u << k;
	}
	return 0;
}

static int parse_u64(const char *text, uint64_t max, uint64_t *out)
{
	char *end = NULL;
	if (!text || !*text || *text == '-')
		return -1;
	unsigned long long v = strtoull(text, &end, 10);
	if (*end || v > max)
		return -1;
	*out = v;
	return 0;
}

int sim_options_parse(struct sim_options *o, int argc, char **argv, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		uint64_t max;
	} numeric[] = {{"--seed", UINT64_MAX},
		       {"--acceptors", SIM_MAX_ACCEPTORS},
		       {"--proposers", SIM_MAX_PROPOSERS},
		       {"--learners", SIM_MAX_LEARNERS},
		       {"--loss", 100},
		       {"--dup", 100},
		       {"--values", SIM_MAX_VALUES},
		       {"--batch", SIM_MAX_VALUE},
		       {"--accept-loss", 100},
		       {"--skip-idle-us", 10000000},
		       {"--resubmit-us", 100000000},
		       {"--partitions", SIM_MAX_PARTITIONS}};
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
			o->verbose = o->verbose > 1 ? o->verbose : 1;
			continue;
		}
		if (strcmp(arg, "--trace") == 0) {
			o->verbose = 2;
			continue;
		}
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!val) {
			snprintf(err, errlen, "%s needs a value", arg);
			return -1;
		}
		i++;
		if (strcmp(arg, "--faults") == 0) {
			if (sim_faults_parse(val, &o->faults) != 0) {
				snprintf(err, errlen,
					 "--faults: expected none, all or a list of "
					 "crash,pcrash,leader,dual,partition,lose,pcut,amnesia,"
					 "rolling,double,deaf, not \"%s\"",
					 val);
				return -1;
			}
			continue;
		}
		if (strcmp(arg, "--learning-acceptors") == 0) {
			if (strcmp(val, "yes") != 0 && strcmp(val, "no") != 0) {
				snprintf(err, errlen,
					 "--learning-acceptors: expected yes or no, not \"%s\"",
					 val);
				return -1;
			}
			o->learning_acceptors = strcmp(val, "yes") == 0;
			continue;
		}
		if (strcmp(arg, "--own-acceptors") == 0) {
			if (strcmp(val, "yes") != 0 && strcmp(val, "no") != 0) {
				snprintf(err, errlen,
					 "--own-acceptors: expected yes or no, not \"%s\"", val);
				return -1;
			}
			o->own_acceptors = strcmp(val, "yes") == 0;
			continue;
		}
		if (strcmp(arg, "--reconfig") == 0) {
			if (strcmp(val, "yes") != 0 && strcmp(val, "no") != 0) {
				snprintf(err, errlen, "--reconfig: expected yes or no, not \"%s\"",
					 val);
				return -1;
			}
			o->reconfig = strcmp(val, "yes") == 0;
			continue;
		}
		if (strcmp(arg, "--mixed-learning") == 0) {
			if (strcmp(val, "yes") != 0 && strcmp(val, "no") != 0) {
				snprintf(err, errlen,
					 "--mixed-learning: expected yes or no, not \"%s\"", val);
				return -1;
			}
			o->mixed_learning = strcmp(val, "yes") == 0;
			continue;
		}
		if (strcmp(arg, "--mutant") == 0) {
			uint32_t k = 0;
			while (k < SIM_MUTANT_COUNT && strcmp(val, mutant_names[k]) != 0)
				k++;
			if (k == SIM_MUTANT_COUNT) {
				snprintf(err, errlen,
					 "--mutant: expected none, accept-low, amnesia or "
					 "merge-skip, not "
					 "\"%s\"",
					 val);
				return -1;
			}
			o->mutant = (enum sim_mutant)k;
			continue;
		}
		size_t k = 0;
		while (k < sizeof(numeric) / sizeof(numeric[0]) &&
		       strcmp(arg, numeric[k].name) != 0)
			k++;
		uint64_t v = 0;
		if (k == sizeof(numeric) / sizeof(numeric[0])) {
			snprintf(err, errlen, "unknown option %s", arg);
			return -1;
		}
		if (parse_u64(val, numeric[k].max, &v) != 0 ||
		    (k > 0 && k != 4 && k != 5 && v == 0)) {
			snprintf(err, errlen, "%s: bad value \"%s\"", arg, val);
			return -1;
		}
		switch (k) {
		case 0:
			o->seed = v;
			break;
		case 1:
			o->acceptors = (uint32_t)v;
			break;
		case 2:
			o->proposers = (uint32_t)v;
			break;
		case 3:
			o->learners = (uint32_t)v;
			break;
		case 4:
			o->loss = (uint32_t)v;
			break;
		case 5:
			o->dup = (uint32_t)v;
			break;
		case 6:
			o->values = (uint32_t)v;
			break;
		case 7:
			o->batch = (uint32_t)v;
			break;
		case 8:
			o->accept_loss = (uint32_t)v;
			break;
		case 9:
			o->skip_idle_us = (uint32_t)v;
			break;
		case 10:
			o->resubmit_us = (uint32_t)v;
			break;
		default:
			o->partitions = (uint32_t)v;
			break;
		}
	}
	return 0;
}
