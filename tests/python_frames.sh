#!/usr/bin/env bash
# The Python frames of alloctapd --stacks, against tracemalloc (CPython's own tracer of Python
# allocations), on tests/fixtures/py_tracemalloc.py:
#  - under Debian's python3.11 and pyenv's 3.11, 3.12 and 3.13: the bytes live at the trace's
#    end per Python traceback (alloctap-report leaks --json) are tracemalloc's, to 1% each way
#    (tests/py_tracemalloc_check.py); the text outputs (leaks, peak, export --folded) name the
#    fixture's Python frames as they name native ones, "function (file:line)" (folded: the
#    function alone);
#  - under pyenv's 3.10 and 2.7, whose Python frames alloctapd does not read: the trace is
#    written, its stacks are native only, and alloctapd says so once.
# Debian's python3.11 must be there (make deps installs it); pyenv's interpreters are no Debian
# packages: one missing is said, and fails only when neither 3.12 nor 3.13 is there.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
R=$ROOT/build/alloctap-report
FX=tests/fixtures/py_tracemalloc.py
CHECK=tests/py_tracemalloc_check.py # run by Debian's python3.11, always there
PYENV=/root/.pyenv/versions
# alloctapd's message (stderr, once) for an interpreter whose Python frames it does not read: a
# grep -E pattern, VERSION standing for the interpreter's version (3.10)
UNKNOWN_MESSAGE='Python.*VERSION|VERSION.*Python'
need_bpf "$D"
need_built "$R"
if [ ! -x /usr/bin/python3.11 ]; then
	fail "Debian's python3.11 is installed" "/usr/bin/python3.11 is missing (make deps)"
	finish
fi

# line_of FILE MARK: the line number of FILE's line ending in "# MARK".
line_of() {
	grep -n "# $2\$" "$1" | cut -d: -f1
}
# the frames of the first allocation, as the text outputs name them: "function (file:line)"
LEAF="leaf (py_tracemalloc_mod.py:$(line_of tests/fixtures/py_tracemalloc_mod.py LEAF_LINE))"
MIDDLE="middle (py_tracemalloc_mod.py:$(line_of tests/fixtures/py_tracemalloc_mod.py MIDDLE_LINE))"
PLAIN="plain (py_tracemalloc.py:$(line_of "$FX" PLAIN_LINE))"
# the class body's frame, named though its code object is freed once the module is imported
CLASS="Registry (py_tracemalloc_mod.py:$(line_of tests/fixtures/py_tracemalloc_mod.py CLASS_LINE))"

# traced NAME ARGS...: alloctapd --stacks ARGS (its options, then -- and the command) into
# $T/py.atz, then leaks --json of it into $T/leaks.json; a failed point and status 1 unless
# both exit 0. alloctapd's stderr is left in $T/daemon.err.
traced() {
	local name=$1
	shift
	rm -f "$T/py.atz" "$T/leaks.json"
	run_cmd "$D" --stacks -f binary -o "$T/py.atz" "$@"
	cp "$T/err" "$T/daemon.err"
	if [ "$rc" -ne 0 ]; then
		fail_run "$name: alloctapd traces the program, both exit 0" "exit $rc"
		return 1
	fi
	if ! "$R" -q leaks --json "$T/py.atz" >"$T/leaks.json" 2>"$T/err"; then
		fail_run "$name: alloctap-report leaks --json reads the trace"
		return 1
	fi
}

# has_text NAME FILE TEXT...: ok when FILE has every TEXT (a fixed string) in it.
has_text() {
	local name=$1 file=$2 text missing=()
	shift 2
	for text in "$@"; do
		grep -qF -- "$text" "$file" || missing+=("missing: $text")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		ok "$name"
	else
		fail "$name" "${missing[@]}" "$file's first lines were:" "$(head -c 600 "$file")"
	fi
}

# tree_has PEAK: the call tree PEAK (peak's text, a node's children indented two more) has the
# node $LEAF, child of a node of middle, child of one of plain (a node merges a function's
# lines: it shows its line when it has but one).
tree_has() {
	awk -v leaf="$LEAF" '{
		sub(/^.* blocks/, ""); match($0, /^ */); d = RLENGTH; node[d] = substr($0, d + 1)
		if (node[d] == leaf && node[d - 2] ~ /^middle( |$)/ && node[d - 4] ~ /^plain( |$)/)
			found = 1
	} END {
		if (!found) print "no such nodes in", FILENAME
		exit !found
	}' "$1"
}

# compared NAME PYTHON: the fixture under PYTHON against its tracemalloc, then the text outputs.
compared() {
	local name=$1 py=$2
	rm -f "$T/tm.json"
	traced "$name" -q -- "$py" "$FX" "$T/tm.json" || return
	if [ ! -s "$T/tm.json" ]; then
		fail "$name: the fixture writes tracemalloc's snapshot" "$(head -c 600 "$T/daemon.err")"
		return
	fi
	local what="$name: the bytes live per Python traceback are tracemalloc's"
	if /usr/bin/python3.11 "$CHECK" "$T/tm.json" "$T/leaks.json" >"$T/check.out" 2>&1; then
		ok "$what"
		sed 's/^/#   /' "$T/check.out"
	else
		fail "$what" "$(head -c 3000 "$T/check.out")"
	fi
	"$R" -q leaks "$T/py.atz" >"$T/leaks.txt" 2>&1
	has_text "$name: leaks names the Python frames with their files and lines" "$T/leaks.txt" \
		"$LEAF < $MIDDLE < $PLAIN" "$CLASS"
	"$R" -q peak --at end --min-percent 0 "$T/py.atz" >"$T/peak.txt" 2>&1
	check "$name: peak's tree has plain, then middle, then $LEAF" tree_has "$T/peak.txt"
	"$R" -q export --folded --weight leak-bytes "$T/py.atz" >"$T/folded.txt" 2>&1
	has_text "$name: export --folded names the Python functions, callers first" \
		"$T/folded.txt" ";plain;middle;leaf;"
}

# --- the interpreters whose Python frames are read ---------------------------------------------
compared "Debian's python3.11" /usr/bin/python3.11
newer=0
for v in 3.11.7 3.12.1 3.13.0; do
	py=$PYENV/$v/bin/python${v%.*}
	if [ ! -x "$py" ]; then
		echo "# $py not installed: pyenv's Python $v is not compared"
		continue
	fi
	[ "$v" = 3.11.7 ] || newer=$((newer + 1))
	compared "pyenv's Python $v" "$py"
done
[ "$newer" -gt 0 ] || fail "pyenv's Python 3.12 or 3.13 is installed" \
	"neither $PYENV/3.12.1 nor $PYENV/3.13.0 is there: only 3.11 was compared"

# --- interpreters whose Python frames are not read: native stacks, said once ------------------
PROGRAM='import threading
x = [bytearray(100000) for _ in range(10)]
t = threading.Thread(target=lambda: x.append(bytearray(200000)))
t.start()
t.join()'
for v in 3.10.13 2.7.18; do
	minor=${v%.*}
	py=$PYENV/$v/bin/python$minor
	if [ ! -x "$py" ]; then
		echo "# $py not installed: pyenv's Python $v is not tried"
		continue
	fi
	# no -q: alloctapd says it at its default level (-q leaves errors only)
	traced "pyenv's Python $v" -- "$py" -c "$PROGRAM" || continue
	check "pyenv's Python $v: the trace's stacks are native only" \
		/usr/bin/python3.11 "$CHECK" --native-only "$T/leaks.json"
	pattern=${UNKNOWN_MESSAGE//VERSION/${minor//./\\.}}
	check_eq "pyenv's Python $v: alloctapd says once that its Python frames are not read" \
		"$(grep -cE "$pattern" "$T/daemon.err")" 1 \
		"alloctapd's stderr, lines matching $pattern counted:" "$(head -c 800 "$T/daemon.err")"
done
finish
