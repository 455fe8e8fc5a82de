#!/usr/bin/env bash
# Probe placement: each function's probes (the entry probe and, for allocations, the return
# probe at the same place) move to the first instruction the kernel emulates, and the log is the
# same with and without the move (no call goes unrecorded, not even free(NULL)), with glibc,
# jemalloc, tcmalloc and mimalloc, and with statically linked allocators (glibc's and a
# program's own); -v prints every site. --floor attaches the same sites and records nothing.
# --discard records every call and reads none: the records it counts are, exactly, the events
# of the same run's trace, its reallocs' entry records and its threads' ends.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
LIBDIR=/usr/lib/$MULTIARCH

libc=$(ldd "$FX/alloc_sequence" | awk '$1 == "libc.so.6" {print $3}')
libc=$(readlink -f "$libc")

# trace NAME PRELOAD PROGRAM ARGS...: traces the program placed and --probe-at-entry, checks
# both against the sequence the program expected (when it writes one: $T/NAME.MODE.exp) and
# that both munge to the same log.
trace() {
	local name=$1 pre=$2 mode opt arg args
	shift 2
	for mode in placed entry; do
		opt=()
		[ $mode = entry ] && opt=(--probe-at-entry)
		args=()
		for arg in "$@"; do args+=("${arg//EXP/$T/$name.$mode.exp}"); done
		env ${pre:+LD_PRELOAD=$pre} "$D" -v "${opt[@]}" -o "$T/$name.$mode.log" -- "${args[@]}" \
			2>"$T/$name.$mode.err" >/dev/null
		check "$name, $mode: exit status 0" test $? -eq 0
		if [ -e "$T/$name.$mode.exp" ]; then
			check "$name, $mode: the sequence matches exactly" \
				bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/$name.$mode.exp $T/$name.$mode.log"
		fi
		"$ROOT/build/alloctap-munge" -q "$T/$name.$mode.log" -o "$T/$name.$mode.munged" 2>/dev/null
	done
	check_file_eq "$name: placed and at-entry traces munge to the same log" \
		"$T/$name.placed.munged" "$T/$name.entry.munged"
	check "$name: ... which is not empty" test -s "$T/$name.placed.munged"
}

# site_is NAME OBJECT FUNCTION OFFSET INSN: -v put FUNCTION's probes OFFSET bytes into it, on
# an instruction of kind INSN, and objdump agrees that the instruction there is one (jcc: j*).
site_is() {
	local name=$1 obj=$2 fn=$3 off=$4 insn=$5 line start got
	line=$(grep -E "^alloctapd: probe $fn: $obj\+0x[0-9a-f]+, " "$T/$name.placed.err" | head -n1)
	start=$(sed -n 's/.*+0x\([0-9a-f]*\), .*/\1/p' <<<"$line")
	# the file offset of a library's text equals its address in Debian's objects
	got=$(objdump -d --no-show-raw-insn --start-address=$((0x$start + off)) \
		--stop-address=$((0x$start + off + 16)) "$obj" | awk -F'\t' 'NF >= 2 {print $2; exit}')
	check "$name: $fn's probes at +$off ($insn), where objdump shows '${got%% *}'" \
		bash -c "grep -qE ', entry (and return probes|probe) at \+$off \($insn: first emulated instruction\)' <<<'$line' &&
			case '$insn:${got%% *}' in jcc:j*|push:push*) ;; *) false ;; esac"
}

trace glibc "" "$FX/alloc_sequence" EXP --threads 0
check "glibc: free(0x0) was in the sequence" grep -q ' free(0x0)$' "$T/glibc.placed.exp"
# On Debian 12's glibc 2.36, free starts "test %rdi,%rdi; je": the je (+3) is emulated; malloc
# starts with a push, emulated: its probes stay at the entry.
if [ "$(sha256sum <"$libc" | cut -c1-16)" = "$(sha256sum <$LIBDIR/libc.so.6 | cut -c1-16)" ]; then
	site_is glibc "$libc" free 3 jcc
	check "glibc: malloc's probes at its entry (push, emulated)" \
		grep -qE "^alloctapd: probe malloc: $libc\+0x[0-9a-f]+, entry and return probes at \+0 \(push: the entry is emulated\)$" "$T/glibc.placed.err"
	check "glibc: its two internal call sites to free are probed" \
		grep -qE "^alloctapd: $libc: 2 direct calls to its own entry points from outside them \(probed, not recorded\)" "$T/glibc.placed.err"
fi
check "--probe-at-entry: free's entry probe at +0" \
	grep -qE "^alloctapd: probe free: .*, entry probe at \+0 \(entry: --probe-at-entry\)$" "$T/glibc.entry.err"
check "--probe-at-entry: malloc's probes at +0" \
	grep -qE "^alloctapd: probe malloc: .*, entry and return probes at \+0 \(entry: --probe-at-entry\)$" "$T/glibc.entry.err"

for a in jemalloc tcmalloc mimalloc; do
	case $a in
	jemalloc) lib=$LIBDIR/libjemalloc.so.2 ;;
	tcmalloc) lib=$LIBDIR/libtcmalloc_minimal.so.4 ;;
	mimalloc) lib=$LIBDIR/libmimalloc.so.2 ;;
	esac
	if [ ! -e "$lib" ]; then
		fail "$a is installed" "$lib is missing (make deps installs it)"
		continue
	fi
	# without pvalloc and reallocarray: these allocators do not define them, and glibc's
	# versions are neither probed nor safe on their blocks
	trace "$a" "$lib" "$FX/alloc_sequence" EXP --threads 0 --no-extras
	# the object is named as the process maps it: the file a soname link points to
	real=$(readlink -f "$lib")
	check "$a: -v prints a site for malloc, free, calloc and realloc" \
		bash -c "for f in malloc free calloc realloc; do grep -qE \"^alloctapd: probe \$f: $real\+0x[0-9a-f]+, entry (and return probes|probe) at \+[0-9]+ \" '$T/$a.placed.err' || exit 1; done"
done
# Debian 12's jemalloc 5.3 starts malloc with "cmp $0x1000,%rdi; ja": the ja (+7) takes both
# probes, and tcmalloc's malloc "mov, test, jne": the jne (+10).
site_is jemalloc "$(readlink -f "$LIBDIR/libjemalloc.so.2")" malloc 7 jcc
site_is tcmalloc "$(readlink -f "$LIBDIR/libtcmalloc_minimal.so.4")" malloc 10 jcc
# mimalloc's malloc, calloc and realloc load the thread's heap into rdi first, after copying the
# arguments elsewhere: the sites follow the copies, and the entry program reads the arguments
# where they went (the sequence above matched exactly, sizes included).
site_is mimalloc "$(readlink -f "$LIBDIR/libmimalloc.so.2")" malloc 21 jcc
site_is mimalloc "$(readlink -f "$LIBDIR/libmimalloc.so.2")" calloc 18 jcc
check "mimalloc: -v says where the arguments are" \
	bash -c "grep -qE '^alloctapd: probe malloc: .*libmimalloc.so.2.*, arguments in rsi$' '$T/mimalloc.placed.err' &&
		grep -qE '^alloctapd: probe calloc: .*libmimalloc.so.2.*, arguments in rax, rsi$' '$T/mimalloc.placed.err' &&
		grep -qE '^alloctapd: probe realloc: .*libmimalloc.so.2.* at \+20 \(jmp: first emulated instruction\), arguments in rsi, rdx$' '$T/mimalloc.placed.err'"

# Statically linked: glibc's allocator in the program, and a program's own allocator.
trace static-glibc "" "$FX/unwind_static"
trace static-own "" "$FX/alloc_static" EXP
check "static-glibc: probes placed in the program itself" \
	grep -qE "^alloctapd: probe free: $FX/unwind_static\+0x[0-9a-f]+, entry probe at \+[1-9][0-9]* \(jcc: first emulated instruction\)$" "$T/static-glibc.placed.err"

# --floor: same probes, nothing recorded.
"$D" --floor -o "$T/floor.log" -- "$FX/alloc_sequence" "$T/floor.exp" --threads 0 2>"$T/floor.err"
check "--floor: exit status 0" test $? -eq 0
check "--floor: writes no event" test ! -s "$T/floor.log"
check "--floor: summary says 0 events written" \
	grep -qE '^alloctapd: 0 events written, 0 events lost' "$T/floor.err"

# --discard, one thread and three: a trace of the same run has L lines, R of them reallocs (each
# with an entry record of its own); each worker thread that ends before the process records
# its end.
for threads in 0 3; do
	"$D" -o "$T/counted.$threads.log" -- "$FX/alloc_sequence" "$T/counted.exp" \
		--threads $threads 2>"$T/counted.err"
	check "--discard, $threads threads: the trace to count against exits 0" test $? -eq 0
	lines=$(wc -l <"$T/counted.$threads.log")
	reallocs=$(grep -c ' realloc(' "$T/counted.$threads.log")
	"$D" --discard -o "$T/discard.log" -- "$FX/alloc_sequence" "$T/discard.exp" \
		--threads $threads 2>"$T/discard.err"
	check "--discard, $threads threads: exit status 0" test $? -eq 0
	check "--discard, $threads threads: writes nothing" test ! -s "$T/discard.log"
	check_eq "--discard, $threads threads: $lines events + $reallocs realloc entries + $threads thread ends discarded" \
		"$(grep '^alloctapd: [0-9]* records discarded' "$T/discard.err")" \
		"alloctapd: $((lines + reallocs + threads)) records discarded unread, 0 events lost"
	rm -f "$T/discard.log"
done
finish
