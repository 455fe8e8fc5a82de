#!/usr/bin/env bash
# tests/run.sh, the runner of `make check`: its counts of passed, failed and skipped cases,
# from cmocka's summary lines, cmocka's TAP output and the scripts' TAP lines, and its exit
# status (a skipped case fails the run: it is a check that did not run). Canned outputs stand
# for drivers (executable files whose names do not end in .sh), and one real cmocka driver,
# built here, checks the format of the cmocka installed.
. "$(dirname "$0")/lib.sh"

# canned NAME RC: an executable in $T that prints stdin's text (read now) and exits RC.
canned() {
	cat >"$T/$1.txt"
	printf '#!/bin/sh\ncat "%s"\nexit %s\n' "$T/$1.txt" "$2" >"$T/$1"
	chmod +x "$T/$1"
}

# runner NAME WANT_RC WANT_LAST PROGRAM...: runs tests/run.sh on PROGRAM...; ok when it exits
# WANT_RC and its last line is WANT_LAST.
runner() {
	local name=$1 want_rc=$2 want_last=$3
	shift 3
	run_cmd tests/run.sh "$@"
	check_eq "$name" "rc=$rc $(tail -n1 "$T/out")" "rc=$want_rc $want_last" \
		"output was:" "$(tail -n 8 "$T/out")"
}

canned pass 0 <<'X'
[==========] Running 3 test(s).
[ RUN      ] a
[       OK ] a
[ RUN      ] b
[       OK ] b
[ RUN      ] c
[       OK ] c
[==========] 3 test(s) run.
[  PASSED  ] 3 test(s).
X
runner "cmocka: every case passed" 0 "check: 3 passed, 0 failed, 0 skipped" "$T/pass"

canned skip 0 <<'X'
[==========] Running 3 test(s).
[ RUN      ] a
[       OK ] a
[ RUN      ] reads_map
no BPF map (Operation not permitted): reading left untested
[  SKIPPED ] reads_map
[ RUN      ] c
[       OK ] c
[==========] 3 test(s) run.
[  PASSED  ] 2 test(s).
[  SKIPPED ] 1 test(s), listed below:
[  SKIPPED ] reads_map

 1 SKIPPED TEST(S)
X
runner "cmocka: a skipped case is counted and fails the run" 1 \
	"check: 2 passed, 0 failed, 1 skipped" "$T/skip"
check_eq "cmocka: the skipped case is named once" \
	"$(grep -c "^!! $T/skip skipped 1 case(s): reads_map\$" "$T/out")" 1
check_eq "cmocka: the summary names the driver and its skipped case" \
	"$(grep -c "^skipped (checks that did not run, a failure): $T/skip (reads_map)\$" "$T/out")" 1

canned mixed 1 <<'X'
[==========] Running 4 test(s).
[ RUN      ] a
[       OK ] a
[ RUN      ] b
[  SKIPPED ] b
[ RUN      ] d
[  SKIPPED ] d
[ RUN      ] c
[  ERROR   ] --- 0x1 != 0x2
[   LINE   ] --- sk.c:8: error: Failure!
[  FAILED  ] c
[==========] 4 test(s) run.
[  PASSED  ] 1 test(s).
[  SKIPPED ] 2 test(s), listed below:
[  SKIPPED ] b
[  SKIPPED ] d

 2 SKIPPED TEST(S)
[  FAILED  ] 1 test(s), listed below:
[  FAILED  ] c

 1 FAILED TEST(S)
X
runner "cmocka: passed, failed and skipped together, with another driver's counts" 1 \
	"check: 4 passed, 1 failed, 2 skipped" "$T/mixed" "$T/pass"
check_eq "cmocka: two skipped cases named in order" \
	"$(grep -c "^!! $T/mixed skipped 2 case(s): b, d\$" "$T/out")" 1

canned tap 1 <<'X'
1..4
ok 1 - a
not ok 2 # SKIP b
not ok 3 # SKIP d
not ok 4 - c
# 0x1 != 0x2
# sk.c:8: error: Failure!
# not ok - t
X
runner "cmocka TAP output (CMOCKA_MESSAGE_OUTPUT=TAP)" 1 \
	"check: 1 passed, 1 failed, 2 skipped" "$T/tap"
check_eq "cmocka TAP: the skipped cases named" \
	"$(grep -c "^!! $T/tap skipped 2 case(s): b, d\$" "$T/out")" 1

cat >"$T/counts.sh" <<'X'
echo "ok - one"
echo "ok - two"
echo "ok 3 - three # SKIP no fixture"
X
runner "a script: ok lines passed, a TAP skip counted apart" 1 \
	"check: 2 passed, 0 failed, 1 skipped" "$T/counts.sh"
check_eq "a script: the skipped point named by its description" \
	"$(grep -c "^!! $T/counts.sh skipped 1 case(s): three\$" "$T/out")" 1

canned silent_exit 3 </dev/null
runner "a program that exits non-zero without a summary: one failure" 1 \
	"check: 0 passed, 1 failed, 0 skipped" "$T/silent_exit"

canned nothing 0 </dev/null
runner "nothing passed: the run fails" 1 "check: 0 passed, 0 failed, 0 skipped" "$T/nothing"

# The cmocka installed: a driver with a passed, a skipped and a failed case.
cat >"$T/real.c" <<'X'
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
static void passes(void **s) { (void)s; }
static void skips(void **s) { (void)s; skip(); }
static void fails(void **s) { (void)s; assert_int_equal(1, 2); }
int main(void)
{
	const struct CMUnitTest t[] = { cmocka_unit_test(passes), cmocka_unit_test(skips),
					cmocka_unit_test(fails) };
	return cmocka_run_group_tests(t, NULL, NULL);
}
X
if ${CC:-cc} -o "$T/real" "$T/real.c" -lcmocka 2>"$T/cc.err"; then
	runner "the cmocka installed: passed, failed and skipped counted" 1 \
		"check: 1 passed, 1 failed, 1 skipped" "$T/real"
	check_eq "the cmocka installed: the skipped case named" \
		"$(grep -c "^!! $T/real skipped 1 case(s): skips\$" "$T/out")" 1
	CMOCKA_MESSAGE_OUTPUT=TAP run_cmd tests/run.sh "$T/real"
	check_eq "the cmocka installed, TAP output: the same counts" "$(tail -n1 "$T/out")" \
		"check: 1 passed, 1 failed, 1 skipped" "$(tail -n 8 "$T/out")"
else
	fail "a cmocka driver builds (libcmocka-dev: make deps)" "$(head -n 5 "$T/cc.err")"
fi

finish
