/* py_layout.h: what the walk of a CPython thread's Python frames (py_walk.h) shares with the
 * daemon: the offsets of the interpreter's structures it reads, one Python frame, their bounds.
 * Types and constants only, for clang's BPF target and cc alike (doc/DESIGN.md, decision 18). */
#ifndef ALLOCTAP_PY_LAYOUT_H
#define ALLOCTAP_PY_LAYOUT_H

#include <linux/types.h>

/* An offset an interpreter's structures do not have (3.13's cframe, 3.12's is_entry...). */
#define AT_PY_NONE 0xFFFFFFFFu

/* The owner of a frame that is no Python call: 3.12's and 3.13's shim, pushed on the C stack
 * at each entry into the evaluation loop (FRAME_OWNED_BY_CSTACK). */
#define AT_PY_OWNER_CSTACK 3

/* The bytes of a frame read at once: every field the walk reads lies in them (checked for
 * every version's offsets by at_py_offsets_walkable(), daemon/python/pyoffsets.h). */
#define AT_PY_FRAME_BYTES 72

/* The most Python frames one walk gives. */
#define AT_PY_WALK_MAX 128

/* The offset of a frame not started yet (CPython's LASTI of -1: its first line). */
#define AT_PY_OFFSET_START 0xFFFFFFFFu

/* A Python frame's value in a stack (lib/frames.h's kind python): the code object's address
 * (below 2^48 in user space) with the instruction offset in the top 16 bits; an offset past
 * AT_PY_VALUE_MAX_OFFSET is kept as AT_PY_VALUE_UNKNOWN (no line), a frame not started yet as
 * AT_PY_VALUE_NOT_STARTED. */
#define AT_PY_VALUE_SHIFT 48
#define AT_PY_VALUE_MAX_OFFSET 0xFFFDu
#define AT_PY_VALUE_NOT_STARTED 0xFFFEu
#define AT_PY_VALUE_UNKNOWN 0xFFFFu

/* The value of a frame of code object code at instruction offset offset. */
static inline __attribute__((always_inline)) __u64 at_py_pack(__u64 code, __u32 offset)
{
	__u64 off = offset == AT_PY_OFFSET_START      ? AT_PY_VALUE_NOT_STARTED
		    : offset > AT_PY_VALUE_MAX_OFFSET ? AT_PY_VALUE_UNKNOWN
						      : offset;

	return (code & ((1ull << AT_PY_VALUE_SHIFT) - 1)) | off << AT_PY_VALUE_SHIFT;
}

/* Byte offsets of fields, from the start of their structure. */
struct at_py_offsets {
	__u32 version;                  /* PY_VERSION_HEX's major and minor (0x030b0000) */
	__u32 runtime_interpreters_head; /* _PyRuntime.interpreters.head */
	__u32 interp_next;              /* PyInterpreterState.next */
	__u32 interp_threads_head;      /* PyInterpreterState.threads.head */
	__u32 tstate_next;              /* PyThreadState.next */
	__u32 tstate_native_thread_id;  /* PyThreadState.native_thread_id (the kernel's tid) */
	__u32 tstate_cframe;            /* PyThreadState.cframe (3.11, 3.12) */
	__u32 cframe_current_frame;     /* _PyCFrame.current_frame (3.11, 3.12) */
	__u32 tstate_current_frame;     /* PyThreadState.current_frame (3.13) */
	__u32 frame_previous;           /* _PyInterpreterFrame.previous */
	__u32 frame_code;               /* .f_code (3.11, 3.12), .f_executable (3.13) */
	__u32 frame_instr;              /* .prev_instr (3.11, 3.12), .instr_ptr (3.13) */
	__u32 frame_owner;              /* .owner, a char */
	__u32 frame_is_entry;           /* .is_entry, a bool (3.11) */
	__u32 frame_globals;            /* .f_globals: the module's namespace, which tells two code
					 * objects that came in turn at one address apart */
	__u32 frame_locals;             /* .f_locals: a module's, a class body's, exec's namespace
					 * (a module's: its globals); none in a function's */
	__u32 code_filename;            /* PyCodeObject.co_filename, a str */
	__u32 code_name;                /* .co_name, a str */
	__u32 code_qualname;            /* .co_qualname, a str */
	__u32 code_linetable;           /* .co_linetable, a bytes */
	__u32 code_firstlineno;         /* .co_firstlineno, an int */
	__u32 code_code_adaptive;       /* .co_code_adaptive: the first code unit */
	__u32 unicode_length;           /* PyASCIIObject.length, in code points */
	__u32 unicode_state;            /* .state: kind in bits 2-4, compact 5, ascii 6 */
	__u32 unicode_ascii_size;       /* sizeof(PyASCIIObject): an ASCII str's data */
	__u32 unicode_compact_size;     /* sizeof(PyCompactUnicodeObject): other strs' data */
	__u32 bytes_size;               /* PyVarObject.ob_size of a bytes */
	__u32 bytes_sval;               /* PyBytesObject.ob_sval */
};

/* One Python frame as the walk gives it. */
struct at_py_frame {
	__u64 code;                     /* the code object's address */
	__u32 offset;                   /* the instruction's offset in code units, or
					 * AT_PY_OFFSET_START */
	__u32 entry;                    /* 1: the first Python frame of its run of the loop */
	__u64 globals;                  /* its frame's globals (f_globals), 0: none; its low bit (a
					 * pointer's is 0) set: a frame with locals of its own, a
					 * module's, a class body's or exec's */
};

/* A process running a CPython the daemon knows (the BPF program's py_procs map, by tgid). */
struct at_bpf_py_proc {
	__u64 runtime;                  /* the address of its _PyRuntime */
	struct at_py_offsets off;
};

/* The py_news ring wakes the daemon at most once in this time (a wakeup is an interrupt on the
 * submitting CPU, and an interpreter's start makes thousands of stacks a second); the daemon,
 * having read news, looks again after this time whether more came. */
#define AT_PY_NEWS_WAKE_NS 200000

/* A stack with Python frames new to the BPF program's stacks map (its py_news ring). */
struct at_bpf_py_news {
	__u64 hash;
	__u32 pid;
	__u32 pad;
};

/* The page of the process's memory the BPF walk reads frames from (per CPU): one read of a
 * page holds the frames of a run of callers, each read alone costing almost as much as the
 * page. */
#define AT_PY_WINDOW 4096
/* The bytes of a thread state read at once, from the first of its thread id and its innermost
 * frame's pointer to the other, when they lie within them (3.11 to 3.13: 96 to 112 bytes). */
#define AT_PY_TSTATE_BYTES 128
struct at_py_window {
	__u64 base;                     /* the page's address; 0: none */
	__u32 end;                      /* the bytes read, from base */
	__u32 pad;
	__u8 bytes[AT_PY_WINDOW + AT_PY_FRAME_BYTES]; /* the page, then room for masked reads */
	__u8 tstate[AT_PY_TSTATE_BYTES + 8]; /* a thread state's fields read, then room */
};

/* A walk's frames (the BPF program's per-CPU scratch). */
struct at_py_frames {
	struct at_py_frame f[AT_PY_WALK_MAX];
};

/* What one walk found: its frames and how it ended (bpf/pywalk.bpf.c's result). */
struct at_py_walk_result {
	__u32 done;                     /* 1 once the walk ran */
	__u32 bad;                      /* a read failed or a chain made no sense */
	__u32 found;                    /* the thread has a thread state */
	__u32 count;                    /* frames */
	struct at_py_frame frames[AT_PY_WALK_MAX];
};

#endif
