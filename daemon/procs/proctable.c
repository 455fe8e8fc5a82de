/* proctable.c: everything the daemon knows of a process, one slot per pid. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "atz.h"
#include "proctable.h"

#define FIRST_CAP 256u
#define FIRST_DEPARTURES 64u

/* The home slot of pid in a table of cap (a power of two) slots. */
static unsigned home_of(pid_t pid, unsigned cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

int at_proctable_init(struct at_proctable *t, int records)
{
	memset(t, 0, sizeof(*t));
	if (at_processes_init(&t->records, records) < 0)
		return -1;
	t->cap = FIRST_CAP;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	return t->slots ? 0 : -1;
}

void at_proctable_free(struct at_proctable *t)
{
	at_processes_free(&t->records);
	free(t->slots);
	free(t->departures);
	t->slots = NULL;
	t->departures = NULL;
	t->cap = t->count = t->traced = 0;
	t->first = t->ndepartures = t->cap_departures = 0;
}

int at_proctable_records(const struct at_proctable *t)
{
	return t->records.records;
}

/* The slot holding pid, or the empty slot where its run ends. */
static unsigned slot_of(const struct at_proctable *t, pid_t pid)
{
	unsigned i = home_of(pid, t->cap);

	while (t->slots[i].pid && t->slots[i].pid != pid)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static struct at_proc *find(const struct at_proctable *t, pid_t pid)
{
	if (pid <= 0 || !t->slots)
		return NULL;
	struct at_proc *p = &t->slots[slot_of(t, pid)];
	return p->pid == pid ? p : NULL;
}

const struct at_proc *at_proctable_find(const struct at_proctable *t, pid_t pid)
{
	return find(t, pid);
}

/* Doubles the slots. 0, or -1 (out of memory: the table is unchanged). */
static int grow(struct at_proctable *t)
{
	unsigned cap = t->cap * 2;
	struct at_proc *slots = calloc(cap, sizeof(*slots)), *old = t->slots;

	if (!slots)
		return -1;
	for (unsigned i = 0; i < t->cap; i++) {
		if (!old[i].pid)
			continue;
		unsigned j = home_of(old[i].pid, cap);
		while (slots[j].pid)
			j = (j + 1) & (cap - 1);
		slots[j] = old[i];
	}
	free(old);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* pid's slot, an empty one made if it has none. NULL when the table is full or out of
 * memory. */
static struct at_proc *take(struct at_proctable *t, pid_t pid)
{
	struct at_proc *p = find(t, pid);

	if (p || pid <= 0)
		return p;
	if (t->count >= AT_PROCTABLE_MAX)
		return NULL;
	if ((t->count + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	p = &t->slots[slot_of(t, pid)];
	*p = (struct at_proc){ .pid = pid };
	t->count++;
	return p;
}

/* Empties p's slot; the entries after it in its run move back when their home allows. */
static void drop(struct at_proctable *t, struct at_proc *p)
{
	unsigned mask = t->cap - 1, hole = (unsigned)(p - t->slots);

	if (p->flags & AT_PROC_TRACED)
		t->traced--;
	p->pid = 0;
	t->count--;
	for (unsigned i = (hole + 1) & mask; t->slots[i].pid; i = (i + 1) & mask) {
		unsigned home = home_of(t->slots[i].pid, t->cap);
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			t->slots[hole] = t->slots[i];
			t->slots[i].pid = 0;
			hole = i;
		}
	}
}

/* Gives p the flags it lacks of flags (parent with AT_PROC_TRACED). 1 when it lacked one. */
static int give(struct at_proctable *t, struct at_proc *p, pid_t parent, unsigned flags)
{
	unsigned added = flags & ~p->flags;

	if (added & AT_PROC_SEEN)
		t->seen++;
	if (added & AT_PROC_TRACED) {
		t->traced++;
		p->parent = parent > 0 ? parent : 0;
	}
	p->flags |= added;
	return added != 0;
}

int at_proctable_appear(struct at_proctable *t, pid_t pid, pid_t parent, unsigned flags)
{
	struct at_proc *p = take(t, pid);

	if (!p)
		return -1;
	if (p->flags & AT_PROC_DEPARTED) { /* the number of an ended process, taken again */
		uint64_t before = p->departed;
		if (p->flags & AT_PROC_TRACED)
			t->traced--;
		*p = (struct at_proc){ .pid = pid, .before = before };
	}
	return give(t, p, parent, flags & (AT_PROC_SEEN | AT_PROC_TRACED));
}

int at_proctable_event(struct at_proctable *t, pid_t pid, uint64_t seq)
{
	struct at_proc *p = find(t, pid);

	if (p && seq < p->before)
		return 0; /* the earlier process's, under the same number */
	if (!p && !(p = take(t, pid)))
		return 0;
	p->flags |= AT_PROC_WRITTEN;
	return give(t, p, 0, AT_PROC_SEEN);
}

int at_proctable_trace(struct at_proctable *t, pid_t pid, pid_t parent)
{
	struct at_proc *p = take(t, pid);

	return p ? give(t, p, parent, AT_PROC_TRACED) : -1;
}

int at_proctable_traced(const struct at_proctable *t, pid_t pid)
{
	const struct at_proc *p = find(t, pid);

	return p && (p->flags & AT_PROC_TRACED);
}

void at_proctable_untrace(struct at_proctable *t, pid_t pid)
{
	struct at_proc *p = find(t, pid);

	if (!p || !(p->flags & AT_PROC_TRACED))
		return;
	p->flags &= ~AT_PROC_TRACED;
	t->traced--;
	if (!p->flags && !p->allocator)
		drop(t, p);
}

void at_proctable_note(struct at_proctable *t, unsigned change, pid_t pid, unsigned flags,
		       uint64_t status, uint64_t time_ns, uint64_t seq)
{
	const struct at_proc *p = find(t, pid);

	if (!p || !(p->flags & AT_PROC_TRACED))
		return;
	/* parent 0: processes.c would look in its own set, which the table leaves empty */
	at_processes_note(&t->records, change, pid, p->parent, flags, status, time_ns, seq);
}

int at_proctable_exec(struct at_proctable *t, pid_t pid, unsigned flags, uint64_t seq)
{
	if (!at_proctable_traced(t, pid))
		return 0;
	at_proctable_note(t, AT_ATZ_PROCESS_EXEC, pid, flags, 0, 0, seq);
	return 1;
}

/* Queues p's departure at seq. 0, or -1 out of memory. */
static int queue_departure(struct at_proctable *t, pid_t pid, uint64_t seq)
{
	if (t->ndepartures == t->cap_departures) {
		unsigned cap = t->cap_departures ? t->cap_departures * 2 : FIRST_DEPARTURES;
		struct at_proc_departure *d = malloc(cap * sizeof(*d));
		if (!d)
			return -1;
		for (unsigned i = 0; i < t->ndepartures; i++)
			d[i] = t->departures[(t->first + i) % t->cap_departures];
		free(t->departures);
		t->departures = d;
		t->cap_departures = cap;
		t->first = 0;
	}
	unsigned last = (t->first + t->ndepartures) % t->cap_departures;
	t->departures[last] = (struct at_proc_departure){ pid, seq };
	t->ndepartures++;
	return 0;
}

/* A departed process, p, leaves the table: its slot goes, then the forget hook is told. */
static void forget_departed(struct at_proctable *t, struct at_proc *p)
{
	pid_t pid = p->pid;

	drop(t, p);
	if (t->forgotten)
		t->forgotten(t->forgotten_arg, pid);
}

int at_proctable_depart(struct at_proctable *t, pid_t pid, int status, uint64_t seq)
{
	struct at_proc *p = take(t, pid);
	int traced = p && (p->flags & AT_PROC_TRACED);

	if (!p)
		return 0;
	if (traced) {
		at_proctable_note(t, AT_ATZ_PROCESS_EXIT, pid, 0, (uint64_t)status, 0, seq);
		p->flags &= ~AT_PROC_TRACED;
		t->traced--;
	}
	p->allocator = 0;
	if (p->flags & AT_PROC_DEPARTED)
		return traced; /* its first end stands */
	p->flags |= AT_PROC_DEPARTED;
	p->departed = seq;
	if (queue_departure(t, pid, seq) < 0)
		forget_departed(t, p); /* at once: a late event of it may count it again */
	return traced;
}

void at_proctable_forget(struct at_proctable *t, uint64_t seq)
{
	while (t->ndepartures && t->departures[t->first].seq <= seq) {
		struct at_proc_departure d = t->departures[t->first];
		struct at_proc *p = find(t, d.pid);

		t->first = (t->first + 1) % t->cap_departures;
		t->ndepartures--;
		/* a process that took the number since is not the one that left */
		if (p && (p->flags & AT_PROC_DEPARTED) && p->departed == d.seq)
			forget_departed(t, p);
	}
}

void at_proctable_on_forget(struct at_proctable *t, at_proctable_forget_fn fn, void *arg)
{
	t->forgotten = fn;
	t->forgotten_arg = arg;
}

int at_proctable_set_allocator(struct at_proctable *t, pid_t pid, uint64_t allocators)
{
	struct at_proc *p = take(t, pid);

	if (!p)
		return -1;
	p->allocator = allocators;
	return 0;
}

uint64_t at_proctable_allocator(const struct at_proctable *t, pid_t pid)
{
	const struct at_proc *p = find(t, pid);

	return p ? p->allocator : 0;
}

void at_proctable_each(const struct at_proctable *t, unsigned mask,
		       void (*fn)(void *arg, pid_t pid), void *arg)
{
	for (unsigned i = 0; t->slots && i < t->cap; i++)
		if (t->slots[i].pid && (t->slots[i].flags & mask) == mask)
			fn(arg, t->slots[i].pid);
}

void at_proctable_flush(struct at_proctable *t, struct at_sink *s, uint64_t seq)
{
	at_processes_flush(&t->records, s, seq);
}
