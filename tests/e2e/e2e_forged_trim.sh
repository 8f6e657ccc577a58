#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Forged trims, without a key, make no acceptor drop anything (3 acceptors, 2 proposers,
# memory storage, in a private network namespace): after 300 values,
#  1. a trim to the end of the instance space from a client;
#  2. a trim as acceptor 0, which runs, from another address (an impostor's);
#  3. acceptor 2 stopped, trims as acceptor 2 from another address until that address speaks
#     for it: one acceptor's word, no quorum of them;
# then a learner started later must deliver every instance from 1 on, and the acceptors must
# have trimmed nothing (a trim used to make every acceptor drop what it knew decided).
# Usage: e2e_forged_trim.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

CONF=$WORK/paxos.conf
sed -e "s|^counters-interval-ms .*|counters-interval-ms 100|" "$(base_conf)" >"$CONF"
grep -q "^counters-interval-ms 100" "$CONF" || fail "cannot write the configuration"
ACCEPTORS=$(awk '$1 == "acceptors-group" { print $2 }' "$CONF")
hdr() { printf '94cd505806%02x%02x' "$1" "$2"; } # [magic, version 6, role $1, id $2]
TRIM_ALL=9207cfffffffffffffffff                   # [trim, 2^64-1]
send() { "$BUILD/paxos-send" "$ACCEPTORS" "$1" >/dev/null || fail "paxos-send $1"; }

for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$CONF" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$CONF" -i $i; done
wait_log proposer0 "leader is 0 at start" >/dev/null
"$BUILD/paxos-client" -c "$CONF" --count 300 --outstanding 8 --size 16 --time-limit 30 \
	>"$WORK/client1.log" 2>&1 || fail "the cluster served no client"

send "$(hdr 3 5)$TRIM_ALL"
send "$(hdr 0 0)$TRIM_ALL"
refused() { grep -q "refused: trim to 18446744073709551615: without auth-key-file" "$WORK/$1.log"; }
eventually 30 refused acceptor0 || fail "1: acceptor 0 did not refuse the client's trim"
eventually 30 grep -q "refused: from .*, while another address speaks for that acceptor" \
	"$WORK/acceptor1.log" || fail "2: acceptor 1 did not drop the impostor's trim"

stop_one acceptor2
# The forger's address speaks for acceptor 2 once the acceptor's own was silent a while.
believed() {
	send "$(hdr 0 2)$TRIM_ALL"
	grep -q "acceptor 2 speaks from" "$WORK/acceptor0.log"
}
eventually 30 believed || fail "3: the forged acceptor 2 was never believed"
send "$(hdr 0 2)$TRIM_ALL"
"$BUILD/paxos-client" -c "$CONF" --count 50 --outstanding 8 --size 16 --time-limit 30 \
	>"$WORK/client2.log" 2>&1 || fail "the cluster served no client after the forged trims"

# A learner started now learns from instance 1: nothing was trimmed.
start late paxos-learner -c "$CONF" -o "$WORK/late.out"
wait_lines "$WORK/late.out" 350 30 || fail "the late learner did not deliver 350 values"
[ "$(head -n 1 "$WORK/late.out" | cut -d' ' -f1)" -eq 1 ] ||
	fail "the late learner did not start at instance 1: $(head -n 1 "$WORK/late.out")"
grep -q "trimmed before they were learned" "$WORK/late.log" &&
	fail "the late learner was told instances were trimmed"
for i in 0 1; do
	n=$(counter acceptor$i "acceptor $i" instances_trimmed)
	[ "${n:-0}" -eq 0 ] || fail "acceptor $i trimmed $n times on forged trims"
done
echo "e2e_forged_trim: a client's trim, an impostor's and a stopped acceptor's id moved no" \
	"acceptor; a late learner delivered from instance 1"
