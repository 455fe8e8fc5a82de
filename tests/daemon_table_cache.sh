#!/usr/bin/env bash
# alloctapd --stacks' on-disk cache of unwind tables (daemon/stacks/table_cache.c), in a
# scratch folder (--cache-dir; never the machine's): the first run creates the folder 0700 and
# writes one 0600 file per object with a build-id, the second reads every table from it and
# takes the same stacks (tests/fixtures/unwind_chain.c through its library, atz_tool stacks);
# --no-cache reads and writes nothing; a corrupt file, a symbolic link and another user's file
# are refused, removed and written anew (the link's target untouched); a folder others may
# write, or another user's, ends the daemon with a message before anything is traced;
# --cache-size keeps the folder under its limit; two daemons filling one empty cache at once
# leave files a third reads whole. The options' usage errors.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
ATZ=$ROOT/build/bench/atz_tool
need_bpf "$D"
need_built "$ATZ" "$FX/unwind_chain"
C=$T/cache/unwind

# usage errors: status 2, nothing run
check_err_match "--cache-dir without --stacks: a usage error" 2 \
	"are for --stacks" "$D" --cache-dir "$C" -f binary -o "$T/x.atz" -- /bin/true
check_err_match "--no-cache with --cache-dir: a usage error" 2 \
	"--no-cache reads and writes no cache" \
	"$D" --stacks --no-cache --cache-dir "$C" -f binary -o "$T/x.atz" -- /bin/true
check_err_match "--cache-dir relative: a usage error" 2 "must be an absolute path" \
	"$D" --stacks --cache-dir cache -f binary -o "$T/x.atz" -- /bin/true
for size in 0 -1 1X 1KB 99999999999999999999 17179869184G; do
	check_err_match "--cache-size $size: a usage error" 2 "bad --cache-size '$size'" \
		"$D" --stacks --cache-size "$size" -f binary -o "$T/x.atz" -- /bin/true
done
check "no folder made by a usage error" test ! -e "$C"

# traced NAME [OPTIONS...]: unwind_chain traced with --stacks -v and OPTIONS; its stacks in
# $T/NAME.stacks, the daemon's messages in $T/NAME.err, the status in rc.
traced() {
	local name=$1
	shift
	setarch -R "$D" -v --stacks "$@" -f binary -o "$T/$name.atz" -- "$FX/unwind_chain" 3 \
		>/dev/null 2>"$T/$name.err"
	rc=$?
	"$ATZ" stacks -O "$T/$name.atz" >"$T/$name.stacks" 2>&1
}

# read_from_cache NAME: "BUILT READ" from the summary of $T/NAME.err.
read_from_cache() {
	sed -n 's/.* \([0-9]*\) tables built (\([0-9]*\) read from the cache).*/\1 \2/p' "$T/$1.err"
}

# same_table A B: whether two cache files hold the same table: every byte but the build's time
# (bytes 192 to 199 of the header) and the checksum after it (200 to 207).
same_table() {
	cmp -s -n 192 "$1" "$2" && cmp -s -i 208 "$1" "$2"
}

traced cold --cache-dir "$C"
files=$(ls "$C" | grep -c '^[0-9a-f]*\.unw$')
set -- $(read_from_cache cold)
check_eq "cold: status 0, every table built, none read" "$rc ${2:-none}" "0 0" \
	"$(tail -3 "$T/cold.err")"
check_eq "cold: one file per table built (the fixture, its library, libc, the loader)" \
	"$files" "${1:-none}"
check_eq "cold: the folder created 0700, owned by root" "$(stat -c '%a %u' "$C")" "700 0"
check_eq "cold: every file 0600, root's" "$(stat -c '%a %u' "$C"/*.unw | sort -u)" "600 0"
check "cold: stacks were taken" test -s "$T/cold.stacks"

traced warm --cache-dir "$C"
check_eq "warm: status 0, every table read from the cache" "$rc $(read_from_cache warm)" \
	"0 $files $files" "$(tail -3 "$T/warm.err")"
check_file_eq "warm: the same stacks as the tables built" "$T/warm.stacks" "$T/cold.stacks"

fresh=$T/none/unwind
traced nocache --no-cache
check_eq "--no-cache: nothing read" "$rc $(read_from_cache nocache)" "0 $files 0"
check_file_eq "--no-cache: the same stacks" "$T/nocache.stacks" "$T/cold.stacks"
ALLOCTAP_CACHE_DIR=$fresh traced nocache2 --no-cache
check "--no-cache: no folder made" test ! -e "$fresh"

# forged files: the libc table's (the largest) corrupted, made a link, given to another user
libc=$(ls -S "$C"/*.unw | head -1)
cp "$libc" "$T/libc.unw"
printf 'X' | dd of="$libc" bs=1 seek=300 conv=notrunc 2>/dev/null
traced corrupt --cache-dir "$C"
check_eq "a corrupt file: status 0, the others read" "$rc $(read_from_cache corrupt)" \
	"0 $files $((files - 1))"
check "a corrupt file: refused, said so (-v)" grep -q "its checksum does not match" "$T/corrupt.err"
check "a corrupt file: written anew" same_table "$libc" "$T/libc.unw"
check_file_eq "a corrupt file: the same stacks" "$T/corrupt.stacks" "$T/cold.stacks"
echo "not a table" >"$T/target"
rm "$libc" && ln -s "$T/target" "$libc"
traced link --cache-dir "$C"
check "a symbolic link: refused, replaced by a regular file" \
	bash -c "grep -q 'a symbolic link' '$T/link.err' && test ! -L '$libc' && test -f '$libc'"
check_eq "a symbolic link: its target untouched" "$(cat "$T/target")" "not a table"
chown 65534 "$libc"
traced owner --cache-dir "$C"
check "another user's file: refused, written anew as root's" \
	bash -c "grep -q 'owned by another user' '$T/owner.err' && test \$(stat -c %u '$libc') = 0"

# unsafe folders: nothing traced
chmod 0777 "$C"
check_err_match "a folder others may write: status 1, said why" 1 \
	"unwind table cache $C: writable by group or others" \
	"$D" --stacks --cache-dir "$C" -f binary -o "$T/x.atz" -- /bin/true
chmod 0700 "$C" && chown 65534 "$C"
check_err_match "another user's folder: status 1, said why" 1 \
	"unwind table cache $C: owned by another user" \
	"$D" --stacks --cache-dir "$C" -f binary -o "$T/x.atz" -- /bin/true
chown 0 "$C"

# the limit: the least recently used files go
small=$T/small/unwind
limit=$(( $(stat -c %s "$T/libc.unw") + 4096 ))
traced small --cache-dir "$small" --cache-size "$limit"
total=$(cat "$small"/*.unw | wc -c)
check "--cache-size $limit: the folder holds at most that ($total bytes)" \
	test "$total" -le "$limit" -a "$total" -gt 0

# two daemons at once on an empty cache, then a third reads every table
both=$T/both/unwind
traced one --cache-dir "$both" & p1=$!
ALLOCTAP_CACHE_DIR=$both setarch -R "$D" -q --stacks -f binary -o "$T/two.atz" -- \
	"$FX/unwind_chain" 3 >/dev/null 2>"$T/two.err" & p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
traced third --cache-dir "$both" --cache-size 1G
check_eq "two daemons filling one cache: both status 0, a third reads every table" \
	"$r1 $r2 $rc $(read_from_cache third)" "0 0 0 $files $files" "$(tail -3 "$T/third.err")"
check_file_eq "two daemons filling one cache: the third's stacks" "$T/third.stacks" "$T/cold.stacks"
finish
