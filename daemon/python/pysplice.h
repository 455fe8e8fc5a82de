/* pysplice.h: one stack of native and Python frames (doc/DESIGN.md, decision 18).
 *
 * A native stack of a CPython 3.11+ thread holds one frame of the evaluation loop
 * (_PyEval_EvalFrameDefault) for each run of Python calls it made without C in between; the
 * thread's Python frames (pyframes.h) end each run at a frame marked entry. at_py_splice()
 * replaces each loop frame by its run, innermost first, and keeps every other native frame
 * where it is (the C frames of extensions, the interpreter's own). A Python frame's value packs
 * its code object's address and its instruction offset in one 64-bit word. */
#ifndef ALLOCTAP_PYSPLICE_H
#define ALLOCTAP_PYSPLICE_H

#include <stdint.h>

#include "pyframes.h"

/* Packs a frame into its value (bpf/py_layout.h's at_py_pack: the code object's address, the
 * instruction offset in the top AT_PY_VALUE_SHIFT bits). */
uint64_t at_py_value(const struct at_py_frame *f);

/* The code object's address of a value, and its offset (AT_PY_OFFSET_START for a frame not
 * started yet, AT_PY_VALUE_UNKNOWN for an offset not kept). */
uint64_t at_py_value_code(uint64_t v);
uint32_t at_py_value_offset(uint64_t v);

/* The evaluation loop's code in a process: [start, end). */
struct at_py_eval {
	uint64_t start, end;
};

/* What at_py_splice() made. */
struct at_py_spliced {
	int count;       /* frames written */
	int runs;        /* loop frames replaced by their runs */
	int mismatch;    /* a loop frame had no run left: it and the frames outside it kept native */
	int left;        /* Python frames not placed (the native stack ended before their loop
			  * frames, or a mismatch) */
};

/* Splices the native stack pcs[0..npcs) (innermost first, pcs[0] the probed function's entry,
 * the others return addresses) with the thread's Python frames py[0..npy) into out[0..max),
 * is_python[i] saying which are Python frame values (at_py_value()). A native frame is the
 * loop's when its pc (less one for a return address) lies in one of eval[0..neval). */
struct at_py_spliced at_py_splice(const uint64_t *pcs, int npcs, const struct at_py_eval *eval,
				  int neval, const struct at_py_frame *py, int npy, uint64_t *out,
				  uint8_t *is_python, int max);

#endif
