#!/usr/bin/env bash
# Runs every test program and script given, counts cases, and ends with the line
# "check: N passed, M failed, K skipped". cmocka programs are counted by their own summary
# lines ("[  PASSED  ] N test(s).", the FAILED and SKIPPED ones, and the SKIPPED lines naming
# each skipped case), or by their TAP lines when CMOCKA_MESSAGE_OUTPUT=TAP; scripts print TAP
# lines ("ok - name" / "not ok - name", through tests/lib.sh). A TAP line with "# SKIP" is a
# skipped case. A program or script that exits non-zero without reporting a failed case counts
# as one failure.
#
# A skipped case is a check that did not run: every one is named, and any makes the run fail
# (exit status 1), as a script's check that cannot run fails (tests/lib.sh).
set -u
passed=0
failed=0
skipped=0
failures=()
skips=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# tap_count: sets p, f and s from the TAP lines of $log, and names the skipped cases in
# skipped_names (one per line: the description, or the reason after "# SKIP" without one).
tap_count() {
	local re_skip='^(not )?ok\b.*#[[:space:]]*[Ss][Kk][Ii][Pp]'
	p=$(grep -E '^ok\b' "$log" | grep -Evc "$re_skip")
	f=$(grep -E '^not ok\b' "$log" | grep -Evc "$re_skip")
	skipped_names=$(grep -E "$re_skip" "$log" |
		sed -E 's/^(not )?ok( [0-9]+)?( - )?//; s/^[[:space:]]*#[[:space:]]*[Ss][Kk][Ii][Pp][[:space:]]*//; s/[[:space:]]*#[[:space:]]*[Ss][Kk][Ii][Pp].*//')
	s=$(grep -Ec "$re_skip" "$log")
}

# cmocka_count: sets p, f and s from cmocka's summary lines in $log, and skipped_names from its
# "[  SKIPPED ] NAME" lines (each case appears twice: when it runs and in the summary).
cmocka_count() {
	p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -n1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -n1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -n1)
	skipped_names=$(grep '^\[  SKIPPED \] ' "$log" | grep -v '^\[  SKIPPED \] [0-9][0-9]* test' |
		sed 's/^\[  SKIPPED \] //' | awk '!seen[$0]++')
	p=${p:-0}
	f=${f:-0}
	s=${s:-0}
}

for t in "$@"; do
	printf '== %s\n' "$t"
	if [[ $t == *.sh ]]; then
		bash "$t" >"$log" 2>&1
	else
		"$t" >"$log" 2>&1
	fi
	rc=$?
	cat "$log"
	skipped_names=
	if [[ $t != *.sh ]] && grep -q '^\[  PASSED  \] [0-9]' "$log"; then
		cmocka_count
	else
		tap_count
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "!! $t exited with status $rc"
	fi
	if [ "$s" -gt 0 ]; then
		names=$(printf '%s\n' "$skipped_names" | paste -sd, - | sed 's/,/, /g')
		echo "!! $t skipped $s case(s): $names"
		skips+=("$t ($names)")
	fi
	[ "$f" -gt 0 ] && failures+=("$t ($f)")
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed: ${failures[*]}"
fi
if [ ${#skips[@]} -gt 0 ]; then
	echo "skipped (checks that did not run, a failure): ${skips[*]}"
fi
echo "check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$skipped" -eq 0 ] && [ "$passed" -gt 0 ]
