#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Hostile datagrams against running roles: one acceptor, one proposer (the leader) and one
# learner get, on every group, datagrams that are truncated, have a wrong magic, version or
# role, absurd lengths, non-msgpack bytes, too many messages, more bytes than max-datagram, or
# nothing at all. Each must be counted as malformed and dropped. Well-formed but absurd ones
# (instance 2^64-1, ballot 2^32-1, acceptor ids beyond the cluster, a value over the maximum)
# must do no harm. Afterwards the cluster must still serve a client, nobody may have died, and
# the forged value must never be delivered.
# Usage: e2e_hostile.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

# The shipped configuration, cut down to the processes this test runs.
CONF=$WORK/paxos.conf
sed -e 's/^acceptors  *[0-9]*/acceptors 1/' -e 's/^proposers  *[0-9]*/proposers 1/' \
	-e 's/^counters-interval-ms  *[0-9]*/counters-interval-ms 0/' "$(base_conf)" >"$CONF"
[ "$(grep -Ec '^(acceptors 1|proposers 1|counters-interval-ms 0)( |$)' "$CONF")" -eq 3 ] ||
	fail "cannot cut paxos.conf down to one acceptor and one proposer"
group() { awk -v k="$1-group" '$1 == k { print $2 }' "$CONF"; }
ACCEPTORS=$(group acceptors)
PROPOSERS=$(group proposers)
LEARNERS=$(group learners)
SUBMIT=$(group submit)
MAX_DATAGRAM=$(awk '$1 == "max-datagram" { print $2 }' "$CONF")
MAX_VALUE=$((MAX_DATAGRAM - 64))

# joined GROUP N: at least N sockets on this host are members of multicast group GROUP
# (ADDRESS:PORT); /proc/net/igmp shows each address as hex, little-endian on x86.
joined() {
	hex=$(echo "${1%:*}" | awk -F. '{ printf "%02X%02X%02X%02X", $4, $3, $2, $1 }')
	[ "$(awk -v g="$hex" '$1 == g { n += $2 } END { print n + 0 }' /proc/net/igmp)" -ge "$2" ]
}
# Every datagram below must reach every role: wait until all of them listen, and the leader,
# once it leads, left the acceptors group it leaves unread (its learner takes its own accepts
# in process): the acceptor's and the learner's sockets alone are in it (30 s).
wait_joined() {
	i=0
	until joined "$ACCEPTORS" 2 && ! joined "$ACCEPTORS" 3 && joined "$PROPOSERS" 1 &&
		joined "$SUBMIT" 1 && joined "$LEARNERS" 2 &&
		grep -q "proposer 0: leader is 0 at start" "$WORK/proposer.log"; do
		i=$((i + 1))
		[ $i -le 600 ] || fail "the roles did not join their multicast groups"
		sleep 0.05
	done
}

start acceptor paxos-acceptor -c "$CONF" -i 0
start proposer paxos-proposer -c "$CONF" -i 0
start learner paxos-learner -c "$CONF" -o "$WORK/learner.out"
wait_joined

# --- the datagrams (msgpack, see lib/net/codec.h) --------------------------------------------
hdr() { echo "94cd505806$(printf %02x "$1")00"; } # [magic, version 6, role $1, id 0]
IID_MAX=cfffffffffffffffff                        # 2^64-1 as uint64
BALLOT_MAX=ceffffffff                             # 2^32-1 as uint32
EVIL=c4046576696c                                 # bin8 "evil"
EVIL_HEX=6576696c                                 # how a learner would write it

# hex(N, BYTE): BYTE repeated N times
hex_repeat() { printf "%${1}s" "" | sed "s/ /$2/g"; }

# Malformed everywhere: each must raise malformed_datagrams by one in every receiver.
MALFORMED="
empty:
truncated-header:94cd5058
truncated-message:$(hdr 1)9301cf00000000
wrong-magic:94cd505901010093010165
wrong-version:94cd505802010093010165
wrong-role:94cd505806070093010165
header-not-array:cd505802010093010165
header-too-long:95cd50580201000093010165
unknown-type:$(hdr 1)93110165
type-zero:$(hdr 1)93000165
wrong-field-count:$(hdr 1)94010165ff
field-wrong-type:$(hdr 1)9301a17865
negative-iid:$(hdr 1)9301ff65
array32-4g-elements:$(hdr 1)ddffffffff01
nested-array:$(hdr 1)9391010165
map-instead:$(hdr 1)810101
bin32-4g-value:$(hdr 1)940301cc65c6ffffffff6576696c
acceptor-id-over-32:$(hdr 0)94050165cc20
repeat-backwards:$(hdr 2)9306${IID_MAX}05
trailing-garbage:$(hdr 1)93010165c1
not-msgpack:c1c1c1c1c1c1c1c1
text:68656c6c6f2c20776f726c64
too-many-messages:$(hdr 2)$(hex_repeat 1025 920700)
"
# Not hex strings: sent with paxos-send -p (zero padding).
OVERSIZED_PAD=$((MAX_DATAGRAM + 1000))
HUGE_PAD=65000

# Well formed but absurd, per group: decoded, then ignored or handled without harm.
ABSURD_ACCEPTORS="
$(hdr 1)9301${IID_MAX}${BALLOT_MAX}
$(hdr 1)9503${IID_MAX}${BALLOT_MAX}${EVIL}c2
$(hdr 2)9306${IID_MAX}${IID_MAX}
$(hdr 2)930600${IID_MAX}
$(hdr 2)920700
$(hdr 0)9602${IID_MAX}${BALLOT_MAX}${BALLOT_MAX}${EVIL}00
"
ABSURD_PROPOSERS="
$(hdr 0)9602${IID_MAX}${BALLOT_MAX}${BALLOT_MAX}${EVIL}1f
$(hdr 0)9405${IID_MAX}${BALLOT_MAX}1f
$(hdr 0)960201cc99cc99${EVIL}1f
$(hdr 1)930b63${IID_MAX}
$(hdr 3)930c6300
"
ABSURD_LEARNERS="
$(hdr 0)9704${IID_MAX}${BALLOT_MAX}${EVIL}00c300
$(hdr 0)970401${BALLOT_MAX}${EVIL}1fc300
$(hdr 0)970401${BALLOT_MAX}${EVIL}1fc200
$(hdr 0)96081f${IID_MAX}${IID_MAX}00c2
$(hdr 0)940a1f${IID_MAX}00
"
ABSURD_SUBMIT="
$(hdr 3)9209c400
$(hdr 3)9209c4026869
"

send() { "$BUILD/paxos-send" "$@" || fail "paxos-send $*"; }

n_malformed=0
for target in "$ACCEPTORS" "$PROPOSERS" "$LEARNERS" "$SUBMIT"; do
	n_malformed=0
	for entry in $MALFORMED; do
		send "$target" "${entry#*:}"
		n_malformed=$((n_malformed + 1))
	done
	send -p $OVERSIZED_PAD "$target" "$(hdr 3)9209c5ffff"
	send -p $HUGE_PAD "$target" "$(hdr 3)9209c6ffffffff"
	n_malformed=$((n_malformed + 2))
	sleep 0.1 # let the roles drain their sockets: the kernel buffer is finite
done
for hex in $ABSURD_ACCEPTORS; do send "$ACCEPTORS" "$hex"; done
for hex in $ABSURD_PROPOSERS; do send "$PROPOSERS" "$hex"; done
for hex in $ABSURD_LEARNERS; do send "$LEARNERS" "$hex"; done
for hex in $ABSURD_SUBMIT; do send "$SUBMIT" "$hex"; done
# A client value one byte over the maximum, in a datagram within max-datagram.
head -c $((MAX_VALUE + 1)) /dev/zero >"$WORK/zeros"
{ printf '%s' "$(hdr 3)9209c5$(printf %04x $((MAX_VALUE + 1)))" | xxd -r -p; cat "$WORK/zeros"; } \
	>"$WORK/value-too-big"
send "$SUBMIT" "@$WORK/value-too-big"
sleep 0.3

for name in acceptor proposer learner; do
	eval "pid=\$PID_$name"
	kill -0 "$pid" 2>/dev/null || fail "$name died on hostile datagrams"
done

# The cluster still serves.
"$BUILD/paxos-client" -c "$CONF" --count 200 --outstanding 16 --size 64 --time-limit 30 \
	>"$WORK/client.log" 2>&1 || fail "paxos-client did not get 200 values delivered afterwards"
cat "$WORK/client.log"
wait_lines "$WORK/learner.out" 200 30 || fail "the learner did not write 200 values"

for name in acceptor proposer learner; do
	eval "pid=\$PID_$name"
	kill -0 "$pid" 2>/dev/null || fail "$name died while serving after hostile datagrams"
done
stop_all
for name in acceptor proposer learner; do
	grep -q "^paxos: counters transport:" "$WORK/$name.log" ||
		fail "$name did not report its counters on SIGTERM (crashed?)"
done

# malformed NAME EXPECTED: the count NAME reported on exit
malformed() {
	got=$(sed -n 's/^paxos: counters transport:.*malformed_datagrams=\([0-9]*\).*/\1/p' \
		"$WORK/$1.log")
	[ "${got:-0}" -eq "$2" ] ||
		fail "$1 counted ${got:-0} malformed datagrams, want $2 (sent $2 to its groups)"
	echo "e2e_hostile: $1 dropped ${got:-0} malformed datagrams"
}
# A learning acceptor (learning-acceptors yes, the default) listens on the learners group too.
acceptor_groups=2
[ "$(awk '$1 == "learning-acceptors" { print $2 }' "$CONF")" = no ] && acceptor_groups=1
malformed acceptor $((acceptor_groups * n_malformed))
# The proposer listens on proposers, submit and learners, and, unicast, on acceptors (its
# member socket gets that group too); multicast, the leader leaves the acceptors group unread
# (its learner takes its own accepts in process). The learner: learners and acceptors.
proposer_groups=3
is_unicast "$CONF" && proposer_groups=4
malformed proposer $((proposer_groups * n_malformed))
malformed learner $((2 * n_malformed))
# A node of another version is named as such, not only counted.
for name in acceptor proposer learner; do
	grep -q "dropped a datagram of wire version 2 .*this node speaks version 6" \
		"$WORK/$name.log" || fail "$name did not say it got a datagram of wire version 2"
done
grep -q " $EVIL_HEX\$" "$WORK/learner.out" && fail "the learner delivered the forged value"
consecutive "$WORK/learner.out" >/dev/null || fail "learner output is not 1..N in order"
echo "e2e_hostile: all roles survived, dropped every malformed datagram and still served"
