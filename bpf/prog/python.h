/* prog/python.h: the Python frames of an allocation (--stacks; doc/DESIGN.md, decision 18).
 * For a process the daemon found to run a CPython it knows (py_procs: its _PyRuntime and the
 * offsets of its structures), the walk of py_walk.h runs after the native walk and appends the
 * thread's Python frames to the stack, innermost first, each of kind python (the first of a
 * run of the evaluation loop as AT_BPF_FRAME_PYTHON_ENTRY, which the daemon writes as python)
 * and valued by at_py_pack, and mixes them into the stack's hash. The thread's PyThreadState
 * is kept per thread (py_tstates) and checked at each use by its native_thread_id; the search
 * of the interpreter's list runs only when that fails. Included by alloctap.bpf.c only, after
 * prog/unwind.h's maps. */
#ifndef ALLOCTAP_BPF_PYTHON_H
#define ALLOCTAP_BPF_PYTHON_H

#include "../py_layout.h"

/* The processes whose Python frames are read (struct at_bpf_py_proc), by tgid; sized by the
 * daemon (one entry when --stacks is off). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_bpf_py_proc);
} py_procs SEC(".maps");

/* Each thread's PyThreadState as its last walk found it, by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} py_tstates SEC(".maps");

/* Stacks with Python frames new to the stacks map (struct at_bpf_py_news), for the daemon to
 * name their frames at once. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1024 * 1024); /* an interpreter's start makes thousands at once */
} py_news SEC(".maps");

/* The module code objects the daemon has named (struct at_bpf_py_code); sized by the daemon
 * (one entry when --stacks is off). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, struct at_bpf_py_code);
	__type(value, __u8);
} py_named SEC(".maps");

/* The page the walk under way reads its frames from (struct at_py_window). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_py_window);
} py_window SEC(".maps");

/* The frames of the walk under way. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_py_frames);
} py_scratch SEC(".maps");

struct py_walk_state;
static __always_inline int py_read_frame(struct py_walk_state *w, __u8 *dst, __u64 addr);

#define AT_PY_STATE_EXTRA struct at_py_window *win;
#define AT_PY_READ(w, dst, n, addr) bpf_probe_read_user(dst, n, (const void *)(addr))
#define AT_PY_READ_FRAME(w, dst, addr) py_read_frame(w, dst, addr)
#include "../py_walk.h"

/* Reads the frame at addr into dst (on a word's boundary) from the window, reading first,
 * when the window does not hold it, its page from the page's start to the frame's end (its
 * callers lie below it); a frame across the page's end, or off a word's boundary (CPython's
 * never are), is read alone. Copied from the window word by word: a copy the compiler cannot
 * tell aligned is a load and a store per byte, each walked by the verifier on every path. 0, or
 * non-zero when it cannot be read. */
static __always_inline int py_read_frame(struct py_walk_state *w, __u8 *dst, __u64 addr)
{
	struct at_py_window *win = w->win;
	__u64 page = addr & ~(__u64)(AT_PY_WINDOW - 1);
	__u32 end = (__u32)(addr - page) + AT_PY_FRAME_BYTES;

	if (!win || end > AT_PY_WINDOW || (addr & 7))
		return bpf_probe_read_user(dst, AT_PY_FRAME_BYTES, (const void *)addr);
	if (win->base != page || end > win->end) {
		win->base = 0;
		if (bpf_probe_read_user(win->bytes, end, (const void *)page))
			return bpf_probe_read_user(dst, AT_PY_FRAME_BYTES, (const void *)addr);
		win->base = page;
		win->end = end;
	}
	__builtin_memcpy(__builtin_assume_aligned(dst, 8),
			 __builtin_assume_aligned(win->bytes + ((end - AT_PY_FRAME_BYTES) &
								(AT_PY_WINDOW - 8)), 8),
			 AT_PY_FRAME_BYTES);
	return 0;
}

/* bpf_loop's callbacks: one step each, 1 to stop. */
static long py_find_cb(__u64 i, void *ctx)
{
	(void)i;
	return py_find_step(ctx);
}

static long py_frame_cb(__u64 i, void *ctx)
{
	(void)i;
	return py_frame_step(ctx);
}

/* What py_append_cb carries: the walk's frames into the stack. */
struct py_append {
	struct at_bpf_stack *out;
	const struct at_py_frames *py;
	__u64 hash;
	__u32 at;      /* the stack's next frame */
	__u32 count;   /* the walk's frames */
};

static long py_append_cb(__u64 i, void *ctx)
{
	struct py_append *a = ctx;

	if (i >= a->count || a->at >= AT_BPF_STACK_FRAMES)
		return 1;
	const struct at_py_frame *f = &a->py->f[i & (AT_PY_WALK_MAX - 1)];
	__u32 at = a->at & (AT_BPF_STACK_FRAMES - 1);
	__u8 kind = AT_BPF_PYTHON_KIND(f);
	__u64 v = at_py_pack(f->code, f->offset);
	/* in a Python frame's serial, its globals: a module's code object freed after the
	 * import and another module's allocated at its address make two stacks, not one */
	__u32 serial = (__u32)(f->globals ^ (f->globals >> 32));

	a->out->pcs[at] = v;
	a->out->serials[at] = serial;
	a->out->kinds[at] = kind;
	a->hash = at_stack_hash_kind(at_stack_hash_frame(a->hash, v, serial), kind);
	a->at++;
	return 0;
}

/* Whether tstate is thread tid's state (its native_thread_id). */
static __always_inline int py_tstate_is(const struct py_walk_state *w, __u64 tstate)
{
	__u64 id = 0;

	return tstate && !AT_PY_READ(w, &id, sizeof(id),
				     tstate + w->off->tstate_native_thread_id) &&
	       id == w->tid;
}

/* The 64-bit word at offset at of the thread state's bytes read. */
static __always_inline __u64 py_tstate_word(const struct at_py_window *win, __u32 at)
{
	__u64 v;

	__builtin_memcpy(&v, win->tstate + (at & (AT_PY_TSTATE_BYTES - 1)), sizeof(v));
	return v;
}

/* Whether tstate is thread w->tid's state, its innermost frame then in w->frame: the thread id
 * and the frame's pointer read at once, AT_PY_TSTATE_BYTES of the thread state (a larger
 * structure in every version) from the first of the two. 1 yes, 0 no, -1 when they lie
 * farther apart or cannot be read (py_tstate_is and py_frames_start then read them apart). */
static __always_inline int py_tstate_frame(struct py_walk_state *w, __u64 tstate)
{
	const struct at_py_offsets *o = w->off;
	struct at_py_window *win = w->win;
	__u32 id_at = o->tstate_native_thread_id;
	__u32 ptr_at = o->tstate_cframe != AT_PY_NONE ? o->tstate_cframe : o->tstate_current_frame;
	__u32 lo = id_at < ptr_at ? id_at : ptr_at;
	__u32 n = (id_at < ptr_at ? ptr_at : id_at) + 8 - lo;
	__u64 ptr;

	if (!win || !tstate || ptr_at == AT_PY_NONE || n > AT_PY_TSTATE_BYTES ||
	    bpf_probe_read_user(win->tstate, AT_PY_TSTATE_BYTES, (const void *)(tstate + lo)))
		return -1;
	if (py_tstate_word(win, id_at - lo) != w->tid)
		return 0;
	ptr = py_tstate_word(win, ptr_at - lo);
	w->frame = 0;
	if (o->tstate_cframe == AT_PY_NONE)
		w->frame = ptr;
	else if (ptr && AT_PY_READ(w, &w->frame, sizeof(w->frame), ptr + o->cframe_current_frame))
		return -1;
	return 1;
}

/* What python_frames did. */
#define AT_PY_APPENDED 1        /* it appended frames */
#define AT_PY_FILLED 2          /* they filled the stack, and more were left */

/* Appends the calling thread's Python frames to out (its count native frames, AT_BPF_MAX_FRAMES
 * at most, so that AT_PY_WALK_MAX Python frames fit after them) when its process
 * tgid runs a CPython the daemon knows, mixing them into *hash. Returns AT_PY_* bits, 0 when
 * it appended none. */
static __noinline int python_frames(struct at_bpf_stack *out, __u64 *hash, __u32 tgid)
{
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	const struct at_bpf_py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	struct at_py_frames *py;
	struct py_walk_state w = {};
	__u64 *cached;
	int started = 0; /* w.frame read with the thread state */

	if (!p || !out || out->count >= AT_BPF_STACK_FRAMES)
		return 0;
	py = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!py)
		return 0;
	w.off = &p->off;
	w.runtime = p->runtime;
	w.tid = tid;
	w.max = AT_BPF_STACK_FRAMES - out->count; /* at least AT_PY_WALK_MAX */
	w.out = py->f;
	w.win = bpf_map_lookup_elem(&py_window, &zero);
	if (w.win)
		w.win->base = 0; /* the memory has changed since the last walk */
	cached = bpf_map_lookup_elem(&py_tstates, &tid);
	if (cached && (started = py_tstate_frame(&w, *cached)) > 0) {
		w.tstate = *cached;
		w.found = 1;
	} else if (cached && started < 0 && py_tstate_is(&w, *cached)) {
		w.tstate = *cached;
		w.found = 1;
		started = 0;
	} else {
		started = 0;
		if (py_find_start(&w) == 0)
			bpf_loop(4096, py_find_cb, &w, 0);
		else
			w.bad = 1;
		if (w.found)
			bpf_map_update_elem(&py_tstates, &tid, &w.tstate, BPF_ANY);
	}
	if (!w.found) {
		count_stacks(w.bad ? AT_STACKS_PY_BAD : AT_STACKS_PY_NO_THREAD);
		return 0;
	}
	if (started || py_frames_start(&w) == 0)
		bpf_loop(2 * AT_PY_WALK_MAX + 2, py_frame_cb, &w, 0);
	else
		w.bad = 1;
	if (w.bad)
		count_stacks(AT_STACKS_PY_BAD);
	if (!w.count)
		return 0;

	struct py_append a = { out, py, *hash, out->count, w.count };

	bpf_loop(AT_PY_WALK_MAX, py_append_cb, &a, 0);
	out->count = (__u16)a.at;
	*hash = a.hash;
	count_stacks(AT_STACKS_PYTHON);
	return AT_PY_APPENDED | (w.frame && !w.bad ? AT_PY_FILLED : 0);
}

/* What py_unnamed_cb carries: a stack's frames, of process tgid. */
struct py_unnamed {
	const struct at_bpf_stack *stack;
	__u32 tgid;
	__u32 found;   /* a module's frame whose code the daemon has not named */
};

static long py_unnamed_cb(__u64 i, void *ctx)
{
	struct py_unnamed *u = ctx;
	__u32 at = (__u32)i & (AT_BPF_STACK_FRAMES - 1);

	if (i >= u->stack->count)
		return 1;
	if (!at_bpf_kind_python(u->stack->kinds[at]) ||
	    !(u->stack->kinds[at] & AT_BPF_FRAME_PYTHON_MODULE))
		return 0;

	struct at_bpf_py_code c = { u->stack->pcs[at] & ((1ull << AT_PY_VALUE_SHIFT) - 1),
				    u->stack->serials[at], u->tgid };

	if (bpf_map_lookup_elem(&py_named, &c))
		return 0;
	u->found = 1;
	return 1;
}

/* Whether stack (of process tgid, with Python frames) has a module's frame whose code the
 * daemon has not named yet: asked of a stack new to the stacks map only. */
static __always_inline int python_module_unnamed(const struct at_bpf_stack *stack, __u32 tgid)
{
	struct py_unnamed u = { stack, tgid, 0 };

	bpf_loop(AT_BPF_STACK_FRAMES, py_unnamed_cb, &u, 0);
	return u.found;
}

/* When the py_news ring last woke the daemon (bpf_ktime_get_ns). */
__u64 py_news_woken = 0;

/* A stack with Python frames new to the stacks map (hash, of process tgid): the daemon is
 * told, to name its frames while their code objects live (a module's is freed when its import
 * ends); the stack's events may wait in the rings far longer. The ring wakes the daemon at
 * most once in AT_PY_NEWS_WAKE_NS; a record that does not wake it is read when the daemon
 * looks again (after as long at most, having read news). A full ring leaves the naming to the
 * stack's first event. */
static __always_inline void announce_python_stack(__u64 hash, __u32 tgid)
{
	struct at_bpf_py_news *n = bpf_ringbuf_reserve(&py_news, sizeof(*n), 0);
	__u64 now = bpf_ktime_get_ns(), wake = BPF_RB_NO_WAKEUP;

	if (!n) {
		count_stacks(AT_STACKS_PY_NOT_ANNOUNCED);
		return;
	}
	n->hash = hash;
	n->pid = tgid;
	n->pad = 0;
	if (now - *(volatile __u64 *)&py_news_woken >= AT_PY_NEWS_WAKE_NS) {
		py_news_woken = now;
		wake = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(n, wake);
}

#endif
