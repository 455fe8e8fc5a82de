/* folded.c: a string-keyed hash table (open addressing, FNV-1a) of stack texts to weights. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "finish.h"
#include "folded.h"

struct entry {
	char *text;
	size_t len;
	uint64_t hash;
	uint64_t weight;
};

struct rep_folded {
	struct entry *entries;
	size_t count, cap_entries;
	int64_t *slots; /* index into entries, -1 empty; size a power of two */
	size_t nslots;
};

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int make_slots(struct rep_folded *f, size_t nslots)
{
	int64_t *slots = malloc(nslots * sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < nslots; i++)
		slots[i] = -1;
	for (size_t e = 0; e < f->count; e++) {
		size_t i = f->entries[e].hash & (nslots - 1);

		while (slots[i] >= 0)
			i = (i + 1) & (nslots - 1);
		slots[i] = (int64_t)e;
	}
	free(f->slots);
	f->slots = slots;
	f->nslots = nslots;
	return 0;
}

struct rep_folded *rep_folded_new(void)
{
	struct rep_folded *f = calloc(1, sizeof(*f));

	if (f && make_slots(f, 256) < 0) {
		free(f);
		return NULL;
	}
	return f;
}

void rep_folded_free(struct rep_folded *f)
{
	if (!f)
		return;
	for (size_t e = 0; e < f->count; e++)
		free(f->entries[e].text);
	free(f->entries);
	free(f->slots);
	free(f);
}

int64_t rep_folded_intern(struct rep_folded *f, const char *text, size_t len)
{
	uint64_t h = fnv1a(text, len);
	size_t i = h & (f->nslots - 1);
	struct entry *e;

	for (; f->slots[i] >= 0; i = (i + 1) & (f->nslots - 1)) {
		e = &f->entries[f->slots[i]];
		if (e->hash == h && e->len == len && memcmp(e->text, text, len) == 0)
			return f->slots[i];
	}
	/* at most half full, counting the new entry */
	if (2 * (f->count + 1) > f->nslots) {
		if (make_slots(f, 2 * f->nslots) < 0)
			return -1;
		for (i = h & (f->nslots - 1); f->slots[i] >= 0; i = (i + 1) & (f->nslots - 1))
			;
	}
	if (f->count == f->cap_entries) {
		size_t cap = f->cap_entries ? 2 * f->cap_entries : 64;
		struct entry *a = realloc(f->entries, cap * sizeof(*a));

		if (!a)
			return -1;
		f->entries = a;
		f->cap_entries = cap;
	}
	e = &f->entries[f->count];
	e->text = malloc(len + 1);
	if (!e->text)
		return -1;
	memcpy(e->text, text, len);
	e->text[len] = '\0';
	e->len = len;
	e->hash = h;
	e->weight = 0;
	f->slots[i] = (int64_t)f->count;
	return (int64_t)f->count++;
}

void rep_folded_add(struct rep_folded *f, int64_t entry, uint64_t weight)
{
	struct entry *e = &f->entries[entry];

	e->weight = weight > UINT64_MAX - e->weight ? UINT64_MAX : e->weight + weight;
}

const char *rep_folded_text(const struct rep_folded *f, int64_t entry, size_t *len)
{
	*len = f->entries[entry].len;
	return f->entries[entry].text;
}

void rep_folded_set(struct rep_folded *f, int64_t entry, uint64_t weight)
{
	f->entries[entry].weight = weight;
}

size_t rep_folded_count(const struct rep_folded *f)
{
	return f->count;
}

static int by_text(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->text, y->text, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

int rep_folded_write(struct rep_folded *f, FILE *out)
{
	/* sorting moves the entries: the slots are rebuilt after; no entries may be NULL, which
	 * qsort must not get */
	if (f->count)
		qsort(f->entries, f->count, sizeof(*f->entries), by_text);
	if (make_slots(f, f->nslots) < 0)
		return -1;
	for (size_t i = 0; i < f->count; i++) {
		const struct entry *e = &f->entries[i];

		if (e->weight == 0)
			continue;
		if (fwrite(e->text, 1, e->len, out) != e->len ||
		    fprintf(out, " %" PRIu64 "\n", e->weight) < 0)
			return -1;
	}
	return rep_finish_output(out);
}
