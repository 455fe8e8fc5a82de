/* threads.c: the threaded and the serial replay of a loaded trace (threads.h). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "prim.h"
#include "report.h"
#include "threads.h"

#define STACK_BYTES ((size_t)1 << 20)
#define SPINS 200  /* a wait spins this many pauses, */
#define YIELDS 64  /* then yields the core this many times, then sleeps on a futex */

enum { PENDING = 0, DONE = 1, WAITED = 2 }; /* states of an op's done word */
#define ABORT UINT32_MAX /* go's value when the threads could not all be created */

struct shared {
	struct rp_oplist *ol;
	struct rp_results *res;
	_Atomic uint32_t *done;  /* per op */
	uint64_t *markers;       /* op indices of the jemalloc_stats() markers */
	_Atomic uint32_t go;     /* threads may run phase p while go > p (0: not started) */
	_Atomic uint32_t arrived;/* phases finished, summed over the threads */
	_Atomic uint64_t next_seq; /* with results: the next call number */
};

struct worker {
	_Alignas(128) pthread_t th; /* a worker's counters share no cache line with another's */
	struct shared *sh;
	struct rp_engine e;
	struct rp_latency latency;
	uint64_t *ops, nops;     /* this thread's op indices, in log order */
	uint64_t waits, wait_ns;
	void *stack;
};

int rp_results_init(struct rp_results *r, uint64_t n)
{
	*r = (struct rp_results){ .n = n ? n : 1 };
	r->taken = at_map(r->n * sizeof(void *), AT_MAP_NORESERVE);
	r->result = at_map(r->n * sizeof(void *), AT_MAP_NORESERVE);
	r->seq = at_map(r->n * sizeof(uint64_t), AT_MAP_NORESERVE);
	r->seq_entry = at_map(r->n * sizeof(uint64_t), AT_MAP_NORESERVE);
	if (r->taken && r->result && r->seq && r->seq_entry)
		return 0;
	rp_results_fini(r);
	errno = ENOMEM;
	return -1;
}

void rp_results_fini(struct rp_results *r)
{
	at_unmap(r->taken, r->n * sizeof(void *));
	at_unmap(r->result, r->n * sizeof(void *));
	at_unmap(r->seq, r->n * sizeof(uint64_t));
	at_unmap(r->seq_entry, r->n * sizeof(uint64_t));
	r->taken = r->result = NULL;
	r->seq = r->seq_entry = NULL;
}

static void futex_wait(_Atomic uint32_t *w, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Waits until *w >= val (a counter that only grows). */
static void wait_at_least(_Atomic uint32_t *w, uint32_t val)
{
	uint32_t v;

	while ((v = atomic_load_explicit(w, memory_order_acquire)) < val)
		futex_wait(w, v);
}

static void add_and_wake(_Atomic uint32_t *w, uint32_t n)
{
	atomic_fetch_add_explicit(w, n, memory_order_release);
	futex_wake(w);
}

/* Waits until op d is done; counts the wait when there was one. */
static void wait_done(struct worker *w, uint32_t d)
{
	_Atomic uint32_t *word = &w->sh->done[d];

	if (atomic_load_explicit(word, memory_order_acquire) == DONE)
		return;
	uint64_t t0 = at_now_ns();
	for (int i = 0; i < SPINS + YIELDS; i++) {
		if (atomic_load_explicit(word, memory_order_acquire) == DONE)
			goto done;
		if (i < SPINS)
			__builtin_ia32_pause();
		else
			sched_yield(); /* the op waited for may need this core */
	}
	for (;;) {
		uint32_t v = PENDING;
		if (atomic_compare_exchange_strong_explicit(word, &v, WAITED, memory_order_acquire,
							    memory_order_acquire) ||
		    v == WAITED)
			futex_wait(word, WAITED);
		else if (v == DONE)
			break;
		if (atomic_load_explicit(word, memory_order_acquire) == DONE)
			break;
	}
done:
	w->waits++;
	w->wait_ns += at_now_ns() - t0;
}

static void mark_done(struct shared *sh, uint64_t op)
{
	if (atomic_exchange_explicit(&sh->done[op], DONE, memory_order_release) == WAITED)
		futex_wake(&sh->done[op]);
}

static void keep_results(struct rp_results *res, const struct rp_engine *e, uint64_t op)
{
	if (res) {
		res->taken[op] = e->taken;
		res->result[op] = e->result;
	}
}

/* Makes an op's call with its numbers (threads.h): a release is numbered before the call, an
 * allocation after. */
static void call_numbered(struct shared *sh, struct rp_engine *e, uint64_t op)
{
	const struct at_event *ev = &sh->ol->ev[op];

	if (at_func_takes_pointer(ev->func))
		sh->res->seq_entry[op] = sh->res->seq[op] =
			atomic_fetch_add_explicit(&sh->next_seq, 1, memory_order_relaxed);
	rp_engine_call(e, ev);
	if (at_func_returns_pointer(ev->func))
		sh->res->seq[op] = atomic_fetch_add_explicit(&sh->next_seq, 1, memory_order_relaxed);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	uint64_t k = 0;

	wait_at_least(&sh->go, 1);
	if (atomic_load_explicit(&sh->go, memory_order_acquire) == ABORT)
		return NULL;
	for (uint64_t phase = 0;; phase++) {
		uint64_t limit = phase < sh->ol->markers ? sh->markers[phase] : sh->ol->n;
		for (; k < w->nops && w->ops[k] < limit; k++) {
			uint64_t op = w->ops[k];
			if (sh->ol->dep[op] != RP_NO_OP)
				wait_done(w, sh->ol->dep[op]);
			w->e.taken = w->e.result = NULL;
			if (sh->res)
				call_numbered(sh, &w->e, op);
			else
				rp_engine_call(&w->e, &sh->ol->ev[op]);
			keep_results(sh->res, &w->e, op);
			if (sh->ol->awaited[op])
				mark_done(sh, op);
		}
		add_and_wake(&sh->arrived, 1);
		if (phase == sh->ol->markers)
			return NULL;
		wait_at_least(&sh->go, (uint32_t)phase + 2);
	}
}

/* The counters a worker's engine adds to the run's (its own slots are the shared ones). */
static void add_counters(struct rp_engine *into, const struct rp_engine *from)
{
	for (unsigned f = 0; f < AT_FUNC_COUNT; f++)
		into->calls[f] += from->calls[f];
	into->ops += from->ops;
	into->live_bytes += from->live_bytes; /* a thread's share may wrap below 0: the sum is right */
	into->live_objects += from->live_objects;
	into->slop_bytes += from->slop_bytes;
	into->overwritten += from->overwritten;
	into->failed += from->failed;
}

static void clear_counters(struct rp_engine *e)
{
	memset(e->calls, 0, sizeof(e->calls));
	e->ops = e->live_bytes = e->live_objects = e->slop_bytes = 0;
	e->overwritten = e->failed = 0;
}

/* Faults in, before the clock starts, the memory the replay writes: the instances' slots and
 * the results. Threads that fault pages of one mapping at once serialize in the kernel (and
 * shoot down each other's TLB entries): untouched, they cost a threaded replay more than the
 * calls. */
static void prefault(const struct rp_oplist *ol, const struct rp_engine *e,
		     const struct rp_results *res)
{
	at_populate(e->slots.slot, (ol->instances + 1) * sizeof(struct rp_slot));
	if (res) {
		at_populate(res->taken, res->n * sizeof(void *));
		at_populate(res->result, res->n * sizeof(void *));
		at_populate(res->seq, res->n * sizeof(uint64_t));
		at_populate(res->seq_entry, res->n * sizeof(uint64_t));
	}
}

/* Splits the ops among the workers and lists the markers, in one mapping. */
static void *assign_ops(struct rp_oplist *ol, struct worker *w, struct shared *sh, size_t *bytes)
{
	*bytes = (ol->n + ol->markers + 1) * sizeof(uint64_t);
	uint64_t *all = at_map(*bytes, AT_MAP_NORESERVE);
	if (!all)
		return NULL;
	uint64_t start = 0;
	for (uint64_t i = 0; i < ol->n; i++)
		if (ol->thread[i] != RP_NO_OP)
			w[ol->thread[i]].nops++;
	for (uint32_t t = 0; t < ol->nthreads; t++) {
		w[t].ops = all + start;
		start += w[t].nops;
		w[t].nops = 0;
	}
	for (uint64_t i = 0; i < ol->n; i++)
		if (ol->thread[i] != RP_NO_OP) {
			struct worker *x = &w[ol->thread[i]];
			x->ops[x->nops++] = i;
		}
	sh->markers = all + start;
	for (uint64_t i = 0, m = 0; i < ol->n; i++)
		if (ol->thread[i] == RP_NO_OP)
			sh->markers[m++] = i;
	return all;
}

/* At each marker: waits for every thread, prints the statistics line, lets them go on. */
static void run_phases(struct shared *sh, struct worker *w, struct rp_engine *e, const char *unit)
{
	uint32_t n = sh->ol->nthreads;

	for (uint64_t p = 0; p < sh->ol->markers; p++) {
		wait_at_least(&sh->arrived, n * (uint32_t)(p + 1));
		struct rp_engine now = *e;
		for (uint32_t t = 0; t < n; t++)
			add_counters(&now, &w[t].e);
		rp_report_stats_at(&now, unit, sh->ol->ev[sh->markers[p]].result, 0);
		if (sh->res)
			sh->res->seq[sh->markers[p]] = atomic_fetch_add(&sh->next_seq, 1);
		e->calls[AT_JEMALLOC_STATS]++;
		atomic_store_explicit(&sh->go, (uint32_t)p + 2, memory_order_release);
		futex_wake(&sh->go);
	}
	wait_at_least(&sh->arrived, n * (uint32_t)(sh->ol->markers + 1));
}

int rp_replay_threads(struct rp_oplist *ol, struct rp_engine *e, const char *unit,
		      struct rp_results *res, struct rp_threads_run *run)
{
	uint32_t n = ol->nthreads, created = 0;
	size_t worker_bytes = (n ? n : 1) * sizeof(struct worker), ops_bytes = 0;
	size_t done_bytes = (ol->n ? ol->n : 1) * sizeof(uint32_t);
	struct shared sh = { .ol = ol, .res = res };
	struct worker *w = at_map(worker_bytes, 0);
	void *ops = NULL;
	int rc = -1, err = ENOMEM;

	*run = (struct rp_threads_run){ .nthreads = n };
	run->thread = at_map((n ? n : 1) * sizeof(*run->thread), 0);
	sh.done = at_map(done_bytes, AT_MAP_NORESERVE);
	if (!w || !run->thread || !sh.done || !(ops = assign_ops(ol, w, &sh, &ops_bytes)))
		goto cleanup;
	prefault(ol, e, res);
	at_populate(sh.done, done_bytes);
	for (uint32_t t = 0; t < n; t++) {
		pthread_attr_t attr;
		w[t].sh = &sh;
		w[t].e = *e;
		clear_counters(&w[t].e);
		if (e->latency) {
			if (rp_latency_init(&w[t].latency, e->latency->by_size) < 0)
				goto stop;
			w[t].e.latency = &w[t].latency;
		}
		if (!(w[t].stack = at_map(STACK_BYTES, AT_MAP_NORESERVE)))
			goto stop;
		pthread_attr_init(&attr);
		pthread_attr_setstack(&attr, w[t].stack, STACK_BYTES);
		err = pthread_create(&w[t].th, &attr, worker_main, &w[t]);
		pthread_attr_destroy(&attr);
		if (err)
			goto stop;
		created++;
	}
	uint64_t t0 = at_now_ns();
	atomic_store_explicit(&sh.go, 1, memory_order_release);
	futex_wake(&sh.go);
	run_phases(&sh, w, e, unit);
	run->wall_ns = at_now_ns() - t0;
	rc = 0;
stop:
	if (rc < 0 && created) { /* the threads created so far end at once */
		atomic_store_explicit(&sh.go, ABORT, memory_order_release);
		futex_wake(&sh.go);
	}
	for (uint32_t t = 0; t < created; t++) {
		pthread_join(w[t].th, NULL);
		add_counters(e, &w[t].e);
		run->thread[t] = (struct rp_thread_figures){ .tid = ol->tid[t], .ops = w[t].e.ops,
							     .waits = w[t].waits,
							     .wait_ns = w[t].wait_ns };
		if (e->latency)
			rp_latency_merge(e->latency, &w[t].latency);
	}
	e->peak_live_bytes = ol->peak_live_bytes;
	if (res)
		res->numbers = atomic_load(&sh.next_seq);
cleanup:
	if (w)
		for (uint32_t t = 0; t < n; t++) {
			at_unmap(w[t].stack, STACK_BYTES);
			if (w[t].latency.cell)
				rp_latency_fini(&w[t].latency);
		}
	at_unmap(w, worker_bytes);
	at_unmap(ops, ops_bytes);
	at_unmap(sh.done, done_bytes);
	if (rc < 0)
		errno = err;
	return rc;
}

void rp_threads_run_fini(struct rp_threads_run *run)
{
	at_unmap(run->thread, (run->nthreads ? run->nthreads : 1) * sizeof(*run->thread));
	run->thread = NULL;
}

void rp_replay_serial(struct rp_oplist *ol, struct rp_engine *e, const char *unit,
		      struct rp_results *res, uint64_t *wall_ns)
{
	prefault(ol, e, res);
	uint64_t t0 = at_now_ns();

	for (uint64_t i = 0; i < ol->n; i++) {
		e->taken = e->result = NULL;
		if (rp_engine_call(e, &ol->ev[i]) == RP_STEP_STATS)
			rp_report_stats_at(e, unit, ol->ev[i].result, 0);
		keep_results(res, e, i);
	}
	*wall_ns = at_now_ns() - t0;
}
