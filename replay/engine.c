/* engine.c: the replay of one munged event. Nothing here allocates except the replayed
 * calls themselves. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

int rp_engine_init(struct rp_engine *e, uint64_t slot_limit, unsigned flags)
{
	memset(e, 0, sizeof(*e));
	e->flags = flags;
	return rp_slots_init(&e->slots, slot_limit);
}

void rp_engine_fini(struct rp_engine *e)
{
	rp_slots_fini(&e->slots);
}

/* usable - requested for a block (0 if the allocator reports less than requested). */
static uint64_t slop_of(void *p, uint64_t size)
{
	uint64_t usable = malloc_usable_size(p);
	return usable > size ? usable - size : 0;
}

/* Takes the pointer out of slot n, leaving it empty, and removes it from the accounting.
 * *size receives the requested size it had. */
static void *slot_take(struct rp_engine *e, uint64_t n, uint64_t *size)
{
	struct rp_slot *s = &e->slots.slot[n];
	void *p = s->ptr;

	*size = s->size;
	if (p) {
		e->live_bytes -= s->size;
		e->live_objects--;
		if (e->flags & RP_SLOP)
			e->slop_bytes -= slop_of(p, s->size);
	}
	s->ptr = NULL;
	s->size = 0;
	return p;
}

/* Stores the result of an allocation of `size` bytes in slot n (see engine.h about a slot
 * still holding a pointer). */
static void slot_store(struct rp_engine *e, uint64_t n, void *p, uint64_t size)
{
	struct rp_slot *s = &e->slots.slot[n];
	uint64_t old_size;

	if (s->ptr) {
		e->overwritten++;
		slot_take(e, n, &old_size);
	}
	if (!p) {
		if (size)
			e->failed++;
		return;
	}
	s->ptr = p;
	s->size = size;
	e->live_objects++;
	e->live_bytes += size;
	if (e->live_bytes > e->peak_live_bytes)
		e->peak_live_bytes = e->live_bytes;
	if (e->flags & RP_SLOP)
		e->slop_bytes += slop_of(p, size);
}

static void fill(void *p, uint64_t from, uint64_t to)
{
	if (p && to > from)
		memset((char *)p + from, RP_FILL_BYTE, (size_t)(to - from));
}

/* Checks the slot numbers an event uses against the limit and marks them used. */
static int check_slots(struct rp_engine *e, const struct at_event *ev, const char **why)
{
	e->has_bad_slot = 0;
	if (at_func_takes_pointer(ev->func) && ev->arg[0] >= e->slots.limit) {
		*why = "pointer slot beyond the slot limit";
		e->has_bad_slot = 1;
		e->bad_slot = ev->arg[0];
		return -1;
	}
	if (at_func_returns_pointer(ev->func)) {
		if (!ev->has_result) {
			*why = "missing result slot (=#N)";
			return -1;
		}
		if (ev->result >= e->slots.limit) {
			*why = "result slot beyond the slot limit";
			e->has_bad_slot = 1;
			e->bad_slot = ev->result;
			return -1;
		}
	}
	if (at_func_takes_pointer(ev->func))
		rp_slots_touch(&e->slots, ev->arg[0]);
	if (at_func_returns_pointer(ev->func))
		rp_slots_touch(&e->slots, ev->result);
	return 0;
}

/* Makes an allocating call (not realloc, not free); *size receives the bytes requested. */
static void *allocate(const struct at_event *ev, uint64_t *size)
{
	void *p = NULL;

	switch (ev->func) {
	case AT_MALLOC:
		*size = ev->arg[0];
		return malloc((size_t)ev->arg[0]);
	case AT_CALLOC:
		if (__builtin_mul_overflow(ev->arg[0], ev->arg[1], size))
			*size = UINT64_MAX;
		return calloc((size_t)ev->arg[0], (size_t)ev->arg[1]);
	case AT_MEMALIGN:
		*size = ev->arg[1];
		return memalign((size_t)ev->arg[0], (size_t)ev->arg[1]);
	case AT_POSIX_MEMALIGN:
		*size = ev->arg[1];
		if (posix_memalign(&p, (size_t)ev->arg[0], (size_t)ev->arg[1]) != 0)
			p = NULL;
		return p;
	case AT_ALIGNED_ALLOC:
		*size = ev->arg[1];
		return aligned_alloc((size_t)ev->arg[0], (size_t)ev->arg[1]);
	case AT_VALLOC:
		*size = ev->arg[0];
		return valloc((size_t)ev->arg[0]);
	}
	*size = 0;
	return NULL;
}

enum rp_step rp_engine_admit(struct rp_engine *e, const struct at_event *ev, const char **why)
{
	if (!e->have_pid) {
		e->have_pid = 1;
		e->pid = ev->pid;
	}
	if (ev->pid != e->pid) {
		e->other_pid_events++;
		return RP_STEP_SKIPPED;
	}
	e->has_bad_slot = 0;
	if (ev->func >= AT_FUNC_COUNT) {
		*why = "unknown function";
		return RP_STEP_ERROR;
	}
	if (check_slots(e, ev, why) < 0)
		return RP_STEP_ERROR;
	return RP_STEP_DONE;
}

enum rp_step rp_engine_call(struct rp_engine *e, const struct at_event *ev)
{
	uint64_t size, old_size;
	void *p;

	e->calls[ev->func]++;
	if (ev->func == AT_JEMALLOC_STATS)
		return RP_STEP_STATS;
	uint64_t t0 = 0, t1 = 0;
	switch (ev->func) {
	case AT_FREE:
		e->taken = slot_take(e, ev->arg[0], &old_size);
		t0 = e->latency ? rp_clock_ns() : 0;
		free(e->taken);
		t1 = e->latency ? rp_clock_ns() : 0;
		size = old_size;
		break;
	case AT_REALLOC:
		e->taken = slot_take(e, ev->arg[0], &old_size);
		t0 = e->latency ? rp_clock_ns() : 0;
		p = realloc(e->taken, (size_t)ev->arg[1]);
		t1 = e->latency ? rp_clock_ns() : 0;
		size = ev->arg[1];
		if (e->flags & RP_FILL)
			fill(p, old_size, size);
		slot_store(e, ev->result, p, size);
		e->result = p;
		break;
	default:
		t0 = e->latency ? rp_clock_ns() : 0;
		p = allocate(ev, &size);
		t1 = e->latency ? rp_clock_ns() : 0;
		if (e->flags & RP_FILL)
			fill(p, 0, size);
		slot_store(e, ev->result, p, size);
		e->result = p;
		break;
	}
	if (e->latency)
		rp_latency_add(e->latency, ev->func, size, t1 - t0);
	e->ops++;
	return RP_STEP_DONE;
}
