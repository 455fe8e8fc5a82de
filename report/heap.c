/* heap.c: live blocks, sites and processes in one pass (heap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "sample.h"
#include "u64map.h"
#include "weight.h"

/* A live block, keyed by (pid, addr); addr 0: an empty entry. */
struct block {
	uint64_t addr;
	uint64_t size;
	uint32_t pid;
	uint32_t site;
	uint64_t seq;     /* the event that allocated it */
	uint64_t time_ns; /* its time, 0: none */
	uint64_t count;   /* the blocks it stands for: 1, or a sampled trace's estimate */
};

struct rep_heap {
	struct rep_sites *x;
	struct rep_heap_options o;
	struct block *blocks;
	size_t blocks_cap, blocks_count;
	struct rep_site *sites;
	size_t nsites, sites_cap;
	struct rep_u64map site_of;    /* (proc << 40 | entry) + 1 -> site */
	struct rep_proc *procs;
	size_t nprocs, procs_cap;
	struct rep_u64map proc_index;  /* pid + 1 -> index into procs */
	uint32_t last_pid, last_proc;  /* the last process found: its pid, its index + 1 (0: none) */
	struct rep_u64map thread_last; /* (pid << 32 | tid) + 1 -> address its last event allocated */
	struct rep_u64map bucket_site; /* (bucket << 32 | site) + 1 -> bytes */
	struct rep_size_bucket buckets[REP_SIZE_BUCKETS];
	uint64_t seq;              /* events applied */
	uint64_t events;           /* selected */
	uint64_t read;             /* all */
	uint64_t first_time_ns, last_time_ns; /* of any event or record, on the trace's clock */
	int have_first_time, has_times, moment_taken, finished;
	uint64_t moment_seq;
	int rss_pending;           /* REP_AT_RSS_PEAK: a new peak, the moment at its time */
	uint64_t rss_pending_ns;
	rep_u128 rss_now, rss_peak; /* exact sums of each process's last record (heap.h) */
	uint64_t rss_peak_time_ns;
	int rss_positional;
	uint64_t live_bytes, live_blocks;
	uint64_t peak_bytes, peak_blocks, peak_time_ns; /* of every selected process together */
	rep_u128 live_exact, peak_exact; /* live_bytes and peak_bytes before saturation */
	rep_heap_tick_fn tick;
	void *tick_arg;
	rep_heap_block_fn on_block;
	void *block_arg;
	uint64_t sample_bytes;     /* a sampled trace's N (rep_heap_sampled), 0: none */
	struct rep_estimate cur;   /* the event being applied: what its allocation stands for */
};

/* Tells the block watcher, if any, that b is allocated (released 0) or released. */
static void tell(struct rep_heap *h, const struct block *b, int released)
{
	if (h->on_block) {
		struct rep_block info = { b->pid,     b->site,    b->addr, b->size,
					  b->seq,     b->time_ns, b->count };
		h->on_block(h->block_arg, &info, released);
	}
}

/* ---- live blocks ---------------------------------------------------------------------- */

static size_t block_home(const struct rep_heap *h, uint32_t pid, uint64_t addr)
{
	return rep_u64map_mix(addr ^ ((uint64_t)pid << 48)) & (h->blocks_cap - 1);
}

static int blocks_grow(struct rep_heap *h)
{
	size_t cap = h->blocks_cap ? h->blocks_cap * 2 : 4096;
	struct block *old = h->blocks, *b = calloc(cap, sizeof(*b));
	size_t old_cap = h->blocks_cap;

	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	h->blocks = b;
	h->blocks_cap = cap;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].addr)
			continue;
		size_t j = block_home(h, old[i].pid, old[i].addr);
		while (b[j].addr)
			j = (j + 1) & (cap - 1);
		b[j] = old[i];
	}
	free(old);
	return 0;
}

/* The entry of (pid, addr), or NULL. */
static struct block *block_find(struct rep_heap *h, uint32_t pid, uint64_t addr)
{
	if (!h->blocks_cap)
		return NULL;
	for (size_t i = block_home(h, pid, addr); h->blocks[i].addr; i = (i + 1) & (h->blocks_cap - 1))
		if (h->blocks[i].addr == addr && h->blocks[i].pid == pid)
			return &h->blocks[i];
	return NULL;
}

/* Removes an entry of the table, shifting the ones after it back (no tombstones). */
static void block_remove(struct rep_heap *h, struct block *b)
{
	size_t mask = h->blocks_cap - 1, hole = (size_t)(b - h->blocks);

	for (size_t j = (hole + 1) & mask; h->blocks[j].addr; j = (j + 1) & mask) {
		size_t home = block_home(h, h->blocks[j].pid, h->blocks[j].addr);
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			h->blocks[hole] = h->blocks[j];
			hole = j;
		}
	}
	h->blocks[hole].addr = 0;
	h->blocks_count--;
}

static int block_add(struct rep_heap *h, const struct at_event *ev, uint64_t size, uint64_t count,
		     uint32_t site)
{
	if (2 * (h->blocks_count + 1) > h->blocks_cap && blocks_grow(h) < 0)
		return -1;
	size_t i = block_home(h, ev->pid, ev->result);
	while (h->blocks[i].addr)
		i = (i + 1) & (h->blocks_cap - 1);
	h->blocks[i] = (struct block){ ev->result, size, ev->pid, site, h->seq, ev->time_ns, count };
	h->blocks_count++;
	tell(h, &h->blocks[i], 0);
	return 0;
}

/* ---- engine ---------------------------------------------------------------------------- */

struct rep_heap *rep_heap_new(struct rep_sites *x, const struct rep_heap_options *o)
{
	struct rep_heap *h = calloc(1, sizeof(*h));

	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->x = x;
	h->o = *o;
	return h;
}

void rep_heap_free(struct rep_heap *h)
{
	if (!h)
		return;
	free(h->blocks);
	free(h->sites);
	free(h->procs);
	rep_u64map_free(&h->proc_index);
	rep_u64map_free(&h->site_of);
	rep_u64map_free(&h->thread_last);
	rep_u64map_free(&h->bucket_site);
	free(h);
}

/* The process record of pid (added when new), its index in *index: one hash lookup, however
 * many processes the trace holds. NULL on ENOMEM. The pointer is valid until the next new
 * process. */
static struct rep_proc *proc_of(struct rep_heap *h, uint32_t pid, uint32_t *index)
{
	int is_new;

	if (h->last_proc && h->last_pid == pid) { /* runs of one process's events */
		*index = h->last_proc - 1;
		return &h->procs[*index];
	}
	uint64_t *slot = rep_u64map_slot(&h->proc_index, (uint64_t)pid + 1, &is_new);
	if (!slot)
		return NULL;
	if (!is_new) {
		*index = (uint32_t)*slot;
		h->last_pid = pid;
		h->last_proc = *index + 1;
		return &h->procs[*slot];
	}
	if (h->nprocs == h->procs_cap) {
		size_t cap = h->procs_cap ? 2 * h->procs_cap : 8;
		struct rep_proc *p = realloc(h->procs, cap * sizeof(*p));
		if (!p) {
			rep_u64map_remove(&h->proc_index, (uint64_t)pid + 1);
			errno = ENOMEM;
			return NULL;
		}
		h->procs = p;
		h->procs_cap = cap;
	}
	*slot = h->nprocs;
	*index = (uint32_t)h->nprocs;
	h->procs[h->nprocs] = (struct rep_proc){ .pid = pid };
	return &h->procs[h->nprocs++];
}

/* The site of an allocation event of process proc; -1 with errno. */
static int64_t site_of(struct rep_heap *h, const struct at_event *ev, uint32_t proc)
{
	int64_t key = rep_sites_site(h->x, ev), entry;
	int is_new;

	if (key < 0)
		return -1;
	uint64_t *slot = rep_u64map_slot(&h->site_of, ((uint64_t)proc << 40 | (uint64_t)key) + 1, &is_new);
	if (!slot)
		return -1;
	if (!is_new)
		return (int64_t)*slot;
	if (h->nsites == h->sites_cap) {
		size_t cap = h->sites_cap ? 2 * h->sites_cap : 256;
		struct rep_site *s = realloc(h->sites, cap * sizeof(*s));
		if (!s) {
			errno = ENOMEM;
			return -1;
		}
		h->sites = s;
		h->sites_cap = cap;
	}
	entry = rep_sites_folded(h->x, key);
	if (entry < 0) {
		rep_u64map_remove(&h->site_of, ((uint64_t)proc << 40 | (uint64_t)key) + 1);
		errno = ENOMEM;
		return -1;
	}
	h->sites[h->nsites] = (struct rep_site){ .pid = ev->pid, .proc = proc, .entry = entry,
						 .key = key, .stack = ev->stack };
	*slot = h->nsites;
	return (int64_t)h->nsites++;
}

/* Saves a site's values at the peak and the moment before it changes (heap.h). */
static void before_change(struct rep_heap *h, struct rep_site *s)
{
	if (s->changed <= h->procs[s->proc].peak_seq) {
		s->peak_bytes = s->live_bytes;
		s->peak_blocks = s->live_blocks;
	}
	if (h->moment_taken && s->changed <= h->moment_seq) {
		s->moment_bytes = s->live_bytes;
		s->moment_blocks = s->live_blocks;
	}
	s->changed = h->seq;
}

/* Adds (grows 1) or takes off (grows 0) size bytes and count blocks (1, or what a sampled
 * block stands for) from a site, its process and the whole trace: the exact sums, and the
 * figures they saturate to (heap.h). */
static void count_live(struct rep_heap *h, struct rep_site *s, struct rep_proc *p, uint64_t size,
		       uint64_t count, int grows)
{
	if (grows) {
		s->live_exact += size;
		p->live_exact += size;
		h->live_exact += size;
		s->live_blocks += count;
		p->live_blocks += count;
		h->live_blocks += count;
	} else {
		s->live_exact -= size;
		p->live_exact -= size;
		h->live_exact -= size;
		s->live_blocks -= count;
		p->live_blocks -= count;
		h->live_blocks -= count;
	}
	s->live_bytes = rep_sat_u64(s->live_exact);
	p->live_bytes = rep_sat_u64(p->live_exact);
	h->live_bytes = rep_sat_u64(h->live_exact);
}

static void release(struct rep_heap *h, struct rep_proc *p, struct block *b)
{
	struct rep_site *s = &h->sites[b->site];

	tell(h, b, 1);
	before_change(h, s);
	count_live(h, s, p, b->size, b->count, 0);
	s->churn_bytes = rep_sat_add(s->churn_bytes, b->size);
	s->frees += b->count;
	s->since_frees += b->count;
	block_remove(h, b);
}

unsigned rep_bucket_of(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

/* Counts an allocation of size bytes (standing for e's blocks and bytes) in its bucket. */
static int count_size(struct rep_heap *h, uint32_t site, uint64_t size,
		      const struct rep_estimate *e)
{
	struct rep_size_bucket *b = &h->buckets[rep_bucket_of(size)];
	int is_new;
	uint64_t *bytes = rep_u64map_slot(&h->bucket_site,
				   ((uint64_t)rep_bucket_of(size) << 32 | site) + 1, &is_new);

	if (!bytes)
		return -1;
	int first = b->count == 0;
	b->count = rep_sat_add(b->count, e->count);
	b->bytes = rep_sat_add(b->bytes, e->bytes);
	*bytes = rep_sat_add(*bytes, e->bytes);
	if (first || *bytes > b->top_bytes ||
	    (*bytes == b->top_bytes && site < b->top_site)) {
		b->top_bytes = *bytes;
		b->top_site = site;
	}
	return 0;
}

static int allocate(struct rep_heap *h, struct rep_proc *p, uint32_t proc, const struct at_event *ev)
{
	int64_t si = site_of(h, ev, proc);
	uint64_t asked = rep_event_weight(ev, REP_WEIGHT_ALLOC_BYTES);
	const struct rep_estimate *e = &h->cur;
	uint64_t size = e->bytes; /* the bytes it stands for: asked, unless sampled */

	if (si < 0)
		return -1;
	struct rep_site *s = &h->sites[si];
	s->allocs = rep_sat_add(s->allocs, e->count);
	s->since_allocs = rep_sat_add(s->since_allocs, e->count);
	s->alloc_bytes = rep_sat_add(s->alloc_bytes, size);
	if (h->o.sizes && count_size(h, (uint32_t)si, asked, e) < 0)
		return -1;
	if (!ev->result) {
		if (!at_func_reallocates(ev->func) || ev->arg[1] != 0)
			p->failed += e->count; /* realloc(p, 0) returning NULL freed p: not a failure */
		return 0;
	}
	struct block *old = block_find(h, ev->pid, ev->result);
	if (old)
		release(h, p, old);
	before_change(h, s);
	if (block_add(h, ev, size, e->count, (uint32_t)si) < 0)
		return -1;
	count_live(h, s, p, size, e->count, 1);
	p->ht_last = 1; /* heaptrack_print's rule: the process's last allocation */
	p->ht_last_site = (uint32_t)si;
	p->ht_last_size = size;
	if (h->live_exact > h->peak_exact) {
		h->peak_exact = h->live_exact;
		h->peak_bytes = h->live_bytes;
		h->peak_blocks = h->live_blocks;
		h->peak_time_ns = rep_heap_time_of(h, ev);
	}
	if (p->live_exact > p->peak_exact) {
		p->peak_exact = p->live_exact;
		p->peak_bytes = p->live_bytes;
		p->peak_blocks = p->live_blocks;
		p->peak_seq = h->seq;
		p->peak_time_ns = rep_heap_time_of(h, ev);
	}
	return 0;
}

/* heaptrack_print's temporary (src/analyze/accumulatedtracedata.cpp compares allocation infos,
 * (size, stack), not addresses): a live block released when the process's last allocation,
 * no release since, was of b's site and size. heaptrack records a realloc only when it returns
 * a block (then as a free and an allocation), so a realloc returning NULL is passed over. */
static void heaptrack_release(struct rep_heap *h, struct rep_proc *p, const struct at_event *ev,
			      const struct block *b)
{
	if (at_func_reallocates(ev->func) && !ev->result)
		return;
	if (p->ht_last && p->ht_last_site == b->site && p->ht_last_size == b->size) {
		h->sites[b->site].heaptrack_temps += b->count;
		p->heaptrack_temps += b->count;
	}
	p->ht_last = 0;
}

/* Releases what a free or realloc passes; 1 when it was a live block, 0 when it was not. */
static int release_pointer(struct rep_heap *h, struct rep_proc *p, const struct at_event *ev)
{
	if (!ev->arg[0])
		return 0;
	struct block *b = block_find(h, ev->pid, ev->arg[0]);
	if (!b) {
		p->unknown_frees++;
		return 0;
	}
	heaptrack_release(h, p, ev, b);
	release(h, p, b);
	return 1;
}

/* heaptrack's temporary: a free, or a realloc, that releases the block the thread's previous
 * event allocated (heaptrack sees a realloc as the free of its old block, then an allocation).
 * A failed realloc releases nothing and is no temporary. 0, or -1 (ENOMEM). */
static int note_thread(struct rep_heap *h, const struct at_event *ev)
{
	int is_new;
	uint64_t *last = rep_u64map_slot(&h->thread_last, ((uint64_t)ev->pid << 32 | ev->tid) + 1, &is_new);
	int releases = at_func_frees(ev->func) ||
		       (at_func_reallocates(ev->func) && (ev->result || !ev->arg[1]));

	if (!last)
		return -1;
	if (releases && ev->arg[0] && *last == ev->arg[0]) {
		struct block *b = block_find(h, ev->pid, ev->arg[0]);
		if (b) {
			h->sites[b->site].temps += b->count;
			h->procs[h->sites[b->site].proc].temps += b->count;
		}
	}
	*last = rep_is_allocation(ev) ? ev->result : 0;
	return 0;
}

/* What the event's allocation, if it makes one, stands for (sample.h): its bytes asked and 1
 * in a trace that is not sampled. */
static struct rep_estimate estimate(const struct rep_heap *h, const struct at_event *ev)
{
	uint64_t asked = rep_event_weight(ev, REP_WEIGHT_ALLOC_BYTES);

	return rep_sample_estimate(asked, h->sample_bytes, rep_sample_key(ev));
}

/* The calls the event stands for: 1, or in a sampled trace an allocation's estimate, a free's
 * of the block it releases. */
static uint64_t call_count(struct rep_heap *h, const struct at_event *ev)
{
	if (!h->sample_bytes)
		return 1;
	if (at_func_frees(ev->func)) {
		const struct block *b = ev->arg[0] ? block_find(h, ev->pid, ev->arg[0]) : NULL;
		return b ? b->count : 1;
	}
	return at_func_allocates(ev->func) ? h->cur.count : 1;
}

void rep_heap_sampled(struct rep_heap *h, uint64_t sample_bytes)
{
	h->sample_bytes = sample_bytes;
}

uint64_t rep_heap_sample_bytes(const struct rep_heap *h)
{
	return h->sample_bytes;
}

uint64_t rep_heap_time_of(const struct rep_heap *h, const struct at_event *ev)
{
	return ev->time_ns > h->first_time_ns ? ev->time_ns - h->first_time_ns : 0;
}

/* Whether the event is read: its process selected, its time inside the window. */
static int selected(struct rep_heap *h, const struct at_event *ev)
{
	h->read++;
	if (ev->time_ns && !h->have_first_time) { /* the trace's first event, of any process */
		h->have_first_time = 1;
		h->has_times = 1;
		h->first_time_ns = ev->time_ns;
	}
	if (ev->time_ns > h->last_time_ns)
		h->last_time_ns = ev->time_ns;
	if (h->o.have_pid && ev->pid != h->o.pid)
		return 0;
	if (!h->o.have_window)
		return 1;
	uint64_t t = rep_heap_time_of(h, ev);
	return t >= h->o.window_from_ns && t <= h->o.window_to_ns;
}

int rep_heap_event(struct rep_heap *h, const struct at_event *ev)
{
	uint32_t proc;

	if (ev->func >= AT_FUNC_COUNT || !selected(h, ev))
		return 0;
	if (h->rss_pending && (!ev->time_ns || rep_heap_time_of(h, ev) > h->rss_pending_ns)) {
		h->rss_pending = 0;
		h->moment_taken = 1; /* the values before this event, as for a time */
		h->moment_seq = h->seq;
	}
	if (h->o.moment == REP_AT_TIME && !h->moment_taken && ev->time_ns &&
	    rep_heap_time_of(h, ev) > h->o.moment_ns) {
		h->moment_taken = 1; /* the values before this event */
		h->moment_seq = h->seq;
	}
	if (h->tick)
		h->tick(h->tick_arg, h, ev);
	struct rep_proc *p = proc_of(h, ev->pid, &proc);
	if (!p)
		return -1;
	h->seq++;
	h->events++;
	p->events++;
	h->cur = estimate(h, ev);
	p->calls[ev->func] = rep_sat_add(p->calls[ev->func], call_count(h, ev));
	if (ev->time_ns) {
		uint64_t t = rep_heap_time_of(h, ev) + 1;
		if (!p->first_time_ns || t < p->first_time_ns)
			p->first_time_ns = t;
		if (t > p->last_time_ns)
			p->last_time_ns = t;
	}
	if (ev->func == AT_JEMALLOC_STATS)
		return 0;
	if (note_thread(h, ev) < 0)
		return -1;
	if (at_func_takes_pointer(ev->func)) {
		int failed_realloc = at_func_reallocates(ev->func) && !ev->result && ev->arg[1];
		if (!failed_realloc) /* a failed realloc leaves its block as it was */
			release_pointer(h, p, ev);
		if (at_func_frees(ev->func))
			return 0;
	}
	return allocate(h, p, proc, ev);
}

int rep_heap_rss(struct rep_heap *h, const struct at_rss *m)
{
	uint32_t proc;

	if (m->time_ns && !h->have_first_time && !h->rss_positional) { /* before the first event */
		h->have_first_time = 1;
		h->has_times = 1;
		h->first_time_ns = m->time_ns;
	}
	if (!h->rss_positional && m->time_ns > h->last_time_ns)
		h->last_time_ns = m->time_ns;
	if (h->o.have_pid && m->pid != h->o.pid)
		return 0;
	uint64_t t = h->rss_positional ? 0
		   : m->time_ns > h->first_time_ns ? m->time_ns - h->first_time_ns : 0;
	if (h->o.have_window && (t < h->o.window_from_ns || t > h->o.window_to_ns))
		return 0;
	struct rep_proc *p = proc_of(h, m->pid, &proc);
	if (!p)
		return -1;
	h->rss_now = h->rss_now - p->rss_bytes + m->bytes;
	p->rss_bytes = m->bytes;
	p->rss_samples++;
	if (m->bytes > p->rss_peak_bytes) {
		p->rss_peak_bytes = m->bytes;
		p->rss_peak_time_ns = t;
		p->rss_peak_events = h->read;
	}
	if (h->rss_now > h->rss_peak) {
		h->rss_peak = h->rss_now;
		h->rss_peak_time_ns = t;
		if (h->o.moment == REP_AT_RSS_PEAK && h->rss_positional) {
			h->moment_taken = 1; /* here, in the stream */
			h->moment_seq = h->seq;
		} else if (h->o.moment == REP_AT_RSS_PEAK) {
			h->rss_pending = 1;
			h->rss_pending_ns = t;
		}
	}
	return 0;
}

void rep_heap_rss_by_position(struct rep_heap *h)
{
	h->rss_positional = 1;
}

int rep_heap_rss_positional(const struct rep_heap *h)
{
	return h->rss_positional;
}

void rep_heap_rss_peak(const struct rep_heap *h, uint64_t *bytes, uint64_t *time_ns)
{
	*bytes = rep_sat_u64(h->rss_peak);
	*time_ns = h->rss_peak_time_ns;
}

uint64_t rep_heap_rss_now(const struct rep_heap *h)
{
	return rep_sat_u64(h->rss_now);
}

void rep_heap_finish(struct rep_heap *h)
{
	if (h->finished)
		return;
	h->finished = 1;
	if (h->rss_pending || (h->o.moment != REP_AT_TIME && h->o.moment != REP_AT_RSS_PEAK) ||
	    !h->moment_taken) {
		h->moment_taken = 1; /* the end, or a time past the last event */
		h->moment_seq = h->seq;
	}
	for (size_t i = 0; i < h->nsites; i++) {
		struct rep_site *s = &h->sites[i];
		uint64_t changed = s->changed;
		before_change(h, s);
		s->changed = changed;
	}
}

size_t rep_heap_sites(const struct rep_heap *h, const struct rep_site **sites)
{
	*sites = h->sites;
	return h->nsites;
}

size_t rep_heap_procs(const struct rep_heap *h, const struct rep_proc **procs)
{
	*procs = h->procs;
	return h->nprocs;
}

const struct rep_size_bucket *rep_heap_size_buckets(const struct rep_heap *h)
{
	return h->buckets;
}

uint64_t rep_heap_events(const struct rep_heap *h)
{
	return h->events;
}

uint64_t rep_heap_events_read(const struct rep_heap *h)
{
	return h->read;
}

int rep_heap_has_times(const struct rep_heap *h)
{
	return h->has_times;
}

uint64_t rep_heap_span(const struct rep_heap *h)
{
	return h->last_time_ns > h->first_time_ns ? h->last_time_ns - h->first_time_ns : 0;
}

uint64_t rep_site_weight(const struct rep_site *s, enum rep_weight w)
{
	switch (w) {
	case REP_WEIGHT_ALLOC_COUNT:
		return s->allocs;
	case REP_WEIGHT_ALLOC_BYTES:
		return s->alloc_bytes;
	case REP_WEIGHT_PEAK_BYTES:
		return s->peak_bytes;
	case REP_WEIGHT_LEAK_BYTES:
		return s->live_bytes;
	case REP_WEIGHT_TEMP_COUNT:
		return s->temps;
	case REP_WEIGHT_HEAPTRACK_TEMP_COUNT:
		return s->heaptrack_temps;
	case REP_WEIGHT_CHURN:
		return s->churn_bytes;
	case REP_WEIGHT_LIVE_BYTES:
		return s->moment_bytes;
	}
	return 0;
}

const char *rep_heap_site_text(const struct rep_heap *h, const struct rep_site *s, size_t *len)
{
	return rep_folded_text(h->x->located, s->key, len);
}

struct rep_sites *rep_heap_namer(const struct rep_heap *h)
{
	return h->x;
}

const char *rep_heap_site_folded(const struct rep_heap *h, const struct rep_site *s,
				 size_t *len)
{
	return rep_folded_text(h->x->folded, s->entry, len);
}

void rep_heap_on_event(struct rep_heap *h, rep_heap_tick_fn fn, void *arg)
{
	h->tick = fn;
	h->tick_arg = arg;
}

void rep_heap_on_block(struct rep_heap *h, rep_heap_block_fn fn, void *arg)
{
	h->on_block = fn;
	h->block_arg = arg;
}

uint64_t rep_heap_seq(const struct rep_heap *h)
{
	return h->seq;
}

void rep_heap_reset_since(struct rep_heap *h)
{
	for (size_t i = 0; i < h->nsites; i++)
		h->sites[i].since_allocs = h->sites[i].since_frees = 0;
}

void rep_heap_live(const struct rep_heap *h, uint64_t *bytes, uint64_t *blocks)
{
	*bytes = h->live_bytes;
	*blocks = h->live_blocks;
}

void rep_heap_peak(const struct rep_heap *h, uint64_t *bytes, uint64_t *blocks, uint64_t *time_ns)
{
	*bytes = h->peak_bytes;
	*blocks = h->peak_blocks;
	*time_ns = h->peak_time_ns;
}
