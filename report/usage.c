/* usage.c: alloctap-report's --help text; each command's lines come from commands.h's table. */
#include <stdio.h>

#include "commands.h"
#include "symbolize.h"
#include "usage.h"

#define PROGRAM "alloctap-report"

void rep_usage(void)
{
	fputs(
"Usage: " PROGRAM " COMMAND [OPTIONS] TRACE\n"
"       " PROGRAM " diff [OPTIONS] TRACE_A TRACE_B\n"
"\n"
"Reads TRACE (a file, or standard input for -), a trace of alloctapd in any of its forms:\n"
"text or binary (.atz), raw or munged, recognised by its first bytes, in one pass; memory\n"
"grows with the live blocks and the distinct sites, not with the trace. A site is a call\n"
"stack and its allocation function (binary traces taken with alloctapd --stacks, their\n"
"addresses symbolized from the objects the trace names, checked by build-id, and their\n"
"debug files), or the function alone (text logs, traces without stacks). A trace of several\n"
"processes is reported process by process (== process PID); sites and sizes count all.\n"
"\n"
"Commands:\n",
		stdout);
	for (size_t i = 0; i < REP_CMD_COUNT; i++)
		fputs(rep_commands[i]->usage, stdout);
	fputs(
"\n"
"Options:\n"
"      --pid PID        only this process\n"
"      --window T0:T1   only the events from T0 to T1 seconds after the first one (either\n"
"                       may be left out); blocks allocated before T0 are not known, so\n"
"                       their frees count as frees of blocks not live. Needs times\n"
"      --debug-dir DIR  look for debug files under DIR/.build-id/ab/cdef....debug\n"
"                       (default: " AT_SYMBOLIZE_DEBUG_DIR ")\n"
"      --strict         damaged input is an error (exit 1, no report) instead of being\n"
"                       reported up to its damage (exit 3)\n"
"  -o, --output FILE    write there instead of standard output\n"
"  -q, --quiet          no warning about objects missing or changed since the trace\n"
"  -v, --verbose        also print the number of distinct sites\n"
"  -h, --help           this help\n"
"      --version        the version, then exit\n"
"\n"
"Folded lines and sites: the leaf frame is the allocation function (malloc, calloc,\n"
"realloc, memalign, posix_memalign, aligned_alloc, valloc); a function inlined at a return\n"
"address is a frame of its own. A stack cut at 128 frames starts with the frame [truncated],\n"
"one whose walk stopped early with [incomplete]. A frame that has no name is\n"
"OBJECT+0xADDRESS (the address in the object), or [unknown] for an address in no mapping.\n"
"Bytes are bytes asked (malloc n, calloc n*m saturating at 2^64-1, realloc the new size,\n"
"memalign, aligned_alloc and posix_memalign the size, valloc n). realloc releases its old\n"
"block and allocates at its own site; a failed allocation (result 0) counts as a call and\n"
"allocates nothing. A temporary allocation is one freed, or released by a realloc, by the\n"
"very next event of its thread (heaptrack's rule). Text traces have no times: SECONDS\n"
"options need a binary trace.\n"
"\n"
"Example: alloctapd --stacks -f binary -o app.atz -- ./app\n"
"         " PROGRAM " peak app.atz\n"
"         " PROGRAM " export --folded app.atz | flamegraph.pl > app.svg\n"
"         " PROGRAM " html -o app.html app.atz\n"
"\n"
"An object whose build-id differs from the trace's (it changed since), or that cannot be\n"
"opened, is reported once on stderr and its frames are shown as OBJECT+0xOFFSET, never with\n"
"names that might be wrong.\n"
"\n"
"Damaged input: a binary trace cut short (kill -9, the OOM killer, a full disk) or with a\n"
"corrupt block is reported up to the damage, which is said (FILE: truncated after N events:\n"
"...; the report covers the N events before it); a malformed text line is said (FILE:LINE:\n"
"reason; line skipped, the first 10) and skipped, then their count. The exit status is then\n"
"3. --strict refuses both instead.\n"
"\n"
"A byte figure whose sum does not fit 64 bits (blocks of absurd sizes: a hostile or corrupt\n"
"trace) is saturated: written as 18446744073709551615, read \"that many bytes or more\". A\n"
"figure below it is exact; live bytes are counted exactly, so they come back to exact as\n"
"blocks are freed, and the peak is where the exact sum was largest.\n"
"\n"
"Exit status: 0 success; 1 input or output error (unreadable TRACE, a file that is no trace\n"
"or of a newer version, a stack never defined, failed write; with --strict, damaged input);\n"
"2 usage error (also peak --dot -o FILE whose extension Graphviz's dot does not render, or\n"
"no dot installed); 3 damaged input, the report written from what could be read. When the\n"
"output's reader goes away (| head), it stops quietly and ends killed by SIGPIPE (141 in a\n"
"shell), as cat does.\n",
		stdout);
}
