#!/usr/bin/env bash
# The whole pipeline on a traced fixture: alloctapd, alloctap-munge, alloctap-replay --summary;
# the replay's final live bytes equal what the fixture says it left live.
source "$(dirname "$0")/lib.sh"
D=$ROOT/build/alloctapd
FX=$ROOT/build/fixtures
need_bpf "$D"
M=$ROOT/build/alloctap-munge
R=$ROOT/build/alloctap-replay

"$D" -q -o "$T/p.log" -- "$FX/alloc_sequence" "$T/p.exp" --threads 0 --pipeline "$T/p.live"
check_file_eq "pipeline: in launch mode the log is exactly the fixture's calls" "$T/p.exp" "$T/p.log"
check "pipeline: munge accepts the log" bash -c "'$M' -q '$T/p.log' >'$T/p.munged'"
for alloc in glibc jemalloc; do
	"$R" --summary --allocator "$alloc" "$T/p.munged" 2>"$T/p.$alloc.summary" >/dev/null
	live=$(sed -n 's/^final live requested bytes: //p' "$T/p.$alloc.summary")
	check "pipeline: replay ($alloc) final live bytes ($live) = fixture's ($(cat "$T/p.live"))" \
		test -n "$live" -a "$live" = "$(cat "$T/p.live")"
done
finish
