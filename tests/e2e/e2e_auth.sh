#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Authenticated datagrams over real multicast (inside a private network namespace): a cluster
# of 3 acceptors, 2 proposers and 2 learners sharing an auth-key-file.
#  (a) Key files a process must refuse at start: mode 0644, 31 bytes.
#  (b) Forged datagrams to every group, sent before any value: well-formed prepares with
#      ballot 2^64-1, accepts and "final" accepteds of a forged value, a client value, each
#      with no tag, a zero tag and a random tag, plus empty, garbage and oversized datagrams.
#      Without the key each would change something (acceptors promising a ballot no
#      proposer can exceed, learners delivering the forged value); with it each must be
#      dropped before decoding and counted in auth_failures, exactly, in every receiver.
#      Then the cluster delivers values of 64 bytes and of the largest size a key allows.
#  (c) Processes with another key, claiming to be acceptor 0, proposer 0 and a client, run
#      beside the cluster: their datagrams are counted as failures, none of their values is
#      delivered, and the cluster goes on delivering; an oracle with the other key is not
#      obeyed, one with the key is.
# Both learners must write identical sequences holding every value of the keyed clients and
# no other (a change of leader may deliver a value twice, as in e2e_failover).
# Usage: e2e_auth.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$1
SRC=$2
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
. "$SRC/tests/e2e/cluster.sh"

"$BUILD/paxos-keygen" "$WORK/cluster.key" 2>/dev/null || fail "paxos-keygen failed"
"$BUILD/paxos-keygen" "$WORK/other.key" 2>/dev/null || fail "paxos-keygen failed"
[ "$(stat -c %a "$WORK/cluster.key")" = 600 ] || fail "paxos-keygen did not write mode 0600"
"$BUILD/paxos-keygen" "$WORK/cluster.key" 2>"$WORK/keygen.err" &&
	fail "paxos-keygen overwrote an existing key"
grep -q "exists; not overwritten" "$WORK/keygen.err" || fail "paxos-keygen: $(cat "$WORK/keygen.err")"

# keyed_conf KEY_FILE OUT: the shipped configuration with KEY_FILE and JSON counters every
# 100 ms (read below to see what each process has counted so far).
keyed_conf() {
	sed -e 's/^counters-interval-ms  *[0-9]*/counters-interval-ms 100/' \
		-e 's/^counters-json  *no/counters-json yes/' "$(base_conf)" >"$2"
	echo "auth-key-file $1" >>"$2"
	[ "$(grep -Ec '^(counters-interval-ms 100|counters-json yes)( |$)' "$2")" -eq 2 ] ||
		fail "cannot set the counters in $2"
}
CONF=$WORK/paxos.conf
OTHER=$WORK/other.conf
keyed_conf "$WORK/cluster.key" "$CONF"
keyed_conf "$WORK/other.key" "$OTHER"
group() { awk -v k="$1-group" '$1 == k { print $2 }' "$CONF"; }
ACCEPTORS=$(group acceptors)
PROPOSERS=$(group proposers)
LEARNERS=$(group learners)
SUBMIT=$(group submit)
MAX_DATAGRAM=$(awk '$1 == "max-datagram" { print $2 }' "$CONF")
MAX_VALUE=$((MAX_DATAGRAM - 108)) # paxos.conf: all but 108 bytes with auth-key-file

# --- (a) key files refused at start -------------------------------------------------------
# refused KEY_FILE WHAT: a learner given KEY_FILE stops at once, saying WHAT about the file.
refused() {
	keyed_conf "$1" "$WORK/refused.conf"
	if timeout 10 "$BUILD/paxos-learner" -c "$WORK/refused.conf" -o /dev/null \
		2>"$WORK/refused.err"; then
		fail "a learner started with key file $1"
	fi
	grep -qF "auth-key-file $1: $2" "$WORK/refused.err" ||
		fail "key file $1: want '$2', got: $(cat "$WORK/refused.err")"
}
cp "$WORK/cluster.key" "$WORK/loose.key"
chmod 644 "$WORK/loose.key"
refused "$WORK/loose.key" "mode 0644 lets others than its owner at the key"
head -c 31 "$WORK/cluster.key" >"$WORK/short.key"
chmod 600 "$WORK/short.key"
refused "$WORK/short.key" "holds 31 bytes, a key is exactly 32"
echo "e2e_auth: key files with mode 0644 or 31 bytes are refused at start"

# --- the cluster ---------------------------------------------------------------------------
# joined GROUP N: at least N sockets on this host are members of multicast group GROUP
# (ADDRESS:PORT); /proc/net/igmp shows each address as hex, little-endian on x86.
joined() {
	hex=$(echo "${1%:*}" | awk -F. '{ printf "%02X%02X%02X%02X", $4, $3, $2, $1 }')
	[ "$(awk -v g="$hex" '$1 == g { n += $2 } END { print n + 0 }' /proc/net/igmp)" -ge "$2" ]
}
# Odd ids tag with XChaCha20-Poly1305, the others with auth-mac's default (AES-256-GCM where
# the CPU has AES-NI): every process checks both kinds.
CHACHA=$WORK/chacha.conf
sed 's/^auth-mac .*/auth-mac chacha20-poly1305/' "$CONF" >"$CHACHA"
grep -q '^auth-mac chacha20-poly1305' "$CHACHA" || fail "no auth-mac line in $CONF"
conf_of() { [ $(($1 % 2)) = 1 ] && echo "$CHACHA" || echo "$CONF"; }
for i in 0 1 2; do start acceptor$i paxos-acceptor -c "$(conf_of $i)" -i $i; done
for i in 0 1; do start proposer$i paxos-proposer -c "$(conf_of $i)" -i $i; done
for i in 0 1; do start learner$i paxos-learner -c "$(conf_of $i)" -o "$WORK/learner$i.out"; done
KEYED="acceptor0 acceptor1 acceptor2 proposer0 proposer1 learner0 learner1"
# Every forged datagram must reach every receiver: acceptors listen on the acceptors and
# learners groups (learning acceptors), proposers on proposers, submit, learners and acceptors
# (the leader's accepts), learners on learners and acceptors. The leader, once it leads, leaves
# the acceptors group (its learner takes its own accepts in process): 6 sockets are left in it
# (30 s).
i=0
until joined "$ACCEPTORS" 6 && ! joined "$ACCEPTORS" 7 && joined "$PROPOSERS" 2 &&
	joined "$SUBMIT" 2 && joined "$LEARNERS" 7 &&
	grep -q "proposer 0: leader is 0 at start" "$WORK/proposer0.log"; do
	i=$((i + 1))
	[ $i -le 600 ] || fail "the roles did not join their multicast groups"
	sleep 0.05
done

# --- (b) forged datagrams ------------------------------------------------------------------
hdr() { echo "94cd505806$(printf %02x "$1")00"; } # [magic, version 6, role $1, id 0]
U64_MAX=cfffffffffffffffff                        # 2^64-1 as uint64
EVIL=c4046576696c                                 # bin8 "evil"
EVIL_HEX=6576696c                                 # how a learner would write it
PREPARES=$(hdr 1)
ACCEPTS=$(hdr 1)
ACCEPTEDS=$(hdr 0)
for iid in 01 02 03 04 05 06 07 08; do
	PREPARES=$PREPARES"9301$iid$U64_MAX"
	ACCEPTS=$ACCEPTS"9503$iid$U64_MAX${EVIL}c2"
	for acceptor in 00 01 02; do ACCEPTEDS=$ACCEPTEDS"9704$iid$U64_MAX$EVIL${acceptor}c300"; done
done
CLIENT_VALUE=$(hdr 3)9209$EVIL
# A tag is a 24-byte nonce and a 16-byte authenticator.
ZERO_TAG=$(printf '%080d' 0)
random_tag() { od -An -tx1 -N40 /dev/urandom | tr -d ' \n'; }
send() { "$BUILD/paxos-send" "$@" || fail "paxos-send $*"; }
FORGED=0 # datagrams sent to each group
started=$(date +%s)
for target in "$ACCEPTORS" "$PROPOSERS" "$LEARNERS" "$SUBMIT"; do
	FORGED=0
	for body in "$PREPARES" "$ACCEPTS" "$ACCEPTEDS" "$CLIENT_VALUE"; do
		send "$target" "$body"
		send "$target" "$body$ZERO_TAG"
		send "$target" "$body$(random_tag)"
		FORGED=$((FORGED + 3))
	done
	send "$target" ""
	send "$target" c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1
	send -p $((MAX_DATAGRAM + 1000)) "$target" "$CLIENT_VALUE"
	FORGED=$((FORGED + 3))
	sleep 0.1 # let the roles drain their sockets: the kernel buffer is finite
done
send_seconds=$(($(date +%s) - started))
sleep 0.3

for name in $KEYED; do
	eval "pid=\$PID_$name"
	kill -0 "$pid" 2>/dev/null || fail "$name died on forged datagrams"
done

# Values of 64 bytes, then of the largest size the key leaves.
"$BUILD/paxos-client" -c "$CONF" --count 2000 --outstanding 32 --size 64 --resubmit-ms 2000 \
	--time-limit 60 --log "$WORK/submitted.small" >"$WORK/client.log" 2>&1 ||
	fail "the keyed paxos-client did not get 2000 values delivered after the forgeries"
grep -v '^{' "$WORK/client.log"
"$BUILD/paxos-client" -c "$CONF" --count 200 --outstanding 8 --size $MAX_VALUE \
	--resubmit-ms 2000 --time-limit 60 --log "$WORK/submitted.large" >"$WORK/client.log" 2>&1 ||
	fail "the keyed paxos-client did not get 200 values of $MAX_VALUE bytes delivered"

# counts NAME FIELD: FIELD of every transport counters line NAME reported, one a line
counts() { grep '"role":"transport"' "$WORK/$1.log" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }
# counter NAME FIELD: FIELD of the latest transport counters NAME reported
counter() { counts "$@" | tail -n 1; }
# settled NAME FIELD: FIELD once NAME's reports stopped moving (steady; reports come every
# 100 ms, later on a busy machine), or a failure
settled() { steady counts "$@" || fail "$1's $2 did not settle"; }
# forged_count NAME: the datagrams of (b) that reached NAME: FORGED per group it listens on.
# The leader (proposer 0) leaves the acceptors group unread: its learner hears its own
# accepts in process (lib/node/node.c, own_accepts).
forged_count() {
	case $1 in
	acceptor*) echo $((2 * FORGED)) ;;
	proposer0) echo $((3 * FORGED)) ;;
	proposer*) echo $((4 * FORGED)) ;;
	learner*) echo $((2 * FORGED)) ;;
	esac
}
for name in $KEYED; do
	got=$(settled "$name" auth_failures)
	want=$(forged_count "$name")
	[ "${got:-0}" -eq "$want" ] ||
		fail "$name counted ${got:-0} authentication failures, want $want"
	[ "$(counter "$name" malformed_datagrams)" -eq 0 ] ||
		fail "$name decoded a forged datagram (malformed_datagrams is not 0)"
	eval "AUTH_$name=$got"
	lines=$(grep -c "without a valid tag" "$WORK/$name.log" || true)
	[ "$lines" -ge 1 ] && [ "$lines" -le $((send_seconds + 2)) ] ||
		fail "$name logged $lines lines about failed datagrams in ${send_seconds}s"
done
grep -h "without a valid tag" "$WORK/learner0.log" | head -n 1
echo "e2e_auth: every forged datagram dropped before decoding and counted ($FORGED per group)"

# --- (c) processes with another key --------------------------------------------------------
start intruder_acceptor paxos-acceptor -c "$OTHER" -i 0
start intruder_proposer paxos-proposer -c "$OTHER" -i 0
"$BUILD/paxos-client" -c "$OTHER" --count 50 --outstanding 8 --size 64 --time-limit 3 \
	--log "$WORK/intruder.submitted" >"$WORK/intruder_client.log" 2>&1 &&
	fail "a client with another key got its values delivered"
[ -s "$WORK/intruder.submitted" ] || fail "the client with another key submitted nothing"
"$BUILD/paxos-client" -c "$CONF" --count 2000 --outstanding 32 --size 64 --resubmit-ms 2000 \
	--time-limit 60 --log "$WORK/submitted.beside" >"$WORK/client.log" 2>&1 ||
	fail "the keyed paxos-client did not get 2000 values delivered beside the intruders"

for name in $KEYED intruder_acceptor intruder_proposer; do
	eval "pid=\$PID_$name"
	kill -0 "$pid" 2>/dev/null || fail "$name died"
done
# stop NAME: stops one process started with start (the rest keep running)
stop() {
	eval "pid=\$PID_$1"
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
}
stop intruder_acceptor
stop intruder_proposer
# Everyone counted the other side's datagrams: the intruders' in the cluster (acceptors got
# the intruding proposer's prepares, proposers its heartbeats and the intruding client's
# values), the cluster's in the intruders (the stopped ones' last reports).
for name in $KEYED; do
	eval "before=\$AUTH_$name"
	got=$(settled "$name" auth_failures)
	eval "AUTH_$name=$got"
	case $name in learner*) continue ;; esac
	[ "$got" -gt "$before" ] || fail "$name counted no datagram of the processes with another key"
done
for name in intruder_acceptor intruder_proposer intruder_client; do
	got=$(counter "$name" auth_failures)
	[ "${got:-0}" -gt 0 ] || fail "$name counted no datagram of the keyed cluster as a failure"
done
echo "e2e_auth: processes with another key took no part and were counted as failures"

# The oracle, last (a change of leader may deliver a value twice: no client runs now): with
# the other key its orders are dropped unread (each proposer counts its 5 copies, nobody
# else anything); with the key they are obeyed.
"$BUILD/paxos-oracle" -c "$OTHER" --leader 1 2>/dev/null || fail "paxos-oracle (other key) failed"
for name in $KEYED; do
	eval "before=\$AUTH_$name"
	want=$before
	case $name in proposer*) want=$((before + 5)) ;; esac
	reached() { [ "$(counter "$name" auth_failures)" -ge "$want" ]; }
	eventually 30 reached || true
	got=$(settled "$name" auth_failures)
	[ "$got" -eq "$want" ] || fail "$name counted $got authentication failures after an" \
		"oracle with another key, want $want"
	eval "AUTH_$name=$got"
done
# last_leader NAME: the leader NAME's latest "leader is now" line names
last_leader() { sed -n 's/.*leader is now \([0-9]*\) .*/\1/p' "$WORK/$1.log" | tail -n 1; }
"$BUILD/paxos-oracle" -c "$CONF" --leader 1 2>/dev/null || fail "paxos-oracle failed"
i=0
until [ "$(last_leader proposer0)" = 1 ] && [ "$(last_leader proposer1)" = 1 ]; do
	i=$((i + 1))
	[ $i -le 300 ] || fail "the proposers did not obey the keyed oracle"
	sleep 0.1
done
"$BUILD/paxos-oracle" -c "$CONF" --auto 2>/dev/null || fail "paxos-oracle --auto failed"
echo "e2e_auth: an oracle with another key is not obeyed, one with the key is"

# Once both learners have written as much (files are flushed every 100 ms): identical
# outputs, consecutive instances from 1, and as values exactly those the keyed clients
# submitted. A change of leader (the oracle's, or one a loaded host causes by delaying
# heartbeats) may deliver a value twice, as in e2e_failover; nothing else may differ.
cat "$WORK/submitted.small" "$WORK/submitted.large" "$WORK/submitted.beside" >"$WORK/submitted"
i=0
while :; do
	n0=$(wc -l <"$WORK/learner0.out")
	n1=$(wc -l <"$WORK/learner1.out")
	[ "$n0" -eq "$n1" ] && [ "$n0" -ge 4200 ] && break
	i=$((i + 1))
	[ "$i" -le 600 ] || fail "learners did not converge on 4200 values ($n0 and $n1 lines)"
	sleep 0.1
done
stop_all
cmp -s "$WORK/learner0.out" "$WORK/learner1.out" || fail "learner outputs differ"
consecutive "$WORK/learner0.out" || fail "learner instances are not consecutive from 1"
grep -q " $EVIL_HEX\$" "$WORK/learner0.out" && fail "the forged value was delivered"
cut -d' ' -f2 "$WORK/learner0.out" | sort -u >"$WORK/delivered.set"
cut -d' ' -f2 "$WORK/submitted" | sort -u >"$WORK/submitted.set"
cut -d' ' -f2 "$WORK/intruder.submitted" | sort -u >"$WORK/intruder.set"
[ -z "$(comm -12 "$WORK/intruder.set" "$WORK/delivered.set")" ] ||
	fail "a value of the client with another key was delivered"
cmp -s "$WORK/delivered.set" "$WORK/submitted.set" ||
	fail "delivered values differ from the values the keyed clients submitted"
echo "e2e_auth: 4200 values delivered identically by 2 learners ($((n0 - 4200)) twice)," \
	"no forged or intruding value"
