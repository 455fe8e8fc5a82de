/* pyframes.h: the Python frames of a thread of a live CPython 3.11, 3.12 or 3.13, read from
 * /proc/PID/mem (doc/DESIGN.md, decision 18).
 *
 * at_py_open() finds the interpreter a process runs and the offsets of its structures;
 * at_py_thread_frames() walks one thread's _PyInterpreterFrame chain, as the BPF walk does,
 * giving each frame's code object and instruction offset; at_py_code_read() reads what names a
 * code object (qualified name, file, first line, line table), once per code object. Everything
 * read is the process's memory, which the daemon does not trust: every string, table and chain
 * is bounded, and a read that fails or makes no sense is an error, never a crash. */
#ifndef ALLOCTAP_PYFRAMES_H
#define ALLOCTAP_PYFRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pyoffsets.h"

/* The longest name and file kept (longer ones are cut), and the longest line table read. */
#define AT_PY_MAX_STR 4096
#define AT_PY_MAX_LINETABLE (1u << 20)

/* A process's interpreter. */
struct at_py_proc {
	pid_t pid;
	int mem_fd;                 /* /proc/PID/mem, open for reading */
	uint32_t version;           /* its Py_Version (PY_VERSION_HEX) */
	uint64_t runtime;           /* the address of its _PyRuntime */
	uint64_t eval_start, eval_end; /* its _PyEval_EvalFrameDefault's code (its dynamic
				     * symbol's extent; 0, 0 without one) */
	uint64_t code_type;         /* the address of its PyCode_Type (0: unknown): a code
				     * object's ob_type */
	struct at_py_offsets off;
	char object[128];           /* the file name of the object that defines _PyRuntime */
};

/* What at_py_open() found. */
enum at_py_found {
	AT_PY_ERROR = -1,           /* the process's maps, memory or interpreter could not be read */
	AT_PY_NOT_PYTHON = 0,       /* no mapped python* or libpython* object defines _PyRuntime */
	AT_PY_UNKNOWN = 1,          /* a CPython whose frames this reader does not know (3.10...) */
	AT_PY_KNOWN = 2,            /* 3.11, 3.12 or 3.13: *p is open */
};

/* Finds the interpreter of process pid. AT_PY_KNOWN with *p open (the caller closes it with
 * at_py_close()); otherwise *p is not open, and for AT_PY_UNKNOWN and AT_PY_ERROR why (of
 * whylen bytes) says what and why, naming the object and the version where known. */
enum at_py_found at_py_open(struct at_py_proc *p, pid_t pid, char *why, size_t whylen);

/* Closes what at_py_open() opened. */
void at_py_close(struct at_py_proc *p);

/* Reads n bytes at addr of the process into buf: 0, or -1 (unmapped, or the process is
 * gone). */
int at_py_read(const struct at_py_proc *p, uint64_t addr, void *buf, size_t n);

/* The Python frames of thread tid of the process, innermost first, into f[0..max) (struct
 * at_py_frame, bpf/py_layout.h: code object, instruction offset, first of a run of the
 * evaluation loop), by the BPF program's walk (bpf/py_walk.h) over /proc/PID/mem: their number
 * (0 when the thread has no Python state or no frame; at most max and AT_PY_WALK_MAX, the
 * innermost ones), or -1 when the process's memory cannot be read or a chain makes no sense (a
 * null code object). */
int at_py_thread_frames(const struct at_py_proc *p, pid_t tid, struct at_py_frame *f,
			int max);

/* What names a code object. */
struct at_py_code {
	char name[256];             /* co_name (cut at 255 bytes), UTF-8 */
	char qualname[AT_PY_MAX_STR]; /* co_qualname, UTF-8 */
	char file[AT_PY_MAX_STR];   /* co_filename, UTF-8 */
	int firstlineno;            /* co_firstlineno */
	uint8_t *linetable;         /* co_linetable's bytes, the caller's (free()) */
	size_t linetable_len;
};

/* Reads code object code of the process into *c: 0, or -1 when its memory cannot be read or
 * is no code object of this version (its type is not PyCode_Type, a string of another type, a
 * table too large). */
int at_py_code_read(const struct at_py_proc *p, uint64_t code, struct at_py_code *c);

/* The line of offset in code c (at_py_line(); its first line for AT_PY_OFFSET_START), -1 for
 * none (a negative first line included). */
int at_py_code_line(const struct at_py_code *c, uint32_t offset);

/* Converts a str's characters (kind 1, 2 or 4 bytes each, n of them, at data) to UTF-8 in
 * out[0..outlen), NUL-terminated, cut at a character boundary when it does not fit. Returns
 * the bytes written, or -1 for a kind that is none of those or a code point past U+10FFFF. A
 * NUL and a lone surrogate (both legal in a str) become U+FFFD, the replacement character, so
 * the result is valid UTF-8 and as long as its strlen(). */
int at_py_str_utf8(unsigned kind, const uint8_t *data, size_t n, char *out, size_t outlen);

#endif
