/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paxos-send: sends one UDP datagram with arbitrary bytes to a multicast group (or to one
 * member's unicast address), for tests that feed hostile input to running roles. Multicast
 * stays on the host: it leaves through 127.0.0.1 with TTL 0 unless told otherwise.
 *
 * Usage: paxos-send [-i ADDR] [-t TTL] [-p N] ADDRESS:PORT HEX|@FILE
 *   HEX    the datagram as hex digits (spaces allowed; "" sends an empty datagram)
 *   @FILE  the datagram is the content of FILE
 *   -p N   append N zero bytes (datagrams larger than anyone's buffer)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The largest UDP payload over IPv4. */
#define MAX_DATAGRAM 65507u

static uint8_t datagram[MAX_DATAGRAM];

/* The usage on OUT; returns the exit status: 0 for --help (stdout), 2 for a wrong command line. */
static int usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: paxos-send [-i ADDR] [-t TTL] [-p N] ADDRESS:PORT HEX|@FILE\n"
	    "Sends one UDP datagram of arbitrary bytes to a multicast group or a unicast address.\n"
	    "  HEX          the datagram as hex digits (spaces allowed; \"\" sends an empty one)\n"
	    "  @FILE        the datagram is the content of FILE\n"
	    "  -i ADDR      multicast interface (default 127.0.0.1)\n"
	    "  -t TTL       multicast TTL, 0..255 (default 0: the datagram stays on the host)\n"
	    "  -p N         append N zero bytes\n"
	    "  -h, --help   this text\n");
	return out == stdout ? 0 : 2;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Hex digits into datagram; whitespace between bytes is ignored. Returns the length or -1. */
static long parse_hex(const char *s)
{
	size_t len = 0;
	while (*s) {
		if (*s == ' ' || *s == '\t' || *s == '\n') {
			s++;
			continue;
		}
		int hi = hex_digit(s[0]), lo = s[1] ? hex_digit(s[1]) : -1;
		if (hi < 0 || lo < 0 || len == MAX_DATAGRAM)
			return -1;
		datagram[len++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return (long)len;
}

static long read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t len = fread(datagram, 1, MAX_DATAGRAM, f);
	int too_long = fgetc(f) != EOF, bad = ferror(f);
	fclose(f);
	if (too_long || bad) {
		fprintf(stderr, "paxos-send: %s: %s\n", path,
			bad ? "read error" : "longer than a UDP datagram");
		return -1;
	}
	return (long)len;
}

static int parse_endpoint(const char *text, struct sockaddr_in *out)
{
	char addr[INET_ADDRSTRLEN];
	const char *colon = strrchr(text, ':');
	if (!colon || (size_t)(colon - text) >= sizeof(addr))
		return -1;
	memcpy(addr, text, (size_t)(colon - text));
	addr[colon - text] = '\0';
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)port);
	if (*end || port == 0 || port > 65535 || inet_pton(AF_INET, addr, &out->sin_addr) != 1)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct in_addr iface;
	unsigned long ttl = 0, pad = 0;
	int opt;

	inet_pton(AF_INET, "127.0.0.1", &iface);
	static const struct option options[] = {{"help", no_argument, NULL, 'h'},
						{NULL, 0, NULL, 0}};
	while ((opt = getopt_long(argc, argv, "i:t:p:h", options, NULL)) != -1) {
		if (opt == 'h')
			return usage(stdout);
		if (opt == 'i' && inet_pton(AF_INET, optarg, &iface) == 1)
			continue;
		if (opt == 't' && (ttl = strtoul(optarg, NULL, 10)) <= 255)
			continue;
		if (opt == 'p' && (pad = strtoul(optarg, NULL, 10)) <= MAX_DATAGRAM)
			continue;
		return usage(stderr);
	}
	if (argc - optind != 2)
		return usage(stderr);
	struct sockaddr_in dest;
	if (parse_endpoint(argv[optind], &dest) != 0) {
		fprintf(stderr, "paxos-send: '%s' is not ADDRESS:PORT\n", argv[optind]);
		return 2;
	}
	const char *what = argv[optind + 1];
	long len = what[0] == '@' ? read_file(what + 1) : parse_hex(what);
	if (len < 0) {
		if (what[0] != '@')
			fprintf(stderr, "paxos-send: bad hex or too long: '%.40s'\n", what);
		return 2;
	}
	if (pad > MAX_DATAGRAM - (size_t)len) {
		fprintf(stderr, "paxos-send: %ld + %lu bytes exceed a UDP datagram\n", len, pad);
		return 2;
	}
	memset(datagram + len, 0, pad);
	size_t total = (size_t)len + pad;

	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	unsigned char ttl_byte = (unsigned char)ttl, loop = 1;
	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &iface, sizeof(iface)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl_byte, sizeof(ttl_byte)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)) < 0) {
		fprintf(stderr, "paxos-send: socket: %s\n", strerror(errno));
		return 1;
	}
	if (sendto(fd, datagram, total, 0, (struct sockaddr *)&dest, sizeof(dest)) !=
	    (ssize_t)total) {
		fprintf(stderr, "paxos-send: sendto %s: %s\n", argv[optind], strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}
