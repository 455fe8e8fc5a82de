/* pyoffsets.h: where CPython 3.11, 3.12 and 3.13 keep what a walk of their Python frames reads.
 *
 * One set of offsets per interpreter, for the daemon's reader (pyframes.c) and the BPF walk
 * alike (doc/DESIGN.md, decision 18). 3.11 and 3.12 publish none: a table per minor version,
 * checked against their DWARF by tests/unit/test_daemon_pyoffsets.c. 3.13 publishes its own at
 * the start of _PyRuntime (_Py_DebugOffsets), decoded here from the bytes read there. */
#ifndef ALLOCTAP_PYOFFSETS_H
#define ALLOCTAP_PYOFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "py_layout.h"   /* struct at_py_offsets, AT_PY_NONE, AT_PY_OWNER_CSTACK */

/* The first bytes of 3.13's _PyRuntime, and how many of them the decoder reads. */
#define AT_PY_DEBUG_COOKIE "xdebugpy"
#define AT_PY_DEBUG_OFFSETS_SIZE 584

/* The table of an interpreter whose Py_Version is version (any micro version, release level
 * and serial of 3.11 or 3.12): a static table, or NULL for another minor version. */
const struct at_py_offsets *at_py_offsets_table(uint32_t version);

/* Whether the interpreter of this Py_Version publishes its offsets in _PyRuntime (3.13). */
int at_py_offsets_published(uint32_t version);

/* Decodes 3.13's _Py_DebugOffsets from the first len bytes of _PyRuntime into *o. 0, or -1
 * with a reason in *why (a static string): bytes too short, a wrong cookie, a version other
 * than version, a free-threaded build, or an offset past any structure's plausible size (the
 * bytes come from a process the daemon does not trust), or one the walk cannot read
 * (at_py_offsets_walkable()). */
int at_py_offsets_decode(const uint8_t *buf, size_t len, uint32_t version,
			 struct at_py_offsets *o, const char **why);

/* Whether the walk (bpf/py_walk.h) reads every frame field of o within a frame's first
 * AT_PY_FRAME_BYTES bytes, each pointer on a word's boundary: 1 or 0. */
int at_py_offsets_walkable(const struct at_py_offsets *o);

#endif
