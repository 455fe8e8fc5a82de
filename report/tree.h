/* tree.h: the call tree of what was live at one moment (alloctap-report peak), top-down or
 * bottom-up.
 *
 * Every site of a process adds its bytes and blocks at the moment (its process's heap peak,
 * the end, or a time: heap.h) to each frame of its folded text, root first, so a node holds
 * what was allocated below it; bottom-up, leaf first (the allocation functions, then their
 * callers), so a node holds what was allocated through the path to it. Nodes are functions:
 * a node is shown with its file and line while every site through it is at one line of it (a
 * function called from two lines of its caller is one node, shown by its name alone). Printed
 * indented, two spaces a level, children most bytes first (then by name), each line
 * "PERCENT% BYTES BLOCKS blocks FRAME", BYTES in units or "N bytes" with --bytes (units.h,
 * in 18 columns either way), the percentage of the process's total at the moment; nodes of 0
 * bytes are left out. As Graphviz (--dot): one node per tree node of at least 1% of the total
 * (smaller ones are left out with their subtrees, and said in the graph's label), labelled
 * with its frame (and line), bytes and percentage, edges from caller to callee (bottom-up:
 * callee to caller) as wide as the bytes below them. */
#ifndef ALLOCTAP_REPORT_TREE_H
#define ALLOCTAP_REPORT_TREE_H

#include <stdio.h>

#include "heap.h"

/* How a tree is cut and which way it goes. */
struct rep_tree_options {
	unsigned min_percent; /* frames under this percent of the process's bytes left out, with
			       * what is under them (text and JSON; the graph's is 1) */
	unsigned depth;       /* levels below the root shown (0: all); deeper frames left out,
			       * their bytes in the frames above them */
	int bottom_up;        /* the allocation functions first, then their callers */
};

/* Writes the tree of every process (a heading each when there are several), cut as o says,
 * and saying after the tree how many frames were left out, and why. 0, or -1 with errno. */
int rep_write_tree(FILE *out, const struct rep_heap *h, enum rep_moment_kind at,
		   const char *what, const struct rep_tree_options *o);
/* peak --json: {"at": "heap-peak", "rss-peak", "end" or "time", "time_ns": the time (null
 * but for "time"), "min_percent": P, "depth": D, "bottom_up": B, "processes": [{"pid",
 * "bytes", "blocks" (live at the moment), "callees" (bottom-up: "callers"): [FRAME...],
 * "left_out": {"frames", "bytes", "deeper"}}]}, a FRAME {"function", "file" and "line" (while
 * it has one place), "bytes", "blocks", "callees" or "callers": [FRAME...]}: the text's tree,
 * children most bytes first, those under P% of the process's bytes left out and counted
 * (frames, bytes), those deeper than D levels left out (an empty list) and counted (deeper).
 * 0, or -1 with errno. */
int rep_write_tree_json(FILE *out, const struct rep_heap *h, enum rep_moment_kind at,
			uint64_t at_ns, const struct rep_tree_options *o);
/* Writes the Graphviz graph of every process (o's depth and direction; 1% its threshold). 0,
 * or -1 with errno. */
int rep_write_dot(FILE *out, const struct rep_heap *h, enum rep_moment_kind at, const char *what,
		  const struct rep_tree_options *o);

/* Text for XML and HTML: <, >, &, quotes as entities, control bytes as '_'. */
void rep_put_xml_text(FILE *out, const char *s, size_t len);

#endif
