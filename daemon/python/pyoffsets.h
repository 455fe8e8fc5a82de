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

/* An offset an interpreter's structures do not have (3.13's cframe, 3.12's is_entry...). */
#define AT_PY_NONE 0xFFFFFFFFu

/* The owner of a frame that is no Python call: 3.12's and 3.13's shim, pushed on the C stack
 * at each entry into the evaluation loop (FRAME_OWNED_BY_CSTACK). */
#define AT_PY_OWNER_CSTACK 3

/* The first bytes of 3.13's _PyRuntime, and how many of them the decoder reads. */
#define AT_PY_DEBUG_COOKIE "xdebugpy"
#define AT_PY_DEBUG_OFFSETS_SIZE 584

/* Byte offsets of fields, from the start of their structure. */
struct at_py_offsets {
	uint32_t version;                  /* PY_VERSION_HEX's major and minor (0x030b0000) */
	uint32_t runtime_interpreters_head; /* _PyRuntime.interpreters.head */
	uint32_t interp_next;              /* PyInterpreterState.next */
	uint32_t interp_threads_head;      /* PyInterpreterState.threads.head */
	uint32_t tstate_next;              /* PyThreadState.next */
	uint32_t tstate_native_thread_id;  /* PyThreadState.native_thread_id (the kernel's tid) */
	uint32_t tstate_cframe;            /* PyThreadState.cframe (3.11, 3.12) */
	uint32_t cframe_current_frame;     /* _PyCFrame.current_frame (3.11, 3.12) */
	uint32_t tstate_current_frame;     /* PyThreadState.current_frame (3.13) */
	uint32_t frame_previous;           /* _PyInterpreterFrame.previous */
	uint32_t frame_code;               /* .f_code (3.11, 3.12), .f_executable (3.13) */
	uint32_t frame_instr;              /* .prev_instr (3.11, 3.12), .instr_ptr (3.13) */
	uint32_t frame_owner;              /* .owner, a char */
	uint32_t frame_is_entry;           /* .is_entry, a bool (3.11) */
	uint32_t code_filename;            /* PyCodeObject.co_filename, a str */
	uint32_t code_name;                /* .co_name, a str */
	uint32_t code_qualname;            /* .co_qualname, a str */
	uint32_t code_linetable;           /* .co_linetable, a bytes */
	uint32_t code_firstlineno;         /* .co_firstlineno, an int */
	uint32_t code_code_adaptive;       /* .co_code_adaptive: the first code unit */
	uint32_t unicode_length;           /* PyASCIIObject.length, in code points */
	uint32_t unicode_state;            /* .state: kind in bits 2-4, compact 5, ascii 6 */
	uint32_t unicode_ascii_size;       /* sizeof(PyASCIIObject): an ASCII str's data */
	uint32_t unicode_compact_size;     /* sizeof(PyCompactUnicodeObject): other strs' data */
	uint32_t bytes_size;               /* PyVarObject.ob_size of a bytes */
	uint32_t bytes_sval;               /* PyBytesObject.ob_sval */
};

/* The table of an interpreter whose Py_Version is version (any micro version, release level
 * and serial of 3.11 or 3.12): a static table, or NULL for another minor version. */
const struct at_py_offsets *at_py_offsets_table(uint32_t version);

/* Whether the interpreter of this Py_Version publishes its offsets in _PyRuntime (3.13). */
int at_py_offsets_published(uint32_t version);

/* Decodes 3.13's _Py_DebugOffsets from the first len bytes of _PyRuntime into *o. 0, or -1
 * with a reason in *why (a static string): bytes too short, a wrong cookie, a version other
 * than version, a free-threaded build, or an offset past any structure's plausible size (the
 * bytes come from a process the daemon does not trust). */
int at_py_offsets_decode(const uint8_t *buf, size_t len, uint32_t version,
			 struct at_py_offsets *o, const char **why);

#endif
