/* pywalk.bpf.c: the walk of Python frames (py_walk.h) in a BPF program of its own, for its
 * tests: a uprobe that, in thread target_tid, walks the thread's Python frames from
 * py_runtime with the offsets in py_offsets and leaves them in py_result once. Loading it runs
 * the verifier over the walk as the allocation probes will run it; tests/unit/
 * test_daemon_pywalk.c loads it, attaches it to a live interpreter and compares its frames with
 * the daemon's reader's. Not loaded by alloctapd. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "py_layout.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_py_offsets);
} py_offsets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_py_walk_result);
} py_result SEC(".maps");

const volatile __u64 py_runtime = 0;
const volatile __u32 target_tid = 0;

#define AT_PY_STATE_EXTRA
#define AT_PY_READ(w, dst, n, addr) bpf_probe_read_user(dst, n, (const void *)(addr))
#include "py_walk.h"

/* bpf_loop's callbacks: one step each, 1 to stop. */
static long find_cb(__u64 i, void *ctx)
{
	return py_find_step(ctx);
}

static long frame_cb(__u64 i, void *ctx)
{
	return py_frame_step(ctx);
}

SEC("uprobe")
int py_walk_probe(struct pt_regs *ctx)
{
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	struct at_py_walk_result *r;
	const struct at_py_offsets *o;
	struct py_walk_state w = {};

	if (tid != target_tid)
		return 0;
	r = bpf_map_lookup_elem(&py_result, &zero);
	o = bpf_map_lookup_elem(&py_offsets, &zero);
	if (!r || !o || r->done)
		return 0;
	w.off = o;
	w.runtime = py_runtime;
	w.tid = tid;
	w.max = AT_PY_WALK_MAX;
	w.out = r->frames;
	if (py_find_start(&w) == 0)
		bpf_loop(4096, find_cb, &w, 0);
	else
		w.bad = 1;
	if (!w.bad && w.found) {
		r->found = 1;
		if (py_frames_start(&w) == 0)
			bpf_loop(2 * AT_PY_WALK_MAX + 2, frame_cb, &w, 0);
		else
			w.bad = 1;
	}
	r->count = w.count;
	r->bad = w.bad;
	r->done = 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
