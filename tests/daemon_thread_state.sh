#!/usr/bin/env bash
# alloctapd's per-thread call state with the real BPF program: a thread's state is the slot of
# an array at its tid modulo the slot count, claimed at its first call and released when it
# exits or execs; a thread whose slot another live thread holds keeps its state in task
# storage. The thread_slots fixture makes, with chosen tids: a process whose slot the root holds;
# one whose slot a thread held until it ended; one whose slot a thread held until it execed.
# Every process's lines must be in the log exactly, and exactly one process (the first) may have
# its state in task storage: a slot not released would send another there.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
need_built "$FX/thread_slots"

SLOTS=$(sed -n 's/^#define AT_THREAD_SLOTS \([0-9]*\)$/\1/p' bpf/alloctap.h)
[ -n "$SLOTS" ] || { fail "bpf/alloctap.h defines AT_THREAD_SLOTS"; finish; }

# Tids up to twice the slot count and more: the fixture picks them above the root's.
old_max=$(cat /proc/sys/kernel/pid_max)
if [ "$old_max" -lt $((4 * SLOTS)) ]; then
	if ! echo $((4 * SLOTS)) >/proc/sys/kernel/pid_max; then
		fail "kernel.pid_max can be raised to $((4 * SLOTS))" "needed for tids sharing a slot"
		finish
	fi
	trap 'echo "$old_max" >/proc/sys/kernel/pid_max; rm -rf "$T"' EXIT
fi

mkdir "$T/tree"
"$D" -vv -o "$T/tree.log" -- "$FX/thread_slots" "$T/tree" "$SLOTS" 2>"$T/tree.err"
rc=$?
check "the command's status (0)" test $rc -eq 0
pids=($(cat "$T/tree/tree.pids" 2>/dev/null))
check "the fixture made its 5 processes" test "${#pids[@]}" -eq 5
check "the first child's pid shares the root's slot" \
	test $((pids[1] % SLOTS)) -eq $((pids[0] % SLOTS))
cat "$T"/tree/[0-9]*.exp >"$T/all.exp" 2>/dev/null
check "every process's and thread's calls are in the log exactly" \
	compare_bracketed "$T/all.exp" "$T/tree.log"
check "nothing lost, 5 processes seen" \
	grep -qE '^alloctapd: [0-9]+ events written, 0 events lost, 5 processes seen$' "$T/tree.err"
check "one thread's state in task storage: slots are released at exit and at exec" \
	bash -c "grep -qE '^alloctapd: per-thread state: [0-9]+ threads in their slots, 1 in task storage' \
		'$T/tree.err' || { grep 'per-thread state' '$T/tree.err'; exit 1; }"
finish
