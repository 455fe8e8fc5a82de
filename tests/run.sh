#!/usr/bin/env bash
# Runs every test program and script given, counts cases, and ends with the line
# "check: N passed, M failed". cmocka programs are counted by their own summary lines;
# scripts print TAP lines ("ok - name" / "not ok - name", through tests/lib.sh). A program or
# script that exits non-zero without reporting a failed case counts as one failure.
set -u
passed=0
failed=0
failures=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for t in "$@"; do
	printf '== %s\n' "$t"
	if [[ $t == *.sh ]]; then
		bash "$t" >"$log" 2>&1
	else
		"$t" >"$log" 2>&1
	fi
	rc=$?
	cat "$log"
	p=0
	f=0
	if [[ $t == *.sh ]]; then
		p=$(grep -c '^ok ' "$log")
		f=$(grep -c '^not ok ' "$log")
	else
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n1)
		p=${p:-0}
		f=${f:-0}
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "!! $t exited with status $rc"
	fi
	[ "$f" -gt 0 ] && failures+=("$t ($f)")
	passed=$((passed + p))
	failed=$((failed + f))
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed: ${failures[*]}"
fi
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
