/* tree.h: the top-down call tree of what was live at one moment (alloctap-report peak).
 *
 * Every site of a process adds its bytes and blocks at the moment (its process's heap peak,
 * the end, or a time: heap.h) to each frame of its folded text, root first, so a node holds
 * what was allocated below it. Nodes are functions: a node is shown with its file and line
 * while every site through it is at one line of it (a function called from two lines of its
 * caller is one node, shown by its name alone). Printed indented, two spaces a level,
 * children most bytes first (then by name), each line "PERCENT% BYTES BLOCKS blocks FRAME",
 * BYTES in units or "N bytes" with --bytes (units.h, in 18 columns either way), the percentage
 * of the process's total at the moment; nodes of 0 bytes are left out.
 * As Graphviz (--dot): one node per tree node of at least 1% of the total (smaller ones are
 * left out with their subtrees, and said in the graph's label), labelled with its frame (and
 * line), bytes and percentage,
 * edges from caller to callee as wide as the bytes below them. */
#ifndef ALLOCTAP_REPORT_TREE_H
#define ALLOCTAP_REPORT_TREE_H

#include <stdio.h>

#include "heap.h"

/* Writes the tree of every process (a heading each when there are several), leaving out the
 * frames that hold under min_percent percent of the process's bytes (with what is under them),
 * and saying after the tree how many were and what they held. 0, or -1 with errno. */
int rep_write_tree(FILE *out, const struct rep_heap *h, enum rep_moment_kind at,
		   const char *what, unsigned min_percent);
/* peak --json: {"at": "heap-peak", "rss-peak", "end" or "time", "time_ns": the time (null
 * but for "time"), "min_percent": P, "processes": [{"pid", "bytes", "blocks" (live at the
 * moment), "callees": [FRAME...], "left_out": {"frames", "bytes"}}]}, a FRAME {"function",
 * "bytes", "blocks", "callees": [FRAME...]}: the text's tree, callees most bytes first, those
 * under P% of the process's bytes left out and counted. 0, or -1 with errno. */
int rep_write_tree_json(FILE *out, const struct rep_heap *h, enum rep_moment_kind at,
			uint64_t at_ns, unsigned min_percent);
/* Writes the Graphviz graph of every process. 0, or -1 with errno. */
int rep_write_dot(FILE *out, const struct rep_heap *h, enum rep_moment_kind at, const char *what);

/* An SVG flame graph (root on top, children left to right, most bytes first; frames under
 * 0.1% of the total left out) of what process proc (an index of rep_heap_procs) held at the
 * moment: one <g class="f" data-x data-w> per frame, with a <title> (frame and line, bytes,
 * blocks, percent) and the function as its text, for a page's script to zoom. Nothing when
 * nothing was live. 0, or -1 with errno. */
int rep_write_flame_svg(FILE *out, const struct rep_heap *h, size_t proc, enum rep_moment_kind at);
/* Text for XML and HTML: <, >, &, quotes as entities, control bytes as '_'. */
void rep_put_xml_text(FILE *out, const char *s, size_t len);

#endif
