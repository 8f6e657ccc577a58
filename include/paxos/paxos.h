/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * libpaxos: Multi-Paxos atomic broadcast over UDP multicast. Include this one header: it
 * includes every public one.
 */
#ifndef PAXOS_PAXOS_H
#define PAXOS_PAXOS_H

#include <paxos/acceptor.h>
#include <paxos/config.h>
#include <paxos/counters.h>
#include <paxos/election.h>
#include <paxos/epoch.h>
#include <paxos/learner.h>
#include <paxos/log.h>
#include <paxos/membership.h>
#include <paxos/message.h>
#include <paxos/metrics.h>
#include <paxos/node.h>
#include <paxos/options.h>
#include <paxos/partitions.h>
#include <paxos/proposer.h>
#include <paxos/serializer.h>
#include <paxos/storage.h>
#include <paxos/storage_backends.h>
#include <paxos/transport.h>
#include <paxos/types.h>
#include <paxos/version.h>

#endif
