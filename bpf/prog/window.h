/* prog/window.h: the recording window of the BPF program. A call recorded at its return belongs
 * to the trace when its outermost entry saw `recording` on; it counts in the per-CPU inflight
 * array until its record is reserved, so that the daemon, after turning recording off, can
 * wait for every call of the window, then read the rings up to their producer positions
 * (AT_INFLIGHT_CALL in alloctap.h). What is recorded at once (a free, a thread's end) belongs
 * to the trace when recording is on before and after its record is reserved (prog/emit.h,
 * window_reserve). Included by alloctap.bpf.c only, after maps.h. */
#ifndef ALLOCTAP_BPF_WINDOW_H
#define ALLOCTAP_BPF_WINDOW_H

static __always_inline __u64 inflight_unit(__u32 func)
{
	return at_probe_reallocates(func) ? AT_INFLIGHT_REALLOC : AT_INFLIGHT_CALL;
}

/* Adds delta to this CPU's in-flight count. A locked add: it is also the full barrier that
 * orders it before the second read of recording in window_admits(). */
static __always_inline void inflight_add(__u64 delta)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&inflight, &zero);

	if (n)
		__sync_fetch_and_add(n, delta);
}

/* Whether an outermost call now entering belongs to the window; if so it is counted in flight
 * (with unit) until its record is written. The count goes up before recording is read again:
 * the daemon clears recording, then reads the counts, so either it sees this call in flight or
 * this read sees recording off (then the count goes back down). */
static __always_inline int window_admits(__u64 unit)
{
	if (!*(volatile __u32 *)&recording)
		return 0;
	inflight_add(unit);
	if (*(volatile __u32 *)&recording)
		return 1;
	inflight_add(-unit);
	return 0;
}

#endif
