/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-limit: how many one-datagram multicasts this machine carries per second, sender to
 * receiver, through the same sockets and options libpaxos uses. Every benchmark figure can be
 * read against it. The receiver is a child process, as a learner would be.
 */
#include <paxos/config.h>

#include "clock.h"
#include "runner.h"
#include "udp.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "config_fields.h"

struct result {
	volatile uint64_t received;
	volatile int ready;
};

static void receive(int fd, struct result *r, size_t size, paxos_time until)
{
	uint8_t *buf = malloc(size + 1);
	r->ready = 1;
	while (paxos_now() < until) {
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 10) <= 0)
			continue;
		while (recv(fd, buf, size + 1, 0) > 0)
			r->received++;
	}
	free(buf);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
	    {"config", required_argument, NULL, 'c'},  {"size", required_argument, NULL, 's'},
	    {"seconds", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0}};
	const char *config = NULL;
	long size = 64;
	double seconds = 2;
	int opt;
	while ((opt = getopt_long(argc, argv, "c:s:t:h", options, NULL)) != -1) {
		if (opt == 'c')
			config = optarg;
		else if (opt == 's')
			size = strtol(optarg, NULL, 10);
		else if (opt == 't')
			seconds = strtod(optarg, NULL);
		else if (opt == 'V') {
			paxos_runner_version("paxos-limit");
			return 0;
		} else {
			printf("Usage: paxos-limit -c FILE [--size BYTES] [--seconds S]\n"
			       "Sends one-datagram multicasts to the learners group as fast as it "
			       "can for S seconds\nand prints what a receiver got: datagrams/s and "
			       "MB/s.\n"
			       "--version prints the library's version and wire version.\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	struct paxos_config cfg;
	char err[512];
	paxos_config_defaults(&cfg);
	if (!config || paxos_config_load(&cfg, config, err, sizeof(err)) != PAXOS_OK) {
		fprintf(stderr, "paxos-limit: %s\n", config ? err : "-c FILE is required");
		return 2;
	}
	if (size < 1 || size > (long)cfg.max_datagram || seconds <= 0 || seconds > 600) {
		fprintf(stderr, "paxos-limit: size must be 1..%u, seconds 0..600\n",
			cfg.max_datagram);
		return 2;
	}
	int rx = paxos_transport_receiver(&cfg, PAXOS_GROUP_LEARNERS, err, sizeof(err));
	int tx = paxos_transport_sender(&cfg, err, sizeof(err));
	if (rx < 0 || tx < 0) {
		fprintf(stderr, "paxos-limit: %s\n", err);
		return 1;
	}
	struct result *r =
	    mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	paxos_time start = paxos_now() + 200000, stop = start + (paxos_time)(seconds * 1e6);
	pid_t child = fork();
	if (child == 0) {
		close(tx);
		receive(rx, r, (size_t)size, stop + 100000);
		_exit(0);
	}
	close(rx);
	while (!r->ready)
		usleep(1000);
	uint8_t *buf = calloc(1, (size_t)size);
	struct sockaddr_in to;
	paxos_transport_address(&cfg, PAXOS_GROUP_LEARNERS, &to);
	uint64_t sent = 0, refused = 0;
	while (paxos_now() < start)
		;
	while (paxos_now() < stop) {
		for (int i = 0; i < 64; i++) {
			if (sendto(tx, buf, (size_t)size, 0, (struct sockaddr *)&to, sizeof(to)) <
			    0)
				refused++;
			else
				sent++;
		}
	}
	waitpid(child, NULL, 0);
	double secs = (double)(stop - start) / 1e6;
	printf("size %ld B: sent %.0f datagrams/s, received %.0f datagrams/s = %.1f MB/s "
	       "(%llu refused by the socket)\n",
	       size, (double)sent / secs, (double)r->received / secs,
	       (double)r->received * (double)size / secs / 1e6, (unsigned long long)refused);
	free(buf);
	return 0;
}
