#!/usr/bin/env bash
# Gathers into ./devlibs the shared libraries that the scaling benchmarks' programs link
# (build/alloctapd, build/bench/pairloop, build/bench/rusage_of, as ldd lists them) and
# libjemalloc when this machine has it, so that bench/device_run.sh can run them on a machine
# where they are not installed (with LD_LIBRARY_PATH=./devlibs). The C library's own objects
# (libc, libm, libpthread, libdl, librt, the dynamic loader) are left out: they must be the
# other machine's own, whose loader would not run with this machine's libc (its glibc must be
# as new as this one's).
# With --tools, also perf and bpftool with the libraries they link, in devlibs/tools (lib/ and
# a wrapper perf that finds them; bench/device_run.sh uses it when the machine's perf does not
# run): this machine's perf, older than a newer kernel's, reads that kernel's events well enough
# for cpu-clock samples and software counters.
# Prints what it copied and the folder's size.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=devlibs
. bench/lib.sh # MULTIARCH, LIBDIR

# libs_of PROGRAM...: the paths of the shared libraries the programs load, the C library's
# own left out, one a line, each once.
libs_of() {
	ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
		grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux[^/]*)\.so[^/]*$' |
		sort -u
}

# copy_libs DEST PROGRAM...: copies the libraries of the programs into DEST under their soname.
copy_libs() {
	local dest=$1 lib
	shift
	mkdir -p "$dest"
	for lib in $(libs_of "$@"); do
		cp -L "$lib" "$dest/" && echo "  $lib"
	done
}

progs=(build/alloctapd build/bench/pairloop build/bench/rusage_of)
for p in "${progs[@]}"; do
	if [ ! -x "$p" ]; then
		echo "devlibs: $p is not built (make build/alloctapd build/bench/pairloop" \
			"build/bench/rusage_of)"
		exit 1
	fi
done
rm -rf "$OUT"
echo "devlibs: the libraries of ${progs[*]}:"
copy_libs "$OUT" "${progs[@]}"
if [ -e "$LIBDIR/libjemalloc.so.2" ]; then
	cp -L "$LIBDIR/libjemalloc.so.2" "$OUT/" && echo "  $LIBDIR/libjemalloc.so.2"
fi
if [ "${1:-}" = --tools ]; then
	echo "devlibs: perf and bpftool, and their libraries, in $OUT/tools:"
	mkdir -p "$OUT/tools/lib"
	for tool in perf bpftool; do
		path=$(command -v "$tool") || { echo "  $tool: absent here"; continue; }
		if [ "$(head -c 2 "$path")" = "#!" ]; then
			echo "  $tool: $path is a script (a distribution's wrapper), not copied"
			continue
		fi
		cp -L "$path" "$OUT/tools/lib/$tool.bin" && echo "  $path"
		copy_libs "$OUT/tools/lib" "$path"
		# the wrapper: the tool with its own libraries, not the benchmarks'
		printf '#!/bin/sh\nd=$(dirname "$0")/lib\nLD_LIBRARY_PATH="$d" exec "$d/%s.bin" "$@"\n' \
			"$tool" >"$OUT/tools/$tool"
		chmod +x "$OUT/tools/$tool"
	done
fi
echo "devlibs: $(du -sh "$OUT" | cut -f1) in $OUT"
