#!/usr/bin/env bash
# Complete stacks for real programs built without frame pointers: gcc's cc1 (compiling a file
# of this repository at -O2, followed from the gcc driver) and a C++ program
# (tests/data/stacks/cxx_workload.cpp at -O2 -fomit-frame-pointer: operator new through
# libstdc++, exceptions, virtual calls), each traced with alloctapd --stacks. Every allocation
# must carry a stack, and at least 99.9% of them must be complete (reaching _start or a
# thread's start) or truncated at 128 frames. The same for allocations made while another
# thread keeps changing the address space. python3 is checked frame by frame against libdw in
# tests/oracle_stacks.sh.
. "$(dirname "$0")/lib.sh"
need_built build/alloctapd build/bench/atz_tool build/alloctap-report
need_bpf build/alloctapd
A=build/bench/atz_tool

# complete_enough NAME TRACE: the share of complete stacks, and every allocation with one.
complete_enough() {
	local name=$1 trace=$2 allocs counts
	"$A" stacks "$trace" | awk '{print $2}' | sort | uniq -c >"$T/$name.counts"
	counts=$(awk '{n += $1; if ($2 != "incomplete") ok += $1} END {printf "%d %d", n, ok}' "$T/$name.counts")
	allocs=$(build/alloctap-report export --folded "$trace" | awk '{n += $NF} END {print n + 0}')
	read -r n ok <<<"$counts"
	check_eq "$name: every allocation carries a stack ($allocs allocations)" "$n" "$allocs"
	if [ "$n" -gt 0 ] && [ $((ok * 1000)) -ge $((n * 999)) ]; then
		ok "$name: at least 99.9% of the stacks complete ($ok of $n)"
	else
		fail "$name: at least 99.9% of the stacks complete" "$ok of $n: $(tr '\n' ' ' <"$T/$name.counts")"
	fi
}

if build/alloctapd -q --stacks -f binary -o "$T/cc1.atz" -- \
	gcc -O2 -Ilib -c report/heap.c -o "$T/heap.o" 2>"$T/cc1.err"; then
	ok "cc1: gcc -O2 -c traced with --stacks"
	complete_enough cc1 "$T/cc1.atz"
	check_eq "cc1: the compiler's allocations are there (a process of over 100000 events)" \
		"$(build/alloctap-report summary --json "$T/cc1.atz" | grep -o '"events":[0-9]*' | tail -n +2 | sed 's/.*://' | sort -n | tail -n 1 | awk '{print ($1 > 100000)}')" 1
else
	fail "cc1: gcc -O2 -c traced with --stacks" "$(tail -n 5 "$T/cc1.err")"
fi

if ! command -v g++ >/dev/null; then
	fail "C++: g++ builds the workload" "g++ is not installed (make deps installs it)"
elif g++ -O2 -fomit-frame-pointer -o "$T/cxx" tests/data/stacks/cxx_workload.cpp 2>"$T/gxx.err"; then
	if build/alloctapd -q --stacks -f binary -o "$T/cxx.atz" -- "$T/cxx" 2>"$T/cxx.err"; then
		ok "C++: traced with --stacks"
		complete_enough "C++" "$T/cxx.atz"
		# 100 of the 300 rounds throw: each exception's memory comes from libstdc++'s
		# __cxa_allocate_exception, called from work()'s cold part
		check_eq "C++: the 100 thrown exceptions, allocated by __cxa_allocate_exception under work()" \
			"$(build/alloctap-report export --folded "$T/cxx.atz" | sed -n 's/.*;main;work(int)[^;]*;__cxa_allocate_exception;malloc \([0-9]*\)$/\1/p')" 100
	else
		fail "C++: traced with --stacks" "$(tail -n 5 "$T/cxx.err")"
	fi
else
	fail "C++: g++ builds the workload" "$(head -n 5 "$T/gxx.err")"
fi

# Two threads allocating while a third maps, protects and unmaps memory every 5 us
# (tests/fixtures/stacks_mmap_storm.c): each change moves the address space's sequence, so the
# walk checks each mapping again, and another thread often holds the lock it would take.
STORM=build/fixtures/stacks_mmap_storm
if [ ! -x "$STORM" ]; then
	fail "mmap storm: the fixture is built" "make tests builds $STORM"
elif build/alloctapd -q --stacks -f binary -o "$T/storm.atz" -- "$STORM" 20000 2 5 \
	>"$T/storm.out" 2>"$T/storm.err"; then
	ok "mmap storm: traced with --stacks"
	read -r _ calls _ changes <"$T/storm.out"
	check "mmap storm: 40000 calls while the address space changed over 1000 times ($changes)" \
		test "$calls" = 40000 -a "${changes:-0}" -gt 1000
	complete_enough "mmap storm" "$T/storm.atz"
else
	fail "mmap storm: traced with --stacks" "$(tail -n 5 "$T/storm.err")"
fi
finish
