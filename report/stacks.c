/* stacks.c: stack records to callers' text, by stack id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"

struct stack_text {
	char *text; /* NULL: no record */
	size_t len;
};

/* The text of one return address of a process (its frames, inlined ones included, ';'
 * between them), kept once symbolized: stacks share most of their addresses, and libdw's
 * lookup of a pc costs microseconds. Open addressing by (pid, pc); pid 0 marks an empty
 * entry (no process has pid 0). Emptied when a mapping record comes (it may change what an
 * address means). */
struct pc_entry {
	uint64_t pc;
	uint32_t pid;
	uint32_t len;
	size_t off; /* in the arena */
};

struct rep_stacks {
	struct stack_text *by_id; /* index: id */
	size_t cap;
	uint32_t highest;
	struct pc_entry *pcs;
	size_t pcs_cap, pcs_count;
	char *arena;
	size_t arena_len, arena_cap;
	char *scratch;            /* TEXT_MAX bytes: a stack's text being built */
};

struct rep_stacks *rep_stacks_new(void)
{
	return calloc(1, sizeof(struct rep_stacks));
}

void rep_stacks_free(struct rep_stacks *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->cap; i++)
		free(st->by_id[i].text);
	free(st->by_id);
	free(st->pcs);
	free(st->arena);
	free(st->scratch);
	free(st);
}

void rep_append_frame(char *buf, size_t size, size_t *len, const char *text)
{
	size_t n = *len;

	if (n && n < size)
		buf[n++] = ';';
	for (; *text && n < size; text++)
		buf[n++] = (*text == ';' || (unsigned char)*text < 0x20 || *text == 0x7f) ? '_'
											  : *text;
	*len = n;
}

/* The longest text kept: every frame of a full stack with some inlines, generously. */
#define TEXT_MAX (64 * 1024)
/* The longest text of one address (a frame and the functions inlined at it). */
#define PC_TEXT_MAX 8192

void rep_stacks_forget_pcs(struct rep_stacks *st)
{
	if (st->pcs)
		memset(st->pcs, 0, st->pcs_cap * sizeof(*st->pcs));
	st->pcs_count = 0;
	st->arena_len = 0;
}

static size_t pc_home(const struct rep_stacks *st, uint32_t pid, uint64_t pc)
{
	uint64_t k = (pc ^ ((uint64_t)pid << 40)) * UINT64_C(0x9e3779b97f4a7c15);
	return (size_t)(k >> 20) & (st->pcs_cap - 1);
}

static const struct pc_entry *pc_find(const struct rep_stacks *st, uint32_t pid, uint64_t pc)
{
	if (!st->pcs_cap)
		return NULL;
	for (size_t i = pc_home(st, pid, pc); st->pcs[i].pid; i = (i + 1) & (st->pcs_cap - 1))
		if (st->pcs[i].pid == pid && st->pcs[i].pc == pc)
			return &st->pcs[i];
	return NULL;
}

/* Keeps text[0..len) as the text of (pid, pc); a failure only means no caching. */
static void pc_keep(struct rep_stacks *st, uint32_t pid, uint64_t pc, const char *text, size_t len)
{
	if (2 * (st->pcs_count + 1) > st->pcs_cap) {
		size_t cap = st->pcs_cap ? 2 * st->pcs_cap : 4096;
		struct pc_entry *a = calloc(cap, sizeof(*a)), *old = st->pcs;
		if (!a)
			return;
		size_t old_cap = st->pcs_cap;
		st->pcs = a;
		st->pcs_cap = cap;
		for (size_t i = 0; i < old_cap; i++) {
			if (!old[i].pid)
				continue;
			size_t j = pc_home(st, old[i].pid, old[i].pc);
			while (a[j].pid)
				j = (j + 1) & (cap - 1);
			a[j] = old[i];
		}
		free(old);
	}
	if (st->arena_len + len > st->arena_cap) {
		size_t cap = st->arena_cap ? 2 * st->arena_cap : 65536;
		while (cap < st->arena_len + len)
			cap *= 2;
		char *a = realloc(st->arena, cap);
		if (!a)
			return;
		st->arena = a;
		st->arena_cap = cap;
	}
	memcpy(st->arena + st->arena_len, text, len);
	size_t i = pc_home(st, pid, pc);
	while (st->pcs[i].pid)
		i = (i + 1) & (st->pcs_cap - 1);
	st->pcs[i] = (struct pc_entry){ pc, pid, (uint32_t)len, st->arena_len };
	st->arena_len += len;
	st->pcs_count++;
}

/* Appends the text of return address pc of pid (symbolized, or from the cache) to
 * text[*len..TEXT_MAX), after a ';' when text is not empty. */
static void append_pc(struct rep_stacks *st, struct at_symbolizer *z, uint32_t pid, uint64_t pc,
		      char *text, size_t *len)
{
	const struct pc_entry *e = pc_find(st, pid, pc);
	char seg[PC_TEXT_MAX], word[512];
	struct at_frame frames[AT_SYMBOLIZE_MAX_INLINE];
	size_t n = 0;

	if (!e) {
		int count = at_symbolize(z, pid, pc, 1, frames, AT_SYMBOLIZE_MAX_INLINE);
		while (count-- > 0) {
			at_frame_text(&frames[count], word, sizeof(word));
			rep_append_frame(seg, sizeof(seg), &n, word);
		}
		pc_keep(st, pid, pc, seg, n);
	}
	const char *src = e ? st->arena + e->off : seg;
	size_t slen = e ? e->len : n;
	if (!slen)
		return;
	if (*len && *len < TEXT_MAX)
		text[(*len)++] = ';';
	size_t room = TEXT_MAX - *len;
	slen = slen < room ? slen : room;
	memcpy(text + *len, src, slen);
	*len += slen;
}

int rep_stacks_add(struct rep_stacks *st, struct at_symbolizer *z, const struct at_stack *s)
{
	char *text;
	size_t len = 0;

	if (s->id == 0 || s->count == 0 || s->count > AT_STACK_MAX_FRAMES ||
	    s->id > (uint64_t)st->highest + REP_STACKS_MAX_GAP) {
		errno = EINVAL;
		return -1;
	}
	if (s->id >= st->cap) {
		size_t cap = st->cap ? st->cap : 256;

		while (cap <= s->id)
			cap *= 2;
		struct stack_text *a = realloc(st->by_id, cap * sizeof(*a));
		if (!a)
			return -1;
		memset(a + st->cap, 0, (cap - st->cap) * sizeof(*a));
		st->by_id = a;
		st->cap = cap;
	}
	if (!st->scratch && !(st->scratch = malloc(TEXT_MAX)))
		return -1;
	text = st->scratch; /* built here, then copied at its length */
	if (s->flags & AT_STACK_INCOMPLETE)
		rep_append_frame(text, TEXT_MAX, &len, "[incomplete]");
	if (s->flags & AT_STACK_TRUNCATED)
		rep_append_frame(text, TEXT_MAX, &len, "[truncated]");
	for (int i = s->count - 1; i >= 1; i--)
		append_pc(st, z, s->pid, s->pcs[i], text, &len);
	text = malloc(len ? len : 1);
	if (!text)
		return -1;
	memcpy(text, st->scratch, len);
	free(st->by_id[s->id].text);
	st->by_id[s->id] = (struct stack_text){ text, len };
	if (s->id > st->highest)
		st->highest = s->id;
	return 0;
}

const char *rep_stacks_text(const struct rep_stacks *st, uint32_t id, size_t *len)
{
	if (id >= st->cap || !st->by_id[id].text)
		return NULL;
	*len = st->by_id[id].len;
	return st->by_id[id].text;
}
