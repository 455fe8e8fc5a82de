#!/usr/bin/env bash
# alloctapd's per-thread call state with the real BPF program: a thread's state is a slot of an
# array chosen by the address of its saved registers, claimed at its first call and released
# when it exits; a thread whose slot another thread holds keeps its state in task storage.
# With ALLOCTAP_THREAD_SLOTS=1 every thread shares the one slot: the thread_slots fixture runs a
# known sequence in a thread (task storage), in a forked child (task storage), in a thread that
# starts once the slot's holder has ended (the slot) and, after that thread execs, under its new
# tid (the slot, its id updated). Every thread's calls must be in the log exactly, and the
# summary must count two threads of each kind: a slot not released would send the last thread
# to task storage. The program's counts of held slots and of threads in task storage (which
# say whether a slot or the storage need be looked up) must be back at 0 once every thread has
# exited.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
need_built "$FX/thread_slots"

export -f compare_bracketed
export T
mkdir "$T/tree"
ALLOCTAP_THREAD_SLOTS=1 "$D" -vv -o "$T/tree.log" -- "$FX/thread_slots" "$T/tree" 2>"$T/tree.err"
rc=$?
check "one slot: the command's status (0)" test $rc -eq 0
pids=($(cat "$T/tree/tree.pids" 2>/dev/null))
check "one slot: the fixture ran every step (2 processes)" test "${#pids[@]}" -eq 2
cat "$T"/tree/[0-9]*.exp >"$T/all.exp" 2>/dev/null
check "one slot: every thread's calls are in the log exactly (4 threads)" \
	bash -c "[ \$(cut -d' ' -f1,2 '$T/all.exp' | sort -u | wc -l) -eq 4 ] &&
		compare_bracketed '$T/all.exp' '$T/tree.log'"
check "one slot: the exec'd thread's calls carry its new tid (the process's pid)" \
	bash -c "grep -q '^${pids[0]} ${pids[0]} ' '$T/all.exp'"
check "one slot: nothing lost, 2 processes seen" \
	grep -qE '^alloctapd: [0-9]+ events written, 0 events lost, 2 processes seen$' "$T/tree.err"
check "one slot: 2 threads in the slot (released at exit), 2 in task storage, none of either held at the end" \
	bash -c "grep -qx 'alloctapd: per-thread state: 2 threads in their slots, 2 in task storage (their slot was held); held now: 0 slots, 0 in storage' \
		'$T/tree.err' || { grep 'per-thread state' '$T/tree.err'; exit 1; }"

# A thread that ends while its process lives on is ended in a binary trace: an END record after
# its last event (not the process's exit), so the writer and readers release its state. A text
# trace has no such line, and the summary counts no END as an event.
need_built "$FX/thread_serial"
"$D" -f binary -o "$T/serial.atz" -- "$FX/thread_serial" 2000 2>"$T/serial.err"
check "thread ends: the command's status (0)" test $? -eq 0
lz4 -q -d -c "$T/serial.atz" | python3 "$ROOT/tests/atz_spec_reader.py" --ends >"$T/serial.ends"
check "thread ends: one END per ended thread, after its last event, at most 3 threads at once" \
	bash -c "python3 '$ROOT/tests/thread_ends.py' 2000 <'$T/serial.ends' >'$T/serial.count'"
check "thread ends: the summary counts the events, not the ENDs" \
	bash -c "n=\$(sed -n 's/^EVENTS //p' '$T/serial.count');
		grep -qE \"^alloctapd: \$n events written, 0 events lost, 1 processes seen\$\" '$T/serial.err'"
"$FX/thread_serial" 2000 1500 &
serial=$!
"$D" -f binary -o "$T/serial_pid.atz" --pid $serial 2>"$T/serial_pid.err"
wait $serial
check "thread ends, --pid: one END per ended thread, after its last event" \
	bash -c "lz4 -q -d -c '$T/serial_pid.atz' | python3 '$ROOT/tests/atz_spec_reader.py' --ends |
		python3 '$ROOT/tests/thread_ends.py' 2000 >/dev/null"
"$D" -vv -o "$T/serial.log" -- "$FX/thread_serial" 2000 2>"$T/serial_text.err"
check "thread ends: 2000 threads' states all given back (0 slots, 0 in storage held at the end)" \
	bash -c "grep -qE '^alloctapd: per-thread state: [0-9]+ threads in their slots, [0-9]+ in task storage \(their slot was held\); held now: 0 slots, 0 in storage\$' '$T/serial_text.err' ||
		{ grep 'per-thread state' '$T/serial_text.err'; exit 1; }"
check "thread ends: a text trace holds event lines only, 2000 threads' mallocs" \
	bash -c "! grep -vqE '^[0-9]+ [0-9]+ [a-z_]+\([0-9a-fx,]*\)(=0x[0-9a-f]+)?\$' '$T/serial.log' &&
		[ \$(grep -cE '^([0-9]+) ([0-9]+) malloc\(40\)=' '$T/serial.log') -ge 2000 ] &&
		[ \$(wc -l <'$T/serial.log') -eq \$(sed -n 's/^alloctapd: \([0-9]*\) events written.*/\1/p' '$T/serial_text.err') ]"

# The variable is checked.
for bad in 0 3 abc 2097152 ""; do
	ALLOCTAP_THREAD_SLOTS=$bad "$D" -o "$T/bad.log" -- /bin/true 2>"$T/bad.err"
	rc=$?
	check "ALLOCTAP_THREAD_SLOTS='$bad': refused with a reason, status 1" \
		bash -c "[ $rc -eq 1 ] && grep -q 'ALLOCTAP_THREAD_SLOTS=$bad: not a power of two from 1 to 1048576' '$T/bad.err'"
done
finish
