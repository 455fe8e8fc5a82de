#!/usr/bin/env bash
# atz_bench.sh: the binary trace format (.atz) against logalloc text, gzip -6 and lz4 of the
# text: bytes per event, encoding cost per event, decoding speed. Traces: the bundled real one
# (demo/python3-json.log, python3 recorded by alloctap) when present, and the synthetic
# generator's (build/bench/genlog, 1M lines, several processes and threads).
set -u
. "$(dirname "$0")/lib.sh"
make -s build/bench/atz_tool build/bench/genlog >/dev/null || exit 1
ATZ=build/bench/atz_tool

traces=()
if [ -f demo/python3-json.log ]; then
	traces+=("python3 (real):demo/python3-json.log")
else
	echo "(demo/python3-json.log missing: real-program row skipped)"
fi
build/bench/genlog 1000000 1 > "$T/synthetic.log"
traces+=("genlog 1M (synthetic):$T/synthetic.log")

echo "atz: size in bytes per event (smaller is better; goal <= 1.5 on a real program's trace)"
printf '%-22s %9s %9s %9s %9s %9s %9s\n' trace events text gzip-6 lz4 atz atz-HC9
sizes=()
for t in "${traces[@]}"; do
	name=${t%%:*}
	f=${t#*:}
	fast=$("$ATZ" time "$f") || { echo "bench: atz_tool time $f failed"; exit 1; }
	hc=$("$ATZ" time -l 9 "$f") || exit 1
	read -r n abytes _ _ enc fmt dec parse <<< "$fast"
	read -r _ hbytes _ _ hcenc _ hcdec _ <<< "$hc"
	text=$(stat -c %s "$f")
	gz=$(gzip -6 -c "$f" | wc -c)
	l4=$(lz4 -q -c "$f" | wc -c)
	per() { awk -v a="$1" -v n="$n" 'BEGIN { printf "%.3f", a / n }'; }
	printf '%-22s %9s %9s %9s %9s %9s %9s\n' "$name" "$n" "$(per "$text")" "$(per "$gz")" \
		"$(per "$l4")" "$(per "$abytes")" "$(per "$hbytes")"
	sizes+=("$name:$enc:$hcenc:$fmt:$dec:$hcdec:$parse")
done

echo
echo "atz 1.1 against 2.0: bytes per event (fast level). 2.0 from text: the events only (the"
echo "NO_TIMES and NO_STACKS flags); +times: synthetic times 50-1550 ns apart, 1 in 8 up to 400 ns"
echo "early (another CPU); +stacks: 200 synthetic stacks of 20 frames on every call but free"
echo "(atz_tool time -t -s 200)"
printf '%-22s %9s %9s %9s %9s %13s %15s\n' trace events atz-1.1 atz-2.0 "2.0 +times" \
	"2.0 +stacks" "2.0 +times+stk"
for t in "${traces[@]}"; do
	name=${t%%:*}
	f=${t#*:}
	row=()
	for args in "-V 1" "-V 2" "-V 2 -t" "-V 2 -s 200" "-V 2 -t -s 200"; do
		# shellcheck disable=SC2086
		r=$("$ATZ" time $args "$f") || { echo "bench: atz_tool time $args $f failed"; exit 1; }
		read -r n bytes _ <<< "$r"
		row+=("$(awk -v a="$bytes" -v n="$n" 'BEGIN { printf "%.3f", a / n }')")
	done
	printf '%-22s %9s %9s %9s %9s %13s %15s\n' "$name" "$n" "${row[@]}"
done

echo
echo "atz: cost per event (best of 9 runs, in memory; goal: decode >= 50 M events/s)"
printf '%-22s %11s %11s %13s %12s %12s %12s\n' trace "enc ns" "enc-HC9 ns" "text fmt ns" \
	"decode M/s" "dec-HC9 M/s" "text parse M/s"
for s in "${sizes[@]}"; do
	IFS=: read -r name enc hcenc fmt dec hcdec parse <<< "$s"
	printf '%-22s %11s %11s %13s %12s %12s %12s\n' "$name" "$enc" "$hcenc" "$fmt" "$dec" \
		"$hcdec" "$parse"
done
echo "(enc: lib/atz.c writer into a memfd incl. lz4; text fmt: at_format_raw + write into a"
echo " memfd; decode: lib/atz_read.c from a memfd; text parse: lib/source.c reading the text)"
