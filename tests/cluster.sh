# Shell helpers for end-to-end tests: start role binaries, remember their PIDs, stop only
# those. Source it with BUILD set to the build directory and WORK to a scratch directory.
PIDS=""

start() { # start NAME BINARY ARGS...: runs in the background, logs to $WORK/NAME.log
	name=$1
	shift
	"$BUILD/$@" >"$WORK/$name.log" 2>&1 &
	PIDS="$PIDS $!"
	eval "PID_$name=$!"
}

stop_all() {
	for pid in $PIDS; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in $PIDS; do wait "$pid" 2>/dev/null || true; done
	PIDS=""
}

fail() {
	echo "FAIL: $*" >&2
	for f in "$WORK"/*.log; do
		[ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; } >&2
	done
	stop_all
	exit 1
}

# wait_lines FILE N SECONDS: until FILE has at least N lines
wait_lines() {
	i=0
	while [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -lt "$2" ]; do
		i=$((i + 1))
		[ "$i" -gt $(($3 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# consecutive FILE: the instances of "IID HEX" lines run 1, 2, 3, ... in order; several lines
# may share an instance (values batched into it, thesis 3.7.4).
consecutive() {
	awk '$1 != (NR == 1 ? 1 : prev) && $1 != prev + 1 { print "instance " $1 " at line " NR; bad = 1; exit }
		{ prev = $1 } END { exit bad }' "$1"
}

# check_outputs EXPECTED_COUNT SUBMITTED_LOG OUTPUT...: identical outputs, consecutive
# instances from 1 (several lines share an instance when values were batched into it), every
# submitted value exactly once.
check_outputs() {
	count=$1
	submitted=$2
	shift 2
	first=$1
	for out in "$@"; do
		cmp -s "$first" "$out" || fail "learner outputs $first and $out differ"
	done
	[ "$(wc -l <"$first")" -eq "$count" ] || fail "$first has $(wc -l <"$first") lines, want $count"
	consecutive "$first" || fail "instances in $first are not consecutive from 1"
	cut -d' ' -f2 "$first" | sort >"$WORK/delivered.sorted"
	cut -d' ' -f2 "$submitted" | sort >"$WORK/submitted.sorted"
	[ -z "$(uniq -d "$WORK/delivered.sorted")" ] || fail "a value was delivered twice"
	cmp -s "$WORK/delivered.sorted" "$WORK/submitted.sorted" ||
		fail "delivered values differ from submitted values"
}

# converged COUNT SUBMITTED_LOG OUTPUT...: waits up to 20 s until every output has the same
# number of lines, at least COUNT (files are flushed every 100 ms); stops the cluster; then the
# outputs must be identical, consecutive from instance 1 and hold every submitted value (a
# leader change may deliver one twice: at-least-once). Sets LINES to the outputs' length.
converged() {
	count=$1
	submitted=$2
	shift 2
	i=0
	while :; do
		LINES=$(wc -l <"$1")
		same=1
		for out in "$@"; do
			[ "$(wc -l <"$out")" -eq "$LINES" ] || same=0
		done
		[ "$same" -eq 1 ] && [ "$LINES" -ge "$count" ] && break
		i=$((i + 1))
		[ "$i" -le 200 ] || fail "learners did not converge ($(wc -l "$@" | head -n -1 | tr -s ' \n' ' '))"
		sleep 0.1
	done
	stop_all
	for out in "$@"; do
		cmp -s "$1" "$out" || fail "learner outputs $1 and $out differ"
	done
	consecutive "$1" || fail "learner instances are not consecutive from 1"
	cut -d' ' -f2 "$1" | sort -u >"$WORK/delivered.set"
	cut -d' ' -f2 "$submitted" | sort -u >"$WORK/submitted.set"
	missing=$(comm -23 "$WORK/submitted.set" "$WORK/delivered.set" | wc -l)
	[ "$missing" -eq 0 ] || fail "$missing submitted values were never delivered"
}
