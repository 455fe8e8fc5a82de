#!/usr/bin/env bash
# The options every program shares: --version, --help and -h on stdout with exit 0, and -q/-v
# moving the message level one step each, the same way in alloctapd, alloctap-munge and
# alloctap-replay (and alloctap-report: version and help).
. "$(dirname "$0")/lib.sh"
need_built build/alloctapd build/alloctap-munge build/alloctap-replay build/alloctap-report

for p in alloctapd alloctap-munge alloctap-replay alloctap-report; do
	echo "$p 0.5.0" >"$T/want_version"
	check_cmd "$p --version" 0 "$T/want_version" "" -- "build/$p" --version
	run_cmd "build/$p" --help
	if [ "$rc" -eq 0 ] && grep -q "^Usage: $p" "$T/out" && grep -q -- "--version" "$T/out" &&
		[ ! -s "$T/err" ]; then
		ok "$p --help: usage with --version on stdout, exit 0"
	else
		fail "$p --help: usage with --version on stdout, exit 0" "exit $rc"
	fi
	run_cmd "build/$p" -h
	if [ "$rc" -eq 0 ] && grep -q "^Usage: $p" "$T/out"; then
		ok "$p -h"
	else
		fail "$p -h" "exit $rc"
	fi
done

# munge: the summary is at level 1 and each dropped line at level 2, so -q keeps the summary,
# -qq drops it, and -v -q is the default again.
printf '1 1 malloc(8)=0x10\n1 1 bogus\n' >"$T/raw.log"
run_cmd build/alloctap-munge "$T/raw.log"
check_eq "munge default: a dropped line and the summary" "$(wc -l <"$T/err")" 2
run_cmd build/alloctap-munge -q "$T/raw.log"
check_eq "munge -q: the summary only" "$(wc -l <"$T/err")" 1
run_cmd build/alloctap-munge -qq "$T/raw.log"
check_eq "munge -qq: nothing" "$(wc -l <"$T/err")" 0
run_cmd build/alloctap-munge -v -q "$T/raw.log"
check_eq "munge -v -q: as the default" "$(wc -l <"$T/err")" 2

# replay: statistics lines at level 2; -q drops them, -q -v brings them back.
printf '1 1 malloc(8)=#1\n1 1 jemalloc_stats()\n' >"$T/m.log"
run_cmd build/alloctap-replay "$T/m.log"
check_eq "replay default: one statistics line" "$(grep -c '^stats' "$T/err")" 1
run_cmd build/alloctap-replay -q "$T/m.log"
check_eq "replay -q: none" "$(grep -c '^stats' "$T/err")" 0
run_cmd build/alloctap-replay -q -v "$T/m.log"
check_eq "replay -q -v: as the default" "$(grep -c '^stats' "$T/err")" 1
# Long offline work shows progress on a terminal (rewritten in place, erased at the end), and
# nothing of it when stderr is a file or a pipe. The input pauses a second after 70000 lines,
# so the line is due whatever the machine's speed.
need_make build/bench/genlog
build/bench/genlog 140000 1 >"$T/g.log" 2>/dev/null
slow_input="(head -n 70000 '$T/g.log'; sleep 1; tail -n +70001 '$T/g.log')"
script -qfc "sh -c \"$slow_input | build/alloctap-munge -o /dev/null\"" /dev/null >"$T/tty.out"
check "munge on a terminal: a progress line, then erased" \
	bash -c "grep -q 'alloctap-munge: <stdin>: 0.1 M lines, [0-9.]* s' '$T/tty.out' && grep -q \$'\\r\\033\\[K' '$T/tty.out'"
sh -c "$slow_input | build/alloctap-munge -o /dev/null" 2>"$T/notty.err"
check "munge on a file: no progress line" bash -c "! grep -q 'M lines' '$T/notty.err'"
build/alloctap-munge -qq "$T/g.log" -o "$T/g.munged"
slow_munged="(head -n 70000 '$T/g.munged'; sleep 1; tail -n +70001 '$T/g.munged') | grep -v jemalloc_stats"
script -qfc "sh -c \"$slow_munged | build/alloctap-replay\"" /dev/null >"$T/tty.out"
check "replay on a terminal: a progress line" grep -q 'alloctap-replay: <stdin>: 0.1 M lines' "$T/tty.out"
sh -c "$slow_munged | build/alloctap-replay" 2>"$T/notty.err"
check "replay on a file: no progress line" bash -c "! grep -q 'M lines' '$T/notty.err'"

# make install: the programs and their man pages (section 8 for the daemon, 1 for the tools).
make -s install PREFIX=/usr DESTDIR="$T/inst" >"$T/out" 2>&1
check_eq "make install: exit 0" "$?" 0
for f in bin/alloctapd bin/alloctap-munge bin/alloctap-replay share/man/man8/alloctapd.8 \
	share/man/man1/alloctap-munge.1 share/man/man1/alloctap-replay.1; do
	check "make install: /usr/$f" test -s "$T/inst/usr/$f"
done
finish
