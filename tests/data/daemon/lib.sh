# lib.sh: shared by the tests/daemon_*.sh integration scripts (sourced, not run).
# Each script prints TAP lines "ok - NAME" / "not ok - NAME" and exits non-zero on a failure.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
TMP=$(mktemp -d /tmp/alloctapd-test.XXXXXX)
FAILED=0
trap 'rm -rf "$TMP"' EXIT

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	shift
	for why in "$@"; do echo "#   $why"; done
	FAILED=1
}
check() { # NAME COMMAND...: ok when the command succeeds
	local name=$1
	shift
	if "$@" >"$TMP/check.out" 2>&1; then ok "$name"; else not_ok "$name" "$(head -c 2000 "$TMP/check.out")"; fi
}
finish() { exit $FAILED; }

# The tests need the real BPF program: say why when it cannot run, never skip silently.
require_bpf() {
	local why=""
	if [ ! -x "$D" ]; then
		why="$D is not built (make build/alloctapd)"
	elif [ "$(id -u)" -ne 0 ]; then
		why="not root: alloctapd needs CAP_BPF and CAP_PERFMON"
	fi
	if [ -n "$why" ]; then
		not_ok "BPF tests can run" "$why"
		finish
	fi
}

# compare_bracketed EXPECT LOG: for each (pid, tid) in EXPECT, the lines of LOG with that pid
# and tid, from the first one equal to EXPECT's first line for that tid, must equal EXPECT's
# lines for that tid exactly (same count, same order, nothing extra in between).
compare_bracketed() {
	local exp=$1 log=$2 key n
	[ -s "$exp" ] || { echo "empty expectation file $exp"; return 1; }
	for key in $(awk '{print $1 "_" $2}' "$exp" | sort -u); do
		local pid=${key%_*} tid=${key#*_}
		grep "^$pid $tid " "$exp" >"$TMP/exp.$tid"
		n=$(wc -l <"$TMP/exp.$tid")
		grep "^$pid $tid " "$log" | awk -v f="$(head -n1 "$TMP/exp.$tid")" \
			'found || $0 == f { found = 1; print }' | head -n "$n" >"$TMP/got.$tid"
		if ! cmp -s "$TMP/exp.$tid" "$TMP/got.$tid"; then
			echo "pid $pid tid $tid differs (expected < > traced):"
			diff "$TMP/exp.$tid" "$TMP/got.$tid" | head -20
			return 1
		fi
	done
}

# wait_for FILE PATTERN SECONDS: waits until FILE contains PATTERN.
wait_for() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# thread_state_tids DAEMON_PID: the keys (tids) of the daemon's per-thread state map (the LRU
# hash, map_type 9, with 65536 entries), found through the daemon's fdinfo.
thread_state_tids() {
	local f id=""
	for f in /proc/"$1"/fdinfo/*; do
		if grep -q '^map_type:[[:space:]]*9$' "$f" 2>/dev/null &&
			grep -q '^max_entries:[[:space:]]*65536$' "$f"; then
			id=$(sed -n 's/^map_id:[[:space:]]*//p' "$f")
		fi
	done
	[ -n "$id" ] || return 1
	bpftool -j map dump id "$id" | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    k = e.get("key")
    if isinstance(k, list):
        k = int.from_bytes(bytes(int(b, 16) for b in k), "little")
    print(k)'
}
