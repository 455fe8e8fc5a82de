# tests/lib.sh: the TAP vocabulary every tests/*.sh sources (never run on its own).
#
# A script prints one line per test point, "ok - NAME" or "not ok - NAME" followed by its
# details on "#   " lines, and ends with `finish`: exit status 0 when every point passed, 1
# otherwise. tests/run.sh counts the "ok " and "not ok " lines. A check that cannot run (a
# program not built, no root) is a failed point with the reason, never a skipped one.
#
# Sourcing this file moves to the top of the repository (scripts name files relative to it;
# ROOT is its absolute path) and makes the scratch folder T, removed when the script exits.
# The run_cmd family leaves the last command's stdout in $T/out, its stderr in $T/err and its
# exit status in rc.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/alloctap-test.XXXXXX") || {
	echo "not ok - a scratch folder can be made"
	exit 1
}
trap 'rm -rf "$T"' EXIT
# alloctapd --stacks keeps its unwind tables in the scratch folder, never the machine's cache
export ALLOCTAP_CACHE_DIR="$T/unwind-cache"
FAILED=0
rc=0

# MULTIARCH: the machine's multiarch tuple; its libraries are in /lib/$MULTIARCH and
# /usr/lib/$MULTIARCH (the Makefile's AT_MULTIARCH for the C tests).
MULTIARCH=$(gcc -print-multiarch 2>/dev/null)
[ -n "$MULTIARCH" ] || MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
if [ -z "$MULTIARCH" ]; then
	echo "not ok - the multiarch tuple is known"
	echo "#   neither gcc -print-multiarch nor dpkg-architecture -qDEB_HOST_MULTIARCH answers"
	exit 1
fi
# LDSO: the dynamic loader, as programs name their interpreter.
LDSO=$(readelf -l /bin/sh 2>/dev/null | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')

# ok NAME: a passed point.
ok() {
	echo "ok - $1"
}

# fail NAME [DETAIL...]: a failed point; every line of every DETAIL is printed after "#   ".
fail() {
	local why
	echo "not ok - $1"
	shift
	for why in "$@"; do
		printf '%s\n' "$why" | sed 's/^/#   /'
	done
	FAILED=$((FAILED + 1))
}

# fail_run NAME [DETAIL...]: fail, then the first 20 lines of the last command's stderr.
fail_run() {
	fail "$@" "stderr was:" "$(head -n 20 "$T/err" 2>/dev/null)"
}

# finish: ends the script; status 0 when no point failed.
finish() {
	[ "$FAILED" -eq 0 ]
	exit
}

# check NAME COMMAND...: ok when COMMAND succeeds; otherwise fail with the start of its output.
check() {
	local name=$1
	shift
	if "$@" >"$T/check.out" 2>&1; then
		ok "$name"
	else
		fail "$name" "$(head -c 2000 "$T/check.out")"
	fi
}

# check_eq NAME GOT WANT [DETAIL...]: ok when the strings GOT and WANT are equal; otherwise
# fail with both, then each DETAIL (what explains it: a program's stderr).
check_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		local name=$1 got=$2 want=$3
		shift 3
		fail "$name" "got:  $got" "want: $want" "$@"
	fi
}

# check_file_eq NAME GOT WANT: ok when the files GOT and WANT are byte for byte equal.
check_file_eq() {
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		fail "$1" "$2 differs from $3 (< want, > got):" "$(diff "$3" "$2" 2>&1 | head -n 10)"
	fi
}

# run_cmd COMMAND...: runs COMMAND, stdout to $T/out, stderr to $T/err, exit status in rc.
run_cmd() {
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# check_cmd NAME RC OUT ERR -- COMMAND...: runs COMMAND (as run_cmd); ok when it exits RC, its
# stdout equals the file OUT and its stderr the file ERR. For OUT or ERR, "" means empty and
# "-" anything.
check_cmd() {
	local name=$1 want_rc=$2 out=$3 err=$4 why=""
	shift 5
	run_cmd "$@"
	[ "$rc" -eq "$want_rc" ] || why="exit $rc, want $want_rc"
	if [ -z "$why" ]; then
		if [ -z "$out" ]; then
			[ -s "$T/out" ] && why="stdout not empty"
		elif [ "$out" != "-" ] && ! cmp -s "$T/out" "$out"; then
			why="stdout differs from $out"
		fi
	fi
	if [ -z "$why" ] && [ "$err" != "-" ]; then
		if [ -z "$err" ]; then
			[ -s "$T/err" ] && why="stderr not empty: $(head -c 300 "$T/err")"
		elif ! cmp -s "$T/err" "$err"; then
			why="stderr differs from $err: $(diff "$err" "$T/err" | head -n 5)"
		fi
	fi
	if [ -z "$why" ]; then ok "$name"; else fail "$name" "$why"; fi
}

# check_err NAME RC TEXT COMMAND...: runs COMMAND (as run_cmd); ok when it exits RC and its
# stderr is TEXT (final newlines aside).
check_err() {
	local name=$1 want_rc=$2 want=$3
	shift 3
	run_cmd "$@"
	if [ "$rc" -eq "$want_rc" ] && [ "$(cat "$T/err")" == "$want" ]; then
		ok "$name"
	else
		fail_run "$name" "exit $rc (want $want_rc)" "want stderr: $want"
	fi
}

# check_err_match NAME RC PATTERN COMMAND...: runs COMMAND (as run_cmd); ok when it exits RC
# and a line of its stderr matches the grep PATTERN.
check_err_match() {
	local name=$1 want_rc=$2 pattern=$3
	shift 3
	run_cmd "$@"
	if [ "$rc" -eq "$want_rc" ] && grep -q -- "$pattern" "$T/err"; then
		ok "$name"
	else
		fail "$name" "status $rc (want $want_rc)" "$(head -c 500 "$T/err")"
	fi
}

# check_err_lines NAME LINE...: ok when rc is 0 and every LINE is a whole line of $T/err.
check_err_lines() {
	local name=$1 line missing=()
	shift
	for line in "$@"; do
		grep -qxF -- "$line" "$T/err" || missing+=("missing line: $line")
	done
	[ "$rc" -eq 0 ] || missing+=("exit $rc (want 0)")
	if [ ${#missing[@]} -eq 0 ]; then ok "$name"; else fail_run "$name" "${missing[@]}"; fi
}

# check_err_last NAME TEXT: ok when the last line of $T/err is TEXT.
check_err_last() {
	local got
	got=$(tail -n 1 "$T/err")
	check_eq "$1" "$got" "$2"
}

# need_built FILE...: fails and ends the script unless every FILE is an executable.
need_built() {
	local f
	for f in "$@"; do
		if [ ! -x "$f" ]; then
			fail "$f is built" "run make first"
			finish
		fi
	done
}

# need_make TARGET...: builds TARGETs quietly; fails and ends the script if make fails.
need_make() {
	if ! make -s "$@" >"$T/make.out" 2>&1; then
		fail "build $*" "$(head -c 2000 "$T/make.out")"
		finish
	fi
}

# need_root REASON: fails and ends the script unless it runs as root; REASON says what for.
need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		fail "runs as root" "not root: $1"
		finish
	fi
}

# uprobe_holders: "PID COMM" of each process that holds a uprobe_multi BPF link or a perf
# event (bpftrace's and perf's uprobes are perf events), one a line: an oracle that stops on
# breakpoints misses the calls a uprobe's trap takes, so its failure names them.
uprobe_holders() {
	local fd pid
	for fd in /proc/[0-9]*/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		'anon_inode:bpf_link')
			grep -q 'link_type:.*uprobe_multi' "${fd%/fd/*}/fdinfo/${fd##*/}" 2>/dev/null ||
				continue
			;;
		'anon_inode:[perf_event]') ;;
		*) continue ;;
		esac
		pid=${fd#/proc/}
		pid=${pid%%/*}
		echo "$pid $(cat "/proc/$pid/comm" 2>/dev/null)"
	done | sort -u
}

# need_bpf DAEMON: fails and ends the script unless the real BPF program can be loaded: the
# daemon built and root (CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN and CAP_SYS_PTRACE).
need_bpf() {
	need_built "$1"
	need_root "$1 needs CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN and CAP_SYS_PTRACE"
}

# wait_for FILE PATTERN SECONDS: waits until FILE has a line matching PATTERN; 1 on timeout.
wait_for() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# compare_bracketed EXPECT LOG: for each (pid, tid) in EXPECT, the lines of LOG with that pid
# and tid, from the first one equal to EXPECT's first line for that tid, must equal EXPECT's
# lines for that tid exactly (same count, same order, nothing extra in between). Uses $T.
compare_bracketed() {
	local exp=$1 log=$2 key n
	[ -s "$exp" ] || { echo "empty expectation file $exp"; return 1; }
	for key in $(awk '{print $1 "_" $2}' "$exp" | sort -u); do
		local pid=${key%_*} tid=${key#*_}
		grep "^$pid $tid " "$exp" >"$T/exp.$tid"
		n=$(wc -l <"$T/exp.$tid")
		grep "^$pid $tid " "$log" | awk -v f="$(head -n1 "$T/exp.$tid")" \
			'found || $0 == f { found = 1; print }' | head -n "$n" >"$T/got.$tid"
		if ! cmp -s "$T/exp.$tid" "$T/got.$tid"; then
			echo "pid $pid tid $tid differs (expected < > traced):"
			diff "$T/exp.$tid" "$T/got.$tid" | head -20
			return 1
		fi
	done
}

# figures FILE: the lines of alloctap-replay's stderr FILE that depend only on the log (not on
# time or memory): the summary without its timings and peak RSS, and the stats lines without
# their place (line=/event=) and memory figures.
figures() {
	grep -v -e '^wall time ns:' -e '^ns per operation:' -e '^peak rss bytes:' -e '^stats ' "$1"
	sed -n 's/^stats [a-z]*=[0-9]* \(ops=[0-9]* objects=[0-9]* slots=[0-9]* requested=[0-9]*\) .*/stats \1/p' "$1"
}

# lz4_frames FILE [N]: the number of lz4 frames FILE holds, walked by their headers and block
# sizes (LZ4 Frame Format); nothing printed, status 1, unless they end exactly at the file's
# end. With N: the bytes of the Nth frame (from 1) instead.
lz4_frames() {
	python3 - "$1" "${2:-0}" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
want = int(sys.argv[2])
at = frames = 0
while at < len(d):
    if d[at:at + 4] != b'\x04\x22\x4d\x18':
        sys.exit(1)
    begin = at
    flg = d[at + 4]
    at += 7 + (8 if flg & 8 else 0) + (4 if flg & 1 else 0)
    while True:
        (size,) = struct.unpack_from('<I', d, at)
        at += 4
        if size == 0:
            break
        at += (size & 0x7fffffff) + (4 if flg & 16 else 0)
    at += 4 if flg & 4 else 0
    frames += 1
    if frames == want:
        sys.stdout.buffer.write(d[begin:at])
        sys.exit(0)
if at != len(d) or want:
    sys.exit(1)
print(frames)
PY
}
