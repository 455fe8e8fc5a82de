/* pynames.c: code objects read once per process, in an open-addressing table by address. */
#include <stdlib.h>
#include <string.h>

#include "pylinetable.h"
#include "pynames.h"
#include "pysplice.h"

/* The most code objects kept per process: past it, the table is emptied and filled again. */
#define MAX_CODES (1u << 16)

/* One code object as read. */
struct code {
	uint64_t addr;              /* 0 for an empty slot */
	uint64_t header[5];         /* name, qualname, file, line table, first line: its check */
	uint32_t module;            /* the folded globals of the frame it was last named for */
	char *function, *file;
	int firstlineno;
	uint8_t *linetable;
	size_t linetable_len;
};

struct at_py_names {
	struct code *slots;
	size_t cap, used;
	uint64_t reads;
};

struct at_py_names *at_py_names_new(void)
{
	return calloc(1, sizeof(struct at_py_names));
}

/* Frees what a slot holds and empties it. */
static void drop(struct code *c)
{
	free(c->function);
	free(c->file);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

void at_py_names_free(struct at_py_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->cap; i++)
		drop(&n->slots[i]);
	free(n->slots);
	free(n);
}

uint64_t at_py_names_reads(const struct at_py_names *n)
{
	return n->reads;
}

/* The slot of addr: its own, or the empty one where it would go. */
static struct code *slot(struct at_py_names *n, uint64_t addr)
{
	size_t i = (size_t)((addr >> 4) * 0x9E3779B97F4A7C15ull) & (n->cap - 1);

	while (n->slots[i].addr && n->slots[i].addr != addr)
		i = (i + 1) & (n->cap - 1);
	return &n->slots[i];
}

/* Makes room for one more: doubles the table at 3/4 full, empties it at MAX_CODES. 0 or -1. */
static int room(struct at_py_names *n)
{
	struct code *old = n->slots;
	size_t cap = n->cap;

	if (n->used + 1 <= n->cap / 4 * 3)
		return 0;
	if (n->cap >= MAX_CODES) {
		for (size_t i = 0; i < n->cap; i++)
			drop(&n->slots[i]);
		n->used = 0;
		return 0;
	}
	n->cap = cap ? cap * 2 : 64;
	n->slots = calloc(n->cap, sizeof(*n->slots));
	if (!n->slots) {
		n->slots = old;
		n->cap = cap;
		return -1;
	}
	for (size_t i = 0; i < cap; i++)
		if (old[i].addr)
			*slot(n, old[i].addr) = old[i];
	free(old);
	return 0;
}

static int read_header(const struct at_py_proc *p, uint64_t addr, uint64_t *h);

/* Reads code object addr into c (empty): 0 or -1. The object is read field by field while the
 * process runs: its header read again after, the same, says that no other object took its
 * place meanwhile (a name of one object and a file of another). */
static int read_code(const struct at_py_proc *p, uint64_t addr, const uint64_t *header,
		     struct code *c)
{
	struct at_py_code *pc = malloc(sizeof(*pc));
	int rc = -1;

	if (!pc)
		return -1;
	uint64_t again[5];

	if (at_py_code_read(p, addr, pc) == 0 && read_header(p, addr, again) == 0 &&
	    memcmp(again, header, sizeof(again)) == 0) {
		c->function = strdup(pc->qualname);
		c->file = strdup(pc->file);
		if (c->function && c->file) {
			c->addr = addr;
			memcpy(c->header, header, sizeof(c->header));
			c->firstlineno = pc->firstlineno;
			c->linetable = pc->linetable;
			c->linetable_len = pc->linetable_len;
			pc->linetable = NULL;
			rc = 0;
		}
	}
	free(pc->linetable);
	free(pc);
	if (rc != 0)
		drop(c);
	return rc;
}

/* The header of code object addr, as compared: 0 or -1. Its fields lie within a few words of
 * each other in every version: one read of the span holding them, or one read each. */
static int read_header(const struct at_py_proc *p, uint64_t addr, uint64_t *h)
{
	const struct at_py_offsets *o = &p->off;
	const uint32_t at[5] = { o->code_name, o->code_qualname, o->code_filename,
				 o->code_linetable, o->code_firstlineno };
	uint8_t span[160];
	uint32_t lo = at[0], hi = at[0];
	int32_t first;

	for (int i = 1; i < 5; i++) {
		lo = at[i] < lo ? at[i] : lo;
		hi = at[i] > hi ? at[i] : hi;
	}
	if (hi + 8 - lo <= sizeof(span)) {
		if (at_py_read(p, addr + lo, span, hi + 8 - lo))
			return -1;
		for (int i = 0; i < 4; i++)
			memcpy(&h[i], span + (at[i] - lo), 8);
		memcpy(&first, span + (at[4] - lo), sizeof(first));
	} else if (at_py_read(p, addr + o->code_name, &h[0], 8) ||
		   at_py_read(p, addr + o->code_qualname, &h[1], 8) ||
		   at_py_read(p, addr + o->code_filename, &h[2], 8) ||
		   at_py_read(p, addr + o->code_linetable, &h[3], 8) ||
		   at_py_read(p, addr + o->code_firstlineno, &first, sizeof(first))) {
		return -1;
	}
	h[4] = (uint64_t)(uint32_t)first;
	return 0;
}

int at_py_names_get(struct at_py_names *n, const struct at_py_proc *p, uint64_t v,
		    uint32_t module, struct at_py_name *out)
{
	uint64_t addr = at_py_value_code(v), header[5];
	uint32_t off = at_py_value_offset(v);
	struct code *c;
	int line;

	if (!addr || room(n) != 0)
		return -1;
	c = slot(n, addr);
	if (c->addr && module && c->module == module)
		goto named;
	if (read_header(p, addr, header) != 0)
		return -1;
	if (c->addr && memcmp(c->header, header, sizeof(header)) != 0) {
		struct code fresh = { 0 };

		/* another code object at that address: read anew; the slot is never left empty,
		 * which would cut the chains of the slots after it */
		if (read_code(p, addr, header, &fresh) != 0)
			return -1;
		drop(c);
		*c = fresh;
		n->reads++;
	} else if (!c->addr) {
		if (read_code(p, addr, header, c) != 0)
			return -1;
		n->used++;
		n->reads++;
	}
	if (module)
		c->module = module;
named:
	if (off == AT_PY_OFFSET_START)
		line = c->firstlineno;
	else if (off == AT_PY_VALUE_UNKNOWN)
		line = -1;
	else
		line = at_py_line(c->linetable, c->linetable_len, c->firstlineno, off);
	out->function = c->function;
	out->file = c->file;
	out->line = line > 0 ? line : 0;
	return 0;
}
