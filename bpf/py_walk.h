/* py_walk.h: the walk of a CPython thread's Python frames, one source for the BPF program and
 * for user space (doc/DESIGN.md, decision 18).
 *
 * From the interpreter's _PyRuntime: the thread's PyThreadState, the one of its interpreters'
 * lists whose native_thread_id is the thread (py_find_step, one thread state a step), then its
 * _PyInterpreterFrame chain from the innermost frame (py_frame_step, one frame a step: its
 * first AT_PY_FRAME_BYTES bytes in one read), giving each Python frame's code object,
 * instruction offset and whether it begins a run of the evaluation loop; a frame owned by the
 * C stack (a shim) is no Python call: it marks the frame before it as a run's first. The
 * caller runs each step up to its bound (bpf_loop in BPF) until it returns 1.
 *
 * It is written the way the verifier needs: fixed-size buffers, every offset into one bounded
 * by a mask, no recursion. The includer defines, before including it:
 *   AT_PY_READ(w, dst, n, addr)  reads n bytes of the process at user address addr: 0, or
 *                                non-zero when they cannot be read
 *   AT_PY_STATE_EXTRA            more fields of struct py_walk_state
 * and may define AT_PY_READ_FRAME(w, dst, addr), the read of a frame's first
 * AT_PY_FRAME_BYTES bytes at addr (the BPF program's reads them through a window of a page:
 * a thread's frames lie one after the other in its data stack, each caller below its callee). 
 * The daemon's reader (daemon/python/pyframes.c) maps AT_PY_READ to a read of
 * /proc/PID/mem. */
#ifndef ALLOCTAP_PY_WALK_H
#define ALLOCTAP_PY_WALK_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#include "py_layout.h"

#ifndef AT_PY_READ_FRAME
#define AT_PY_READ_FRAME(w, dst, addr) AT_PY_READ(w, dst, AT_PY_FRAME_BYTES, addr)
#endif

/* What the walk carries from one step to the next. */
struct py_walk_state {
	const struct at_py_offsets *off;
	__u64 runtime;                  /* the address of _PyRuntime */
	__u64 interp, tstate;           /* the thread search's place */
	__u64 frame;                    /* the next frame, 0 at the end */
	__u32 tid;                      /* the thread sought */
	__u32 count;                    /* frames written to out */
	__u32 max;                      /* out's room, at most AT_PY_WALK_MAX */
	__u32 bad;                      /* a read failed or a chain made no sense */
	__u32 found;                    /* the search found the thread's state: w->tstate */
	__u32 pad;
	struct at_py_frame *out;
	AT_PY_STATE_EXTRA
};

/* The 64-bit word at offset at of a frame's bytes (buf on a word's boundary); 0 past them.
 * A pointer field lies on a word's boundary (at_py_offsets_walkable() checks every version's
 * offsets), so the word is one aligned load, not eight of a byte each. */
static __always_inline __u64 py_word(const __u8 *buf, __u32 at)
{
	if (at > AT_PY_FRAME_BYTES - sizeof(__u64))
		return 0;
	return *(const __u64 *)__builtin_assume_aligned(buf + (at & ~7u), 8);
}

/* The byte at offset at of a frame's bytes; 0 past them. */
static __always_inline __u8 py_byte(const __u8 *buf, __u32 at)
{
	return at < AT_PY_FRAME_BYTES ? buf[at] : 0;
}

/* Starts the thread search at the first interpreter's first thread state: 0, or -1 when
 * _PyRuntime cannot be read. */
static __always_inline int py_find_start(struct py_walk_state *w)
{
	w->tstate = 0;
	if (AT_PY_READ(w, &w->interp, sizeof(w->interp),
		       w->runtime + w->off->runtime_interpreters_head))
		return -1;
	if (w->interp && AT_PY_READ(w, &w->tstate, sizeof(w->tstate),
				    w->interp + w->off->interp_threads_head))
		return -1;
	return 0;
}

/* One step of the thread search: 1 when it ends (w->found set and w->tstate the thread's
 * state, or no thread state is the thread's; w->bad on a read that failed), 0 to go on. A
 * search cut short by its caller's bound has found nothing, whatever w->tstate holds. */
static __always_inline int py_find_step(struct py_walk_state *w)
{
	const struct at_py_offsets *o = w->off;
	__u64 id = 0, next = 0;

	if (!w->interp)
		return 1;
	if (!w->tstate) {
		if (AT_PY_READ(w, &w->interp, sizeof(w->interp), w->interp + o->interp_next))
			goto bad;
		if (w->interp && AT_PY_READ(w, &w->tstate, sizeof(w->tstate),
					    w->interp + o->interp_threads_head))
			goto bad;
		return 0;
	}
	if (AT_PY_READ(w, &id, sizeof(id), w->tstate + o->tstate_native_thread_id) ||
	    AT_PY_READ(w, &next, sizeof(next), w->tstate + o->tstate_next))
		goto bad;
	if (id == w->tid) {
		w->found = 1;
		return 1;
	}
	w->tstate = next;
	return 0;
bad:
	w->bad = 1;
	w->tstate = 0;
	w->interp = 0;
	return 1;
}

/* The thread's innermost frame into w->frame: 0, or -1 when it cannot be read. */
static __always_inline int py_frames_start(struct py_walk_state *w)
{
	const struct at_py_offsets *o = w->off;
	__u64 cframe = 0;

	w->frame = 0;
	if (o->tstate_cframe == AT_PY_NONE)
		return AT_PY_READ(w, &w->frame, sizeof(w->frame),
				  w->tstate + o->tstate_current_frame) ? -1 : 0;
	if (AT_PY_READ(w, &cframe, sizeof(cframe), w->tstate + o->tstate_cframe))
		return -1;
	if (cframe && AT_PY_READ(w, &w->frame, sizeof(w->frame),
				 cframe + o->cframe_current_frame))
		return -1;
	return 0;
}

/* The offset in code units of instruction pointer instr in code: CPython's LASTI, which is -1
 * (AT_PY_OFFSET_START) before the first instruction. */
static __always_inline __u32 py_instr_offset(const struct at_py_offsets *o, __u64 code,
					     __u64 instr)
{
	__u64 first = code + o->code_code_adaptive;

	if (instr < first)
		return AT_PY_OFFSET_START;
	if ((instr - first) / 2 >= AT_PY_OFFSET_START)
		return AT_PY_OFFSET_START - 1;
	return (__u32)((instr - first) / 2);
}

/* One step of the frame walk: 1 when it ends (the chain's end, out full, or w->bad), 0 to go
 * on. */
static __always_inline int py_frame_step(struct py_walk_state *w)
{
	const struct at_py_offsets *o = w->off;
	__u8 buf[AT_PY_FRAME_BYTES] __attribute__((aligned(8)));
	__u64 code;
	__u32 i;
	__u8 owner;

	if (!w->frame)
		return 1;
	if (AT_PY_READ_FRAME(w, buf, w->frame)) {
		w->bad = 1;
		return 1;
	}
	owner = py_byte(buf, o->frame_owner);
	code = py_word(buf, o->frame_code);
	w->frame = py_word(buf, o->frame_previous);
	if (owner == AT_PY_OWNER_CSTACK) {
		if (w->count > 0 && w->count <= AT_PY_WALK_MAX)
			w->out[(w->count - 1) & (AT_PY_WALK_MAX - 1)].entry = 1;
		return 0;
	}
	if (w->count >= w->max || w->count >= AT_PY_WALK_MAX)
		return 1;
	if (!code) {
		w->bad = 1;
		return 1;
	}
	i = w->count & (AT_PY_WALK_MAX - 1);
	w->out[i].code = code;
	w->out[i].globals = py_word(buf, o->frame_globals);
	/* locals of its own: a module's code, a class body, exec's, which run once */
	if (w->out[i].globals && py_word(buf, o->frame_locals))
		w->out[i].globals |= 1;
	w->out[i].offset = py_instr_offset(o, code, py_word(buf, o->frame_instr));
	w->out[i].entry = o->frame_is_entry != AT_PY_NONE && py_byte(buf, o->frame_is_entry);
	w->count++;
	return 0;
}

#endif
