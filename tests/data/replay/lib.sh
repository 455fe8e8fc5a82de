# lib.sh: the case functions of tests/replay_cli.sh and tests/replay_binary_cli.sh (sourced).
# The caller sets R (the replayer), T (a scratch folder) and failed=0 first.

pass() { echo "ok - $1"; }
fail() {
	echo "not ok - $1"
	shift
	for why in "$@"; do echo "#   $why"; done
	echo "#   stderr was:"
	sed 's/^/#     /' "$T/err" | head -n 20
	failed=$((failed + 1))
}

# run ARGS...: runs the replayer, stdout to $T/out, stderr to $T/err, status in $rc.
run() {
	"$R" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}

# expect_error DESC RC MESSAGE ARGS...: exit status RC and stderr exactly MESSAGE.
expect_error() {
	local desc=$1 want_rc=$2 want=$3
	shift 3
	run "$@"
	if [ "$rc" -eq "$want_rc" ] && [ "$(cat "$T/err")" == "$want" ]; then
		pass "$desc"
	else
		fail "$desc" "exit $rc (want $want_rc)" "want stderr: $want"
	fi
}

# has_lines DESC LINE...: every LINE appears as a whole line in $T/err; exit status 0.
has_lines() {
	local desc=$1 missing=()
	shift
	for l in "$@"; do
		grep -qxF -- "$l" "$T/err" || missing+=("missing line: $l")
	done
	[ "$rc" -eq 0 ] || missing+=("exit $rc (want 0)")
	if [ ${#missing[@]} -eq 0 ]; then pass "$desc"; else fail "$desc" "${missing[@]}"; fi
}

