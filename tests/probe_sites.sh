#!/usr/bin/env bash
# Probe placement: free's entry probe moves to the first instruction the kernel
# emulates, and the log is the same with and without the move (no call goes unrecorded, not
# even free(NULL)); --floor attaches the same sites and records nothing.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"

libc=$(ldd "$FX/alloc_sequence" | awk '$1 == "libc.so.6" {print $3}')
libc=$(readlink -f "$libc")

for mode in placed entry; do
	opt=()
	[ $mode = entry ] && opt=(--probe-at-entry)
	"$D" -v "${opt[@]}" -o "$T/$mode.log" -- "$FX/alloc_sequence" "$T/$mode.exp" \
		--threads 0 2>"$T/$mode.err"
	check "$mode: exit status 0" test $? -eq 0
	check "$mode: the sequence matches exactly, free(0x0) included" \
		bash -c "$(declare -f compare_bracketed); T=$T; compare_bracketed $T/$mode.exp $T/$mode.log && grep -q ' free(0x0)$' $T/$mode.exp"
	"$ROOT/build/alloctap-munge" -q "$T/$mode.log" -o "$T/$mode.munged" 2>/dev/null
done
check_file_eq "placed and at-entry whole traces munge to the same log" "$T/placed.munged" "$T/entry.munged"
check "... which is not empty" test -s "$T/placed.munged"

# On Debian 12's glibc 2.36, free starts "test %rdi,%rdi; je": the je (+3) is emulated.
if [ "$(sha256sum < "$libc" | cut -c1-16)" = "$(sha256sum < /usr/lib/x86_64-linux-gnu/libc.so.6 | cut -c1-16)" ] &&
	objdump -d --start-address=0x$(nm -D "$libc" | awk '$3 ~ /^free@@/ {print $1}') \
		--stop-address=0x$(printf '%x' $((0x$(nm -D "$libc" | awk '$3 ~ /^free@@/ {print $1}') + 3))) \
		"$libc" | grep -q 'test *%rdi,%rdi'; then
	check "-v: free's entry probe at +3 (jcc) in $libc" \
		grep -qE "^alloctapd: probe free: $libc\+0x[0-9a-f]+, entry probe at \+3 \(jcc: first emulated instruction\)$" "$T/placed.err"
else
	check "-v: free's entry probe placed in $libc" \
		grep -qE "^alloctapd: probe free: $libc\+0x[0-9a-f]+, entry probe at \+[0-9]+ " "$T/placed.err"
fi
check "-v: malloc keeps its entry (return probe)" \
	grep -qE "^alloctapd: probe malloc: .*, entry probe at \+0 \(entry: a return probe needs the entry\), return probe$" "$T/placed.err"
check "--probe-at-entry: free's entry probe at +0" \
	grep -qE "^alloctapd: probe free: .*, entry probe at \+0 \(entry: --probe-at-entry\)$" "$T/entry.err"

# --floor: same probes, nothing recorded.
"$D" --floor -o "$T/floor.log" -- "$FX/alloc_sequence" "$T/floor.exp" --threads 0 2>"$T/floor.err"
check "--floor: exit status 0" test $? -eq 0
check "--floor: writes no event" test ! -s "$T/floor.log"
check "--floor: summary says 0 events written" \
	grep -qE '^alloctapd: 0 events written, 0 events lost' "$T/floor.err"
finish
