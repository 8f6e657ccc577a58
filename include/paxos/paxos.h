/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * libpaxos: Multi-Paxos atomic broadcast over UDP multicast. Applications include this one
 * header: the configuration, nodes and partitions groups, the acceptor set's history
 * (membership), storage backends, transports, counters, metrics, logging and versions.
 * Programs that drive the protocol cores themselves include paxos/core.h as well.
 */
#ifndef PAXOS_PAXOS_H
#define PAXOS_PAXOS_H

#include <paxos/config.h>
#include <paxos/counters.h>
#include <paxos/epoch.h>
#include <paxos/log.h>
#include <paxos/membership.h>
#include <paxos/metrics.h>
#include <paxos/node.h>
#include <paxos/partitions.h>
#include <paxos/session.h>
#include <paxos/storage_backends.h>
#include <paxos/transport.h>
#include <paxos/types.h>
#include <paxos/version.h>

#endif
