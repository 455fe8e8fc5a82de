/* oplist.c: loading a munged trace into ops, replay threads and dependencies (oplist.h). */
#include <errno.h>

#include "oplist.h"
#include "prim.h"

#define FIRST_CAP (UINT64_C(1) << 16)

int rp_oplist_init(struct rp_oplist *ol, uint64_t slot_limit)
{
	*ol = (struct rp_oplist){ .slot_limit = slot_limit };
	ol->holder = at_map(slot_limit * sizeof(*ol->holder), AT_MAP_NORESERVE);
	if (!ol->holder)
		return -1;
	ol->ev = at_map(FIRST_CAP * sizeof(*ol->ev), 0);
	ol->thread = at_map(FIRST_CAP * sizeof(*ol->thread), 0);
	ol->dep = at_map(FIRST_CAP * sizeof(*ol->dep), 0);
	ol->awaited = at_map(FIRST_CAP, 0);
	ol->cap = FIRST_CAP;
	if (!ol->ev || !ol->thread || !ol->dep || !ol->awaited) {
		rp_oplist_fini(ol);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void rp_oplist_fini(struct rp_oplist *ol)
{
	at_unmap(ol->holder, ol->slot_limit * sizeof(*ol->holder));
	at_unmap(ol->ev, ol->cap * sizeof(*ol->ev));
	at_unmap(ol->thread, ol->cap * sizeof(*ol->thread));
	at_unmap(ol->dep, ol->cap * sizeof(*ol->dep));
	at_unmap(ol->awaited, ol->cap);
	*ol = (struct rp_oplist){ 0 };
}

/* Doubles the room for ops. 0, or -1 with errno (the list is unchanged). */
static int grow(struct rp_oplist *ol)
{
	uint64_t cap = ol->cap * 2;
	void *ev = at_remap(ol->ev, ol->cap * sizeof(*ol->ev), cap * sizeof(*ol->ev));
	if (!ev)
		return -1;
	ol->ev = ev;
	void *th = at_remap(ol->thread, ol->cap * sizeof(*ol->thread), cap * sizeof(*ol->thread));
	if (!th)
		return -1;
	ol->thread = th;
	void *dep = at_remap(ol->dep, ol->cap * sizeof(*ol->dep), cap * sizeof(*ol->dep));
	if (!dep)
		return -1;
	ol->dep = dep;
	void *awaited = at_remap(ol->awaited, ol->cap, cap);
	if (!awaited)
		return -1;
	ol->awaited = awaited;
	ol->cap = cap;
	return 0;
}

/* The replay thread of a recorded tid, created when new; -1 past RP_MAX_THREADS. */
static int64_t thread_of(struct rp_oplist *ol, uint32_t tid)
{
	if (ol->nthreads && ol->tid[ol->last_thread] == tid)
		return ol->last_thread;
	for (uint32_t i = 0; i < ol->nthreads; i++)
		if (ol->tid[i] == tid)
			return ol->last_thread = i;
	if (ol->nthreads == RP_MAX_THREADS)
		return -1;
	ol->tid[ol->nthreads] = tid;
	return ol->last_thread = ol->nthreads++;
}

/* Bytes an allocation asked for, as the replay engine accounts them. */
static uint64_t requested(const struct at_event *ev)
{
	uint64_t n;

	switch (ev->func) {
	case AT_MALLOC:
	case AT_VALLOC:
		return ev->arg[0];
	case AT_CALLOC:
		return __builtin_mul_overflow(ev->arg[0], ev->arg[1], &n) ? UINT64_MAX : n;
	default:
		return ev->arg[1];
	}
}

int rp_oplist_add(struct rp_oplist *ol, const struct at_event *ev, uint64_t pos)
{
	uint64_t op = ol->n;

	if (op >= RP_MAX_OPS) {
		errno = E2BIG;
		return -1;
	}
	if (op == ol->cap && grow(ol) < 0)
		return -1;
	ol->ev[op] = *ev;
	ol->dep[op] = RP_NO_OP;
	if (ev->func == AT_JEMALLOC_STATS) {
		ol->ev[op].result = pos;
		ol->thread[op] = RP_NO_OP;
		ol->markers++;
		ol->n++;
		return 0;
	}
	int64_t t = thread_of(ol, ev->tid);
	if (t < 0) {
		errno = EMLINK;
		return -1;
	}
	ol->thread[op] = (uint32_t)t;
	if (at_func_takes_pointer(ev->func)) {
		uint32_t made = ol->holder[ev->arg[0]]; /* 1 + the op that made the block */
		ol->holder[ev->arg[0]] = 0;
		ol->ev[op].arg[0] = made; /* an instance once rp_oplist_finish has run */
		if (made) {
			ol->live_bytes -= requested(&ol->ev[made - 1]);
			if (ol->thread[made - 1] != (uint32_t)t) {
				ol->dep[op] = made - 1;
				ol->awaited[made - 1] = 1;
			}
		}
	}
	if (at_func_returns_pointer(ev->func)) {
		uint32_t held = ol->holder[ev->result];
		if (held) { /* its block is leaked, as a replay of the log would leak it */
			ol->overwritten++;
			ol->live_bytes -= requested(&ol->ev[held - 1]);
		}
		if (ol->instances + 1 >= ol->slot_limit) {
			errno = E2BIG;
			return -1;
		}
		ol->holder[ev->result] = (uint32_t)op + 1;
		ol->instances++;
		ol->live_bytes += requested(ev);
		if (ol->live_bytes > ol->peak_live_bytes)
			ol->peak_live_bytes = ol->live_bytes;
	}
	ol->n++;
	return 0;
}

int rp_oplist_finish(struct rp_oplist *ol)
{
	uint64_t next[RP_MAX_THREADS] = { 0 }, base = 1;

	for (uint64_t i = 0; i < ol->n; i++)
		if (ol->thread[i] != RP_NO_OP && at_func_returns_pointer(ol->ev[i].func))
			next[ol->thread[i]]++;
	for (uint32_t t = 0; t < ol->nthreads; t++) {
		uint64_t count = next[t];
		next[t] = base;
		base += count;
	}
	for (uint64_t i = 0; i < ol->n; i++) {
		struct at_event *ev = &ol->ev[i];
		if (ol->thread[i] == RP_NO_OP)
			continue;
		if (at_func_takes_pointer(ev->func))
			ev->arg[0] = ev->arg[0] ? ol->ev[ev->arg[0] - 1].result : 0;
		if (at_func_returns_pointer(ev->func))
			ev->result = next[ol->thread[i]]++;
	}
	return 0;
}
