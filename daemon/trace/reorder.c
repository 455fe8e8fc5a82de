/* reorder.c: the reorder window. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "event.h"
#include "prim.h"
#include "reorder.h"

enum slot_state {
	SLOT_EMPTY = 0,
	SLOT_EVENT,          /* an ordinary record, emitted at its number */
	SLOT_REALLOC,        /* a realloc at its entry number: held from here */
	SLOT_REALLOC_RETURN, /* a realloc's return number: emitted here if still held */
	SLOT_FILLER,         /* a number accounted for elsewhere: nothing to emit */
};

struct at_reorder_slot {
	struct at_record rec;
	uint32_t state;
};

static size_t slots_bytes(const struct at_reorder *r)
{
	return r->size * sizeof(struct at_reorder_slot);
}

static size_t pending_bytes(const struct at_reorder *r)
{
	return r->max_pending * sizeof(*r->pending) + 1;
}

int at_reorder_init(struct at_reorder *r, unsigned window_log2, unsigned max_pending,
		    at_emit_fn emit, void *arg)
{
	memset(r, 0, sizeof(*r));
	r->size = 1ull << window_log2;
	r->max_pending = max_pending;
	r->emit = emit;
	r->arg = arg;
	/* populated now: faulting the window's pages in one by one would land on the first lap of
	 * events, where a page fault costs the drain more than the records themselves */
	r->slots = at_map(slots_bytes(r), AT_MAP_POPULATE);
	if (!r->slots)
		return -1;
	r->pending = at_map(pending_bytes(r), 0);
	if (!r->pending) {
		at_unmap(r->slots, slots_bytes(r));
		r->slots = NULL;
		return -1;
	}
	return 0;
}

void at_reorder_free(struct at_reorder *r)
{
	at_unmap(r->slots, slots_bytes(r));
	at_unmap(r->pending, pending_bytes(r));
	r->slots = NULL;
	r->pending = NULL;
}

static struct at_reorder_slot *slot_of(struct at_reorder *r, uint64_t seq)
{
	return &r->slots[seq & (r->size - 1)];
}

static int allocates(const struct at_record *rec)
{
	return !at_probe_frees(rec->func) && rec->result != 0;
}

static void take_pending(struct at_reorder *r, unsigned i, struct at_record *out)
{
	*out = r->pending[i];
	r->pending[i] = r->pending[--r->npending];
}

/* Emits rec; first emits any held realloc whose old address rec allocates (same process). */
static void emit_in_order(struct at_reorder *r, const struct at_record *rec)
{
	if (allocates(rec)) {
		for (unsigned i = 0; i < r->npending;) {
			const struct at_record *p = &r->pending[i];

			if (p->pid == rec->pid && p->arg[0] == rec->result && p->arg[0] != 0) {
				struct at_record held;

				take_pending(r, i, &held);
				emit_in_order(r, &held);
				i = 0; /* the list changed */
				continue;
			}
			i++;
		}
	}
	r->emit(r->arg, rec);
	r->emitted++;
}

/* A realloc reached at its entry number: held until its return number, unless it stayed in
 * place (then nothing can race with it) or there is no room to hold it. */
static void hold_realloc(struct at_reorder *r, const struct at_record *rec)
{
	if ((rec->result == rec->arg[0] && rec->arg[0] != 0) || r->npending == r->max_pending) {
		emit_in_order(r, rec);
		return;
	}
	r->pending[r->npending++] = *rec;
}

static void release_realloc(struct at_reorder *r, uint64_t seq)
{
	for (unsigned i = 0; i < r->npending; i++) {
		if (r->pending[i].seq == seq) {
			struct at_record held;

			take_pending(r, i, &held);
			emit_in_order(r, &held);
			return;
		}
	}
}

/* Calls the marks that stand before number next. */
static void emit_marks(struct at_reorder *r)
{
	unsigned done = 0;

	while (done < r->nmarks && r->marks[done] <= r->next) {
		if (r->mark)
			r->mark(r->arg);
		done++;
	}
	if (done) {
		memmove(r->marks, r->marks + done, (r->nmarks - done) * sizeof(r->marks[0]));
		r->nmarks -= done;
	}
}

void at_reorder_mark(struct at_reorder *r, uint64_t before)
{
	unsigned i = r->nmarks;

	if (r->nmarks == AT_REORDER_MARKS) {
		r->marks_dropped++;
		return;
	}
	while (i > 0 && r->marks[i - 1] > before) {
		r->marks[i] = r->marks[i - 1];
		i--;
	}
	r->marks[i] = before;
	r->nmarks++;
	emit_marks(r);
}

/* Processes the slot of number next and moves past it. */
static void step(struct at_reorder *r)
{
	struct at_reorder_slot *s = slot_of(r, r->next);

	if (r->nmarks)
		emit_marks(r);

	switch (s->state) {
	case SLOT_EMPTY:
		r->missing++;
		break;
	case SLOT_EVENT:
		emit_in_order(r, &s->rec);
		break;
	case SLOT_REALLOC:
		hold_realloc(r, &s->rec);
		break;
	case SLOT_REALLOC_RETURN:
		release_realloc(r, r->next);
		break;
	default:
		break;
	}
	s->state = SLOT_EMPTY;
	r->next++;
}

static void drain(struct at_reorder *r)
{
	while (r->next < r->end && slot_of(r, r->next)->state != SLOT_EMPTY)
		step(r);
	if (r->nmarks)
		emit_marks(r);
}

/* Moves next up to target, giving up on missing numbers on the way. */
static void advance_to(struct at_reorder *r, uint64_t target)
{
	while (r->next < target)
		step(r);
	drain(r);
}

/* Makes room in the window for number seq. */
static void make_room(struct at_reorder *r, uint64_t seq)
{
	if (seq - r->next >= r->size)
		advance_to(r, seq - r->size + 1);
}

static void put(struct at_reorder *r, uint64_t seq, uint32_t state, const struct at_record *rec)
{
	struct at_reorder_slot *s = slot_of(r, seq);

	s->state = state;
	if (rec)
		s->rec = *rec;
	if (seq >= r->end)
		r->end = seq + 1;
}

void at_reorder_push(struct at_reorder *r, const struct at_record *rec)
{
	uint64_t seq = rec->seq;

	if (seq < r->next) {
		/* given up on already; a realloc's entry number went with it */
		r->late++;
		if (rec->seq_entry != seq)
			r->double_missed++;
		return;
	}
	make_room(r, seq);
	if (rec->seq_entry != seq) {
		if (rec->seq_entry < r->next) {
			/* its entry number was counted missing: that stands for the whole call */
			r->late++;
			put(r, seq, SLOT_FILLER, NULL);
		} else {
			put(r, rec->seq_entry, SLOT_REALLOC, rec);
			put(r, seq, SLOT_REALLOC_RETURN, NULL);
		}
	} else {
		put(r, seq, SLOT_EVENT, rec);
	}
	drain(r);
}

void at_reorder_tick(struct at_reorder *r)
{
	if (r->horizon > r->next)
		advance_to(r, r->horizon);
	r->horizon = r->end;
}

void at_reorder_finish(struct at_reorder *r, uint64_t final)
{
	advance_to(r, final > r->end ? final : r->end);
	r->horizon = r->next;
	r->next = UINT64_MAX; /* every mark still waiting goes out */
	emit_marks(r);
	r->next = r->horizon;
	/* every held realloc had its return number in the window, so none is left */
	while (r->npending) {
		struct at_record held;

		take_pending(r, 0, &held);
		emit_in_order(r, &held);
	}
}
