/* pprof.c: a pass as gzip'd profile.proto (pprof.h). Field numbers are profile.proto's. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sites.h"
#include "finish.h"
#include "folded.h"
#include "pprof.h"
#include "stacks.h"

/* A growing byte buffer; a failed growth is remembered in err. */
struct buf {
	unsigned char *p;
	size_t len, cap;
	int err;
};

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *q = realloc(b->p, cap);
		if (!q) {
			b->err = ENOMEM;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_varint(struct buf *b, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	put_bytes(b, tmp, n);
}

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* A varint field; zero values are left out, as proto3 does. */
static void put_uint(struct buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	put_varint(b, v);
}

/* A length-delimited field: a string, a packed list or a message. */
static void put_len(struct buf *b, unsigned field, const void *p, size_t n)
{
	put_varint(b, (uint64_t)field << 3 | WIRE_LEN);
	put_varint(b, n);
	put_bytes(b, p, n);
}

/* A sub-message: written into m (emptied first by the caller), then moved into b. */
static void put_message(struct buf *b, unsigned field, struct buf *m)
{
	if (m->err)
		b->err = m->err;
	put_len(b, field, m->p, m->len);
	m->len = 0;
}

/* What the profile names: strings and functions, each interned once; the locations of the
 * frames table (report/frames.h) that samples use; and one location of its own for each
 * allocation function and each marker of a cut stack, which have no address. */
struct tables {
	struct rep_folded *strings;   /* entry i: string i; entry 0 is "" */
	struct rep_folded *functions; /* entry i: function i + 1, keyed by its name, file, line */
	int64_t *function_name;       /* by function entry: its name's and its file's strings */
	int64_t *function_file;
	uint32_t *function_start;     /* and its start line */
	size_t nfunctions, cap;
	const struct rep_frames *frames;
	uint8_t *used;                /* by frames location: 1 when a sample holds it */
	uint64_t extra;               /* the first id after the frames table's locations */
};

/* The leaves and markers that are not frames of the table, after its locations' ids. */
enum { EXTRA_INCOMPLETE = AT_FUNC_COUNT, EXTRA_TRUNCATED, EXTRA_COUNT };

static const char *extra_name(unsigned e)
{
	return e < AT_FUNC_COUNT ? at_func_name[e]
				 : e == EXTRA_INCOMPLETE ? "[incomplete]" : "[truncated]";
}

static int64_t string_index(struct tables *t, const char *s, size_t n)
{
	return rep_folded_intern(t->strings, s, n);
}

static int64_t cstring_index(struct tables *t, const char *s)
{
	return s ? string_index(t, s, strlen(s)) : 0;
}

/* Room for one more function: 0, or -1. */
static int function_room(struct tables *t)
{
	if (t->nfunctions < t->cap)
		return 0;
	size_t cap = t->cap ? 2 * t->cap : 256;
	int64_t *n = realloc(t->function_name, cap * sizeof(*n));
	if (n)
		t->function_name = n;
	int64_t *f = realloc(t->function_file, cap * sizeof(*f));
	if (f)
		t->function_file = f;
	uint32_t *l = realloc(t->function_start, cap * sizeof(*l));
	if (l)
		t->function_start = l;
	if (!n || !f || !l)
		return -1;
	t->cap = cap;
	return 0;
}

/* The id of the function named name, in file (NULL: unknown) from line start: 0 on ENOMEM. */
static uint64_t function_id(struct tables *t, const char *name, const char *file,
			    uint32_t start)
{
	char key[8192];
	int n = snprintf(key, sizeof(key), "%s%c%s%c%" PRIu32, name, 0, file ? file : "", 0,
			 start);

	if (n < 0 || function_room(t) < 0)
		return 0;
	int64_t e = rep_folded_intern(t->functions, key, (size_t)n < sizeof(key) ? (size_t)n
										  : sizeof(key) - 1);
	if (e < 0)
		return 0;
	if ((size_t)e == t->nfunctions) {
		int64_t name_at = cstring_index(t, name), file_at = cstring_index(t, file);
		if (name_at < 0 || file_at < 0)
			return 0;
		t->function_name[e] = name_at;
		t->function_file[e] = file_at;
		t->function_start[e] = start;
		t->nfunctions++;
	}
	return (uint64_t)e + 1;
}

/* One sample: the site's locations leaf first, its four values, its pid label. */
static void put_sample(struct buf *out, struct buf *m, struct buf *list, struct tables *t,
		       const struct rep_sites *x, const struct rep_site *s,
		       enum rep_moment_kind at, int64_t pid_key, unsigned func)
{
	size_t n = 0;
	unsigned flags = 0;
	const uint32_t *locs = s->stack ? rep_stacks_locations(x->stacks, s->stack, &n, &flags)
					: NULL;

	list->len = 0;
	put_varint(list, t->extra + func);
	for (size_t i = n; i-- > 0;) {
		t->used[locs[i]] = 1;
		put_varint(list, (uint64_t)locs[i] + 1);
	}
	if (flags & AT_STACK_TRUNCATED)
		put_varint(list, t->extra + EXTRA_TRUNCATED);
	if (flags & AT_STACK_INCOMPLETE)
		put_varint(list, t->extra + EXTRA_INCOMPLETE);
	put_len(m, 1, list->p, list->len);
	list->len = 0;
	put_varint(list, s->allocs);
	put_varint(list, s->alloc_bytes);
	put_varint(list, at == REP_AT_PEAK ? s->peak_blocks : s->live_blocks);
	put_varint(list, at == REP_AT_PEAK ? s->peak_bytes : s->live_bytes);
	put_len(m, 2, list->p, list->len);
	list->len = 0;
	put_uint(list, 1, (uint64_t)pid_key); /* Label: key, num */
	put_uint(list, 3, s->pid);
	put_len(m, 3, list->p, list->len);
	put_message(out, 2, m);
}

/* A ValueType message: type and unit, string indexes. */
static void put_value_type(struct buf *out, struct buf *m, unsigned field, struct tables *t,
			   const char *type, const char *unit)
{
	put_uint(m, 1, (uint64_t)string_index(t, type, strlen(type)));
	put_uint(m, 2, (uint64_t)string_index(t, unit, strlen(unit)));
	put_message(out, field, m);
}

/* What the used locations of mapping id (1-based) have: bit 0 every one a function name, bit
 * 1 every frame a file, bit 2 every frame a line. */
static unsigned mapping_has(const struct tables *t, uint32_t id)
{
	const struct rep_frames *f = t->frames;
	unsigned has = 7;

	for (size_t i = 0; i < f->nlocations; i++) {
		const struct rep_location *l = rep_frames_location(f, (uint32_t)i);
		if (!t->used[i] || l->mapping != id)
			continue;
		for (uint32_t k = 0; k < l->count; k++) {
			const struct rep_frame *fr = rep_frames_line(f, l, k);
			has &= (fr->function ? 1u : 0) | (fr->file ? 2u : 0) | (fr->line ? 4u : 0);
		}
	}
	return has;
}

/* The mappings of the frames table: each process's, as its mapping records give them. */
static void put_mappings(struct buf *out, struct buf *m, struct tables *t)
{
	static const char hex[] = "0123456789abcdef";
	const struct rep_frames *f = t->frames;

	for (size_t i = 0; i < f->nmappings; i++) {
		const struct at_mapping *o = &f->mappings[i];
		char id[2 * AT_BUILD_ID_MAX];
		unsigned has = mapping_has(t, (uint32_t)i + 1);
		for (unsigned k = 0; k < o->build_id_len; k++) {
			id[2 * k] = hex[o->build_id[k] >> 4];
			id[2 * k + 1] = hex[o->build_id[k] & 15];
		}
		put_uint(m, 1, i + 1);
		put_uint(m, 2, o->start);
		put_uint(m, 3, o->end);
		put_uint(m, 4, o->offset);
		put_uint(m, 5, (uint64_t)cstring_index(t, o->path));
		put_uint(m, 6, (uint64_t)string_index(t, id, 2u * o->build_id_len));
		put_uint(m, 7, has & 1);        /* has_functions */
		put_uint(m, 8, has >> 1 & 1);   /* has_filenames */
		put_uint(m, 9, has >> 2 & 1);   /* has_line_numbers */
		put_uint(m, 10, 1);             /* has_inline_frames */
		put_message(out, 3, m);
	}
}

/* A Line: its function and line (0: unknown). */
static void put_line(struct buf *m, struct buf *line, uint64_t function, uint32_t lineno)
{
	put_uint(line, 1, function);
	put_uint(line, 2, lineno);
	put_message(m, 4, line);
}

/* The locations samples hold: the frames table's, each with its lines innermost first (an
 * unnamed frame has none: its address and mapping say where it is), then the leaves and
 * markers. */
static void put_locations(struct buf *out, struct buf *m, struct buf *line, struct tables *t)
{
	const struct rep_frames *f = t->frames;

	for (size_t i = 0; i < f->nlocations; i++) {
		const struct rep_location *l = rep_frames_location(f, (uint32_t)i);
		if (!t->used[i])
			continue;
		put_uint(m, 1, i + 1);
		put_uint(m, 2, l->mapping);
		put_uint(m, 3, l->value);
		for (uint32_t k = 0; k < l->count; k++) {
			const struct rep_frame *fr = rep_frames_line(f, l, k);
			char word[512];
			if (!fr->function && l->mapping)
				continue;
			rep_frame_word(fr, 0, word, sizeof(word));
			uint64_t fn = function_id(t, word, fr->file, fr->decl_line);
			if (!fn)
				out->err = ENOMEM;
			put_line(m, line, fn, fr->line);
		}
		put_message(out, 4, m);
	}
	for (unsigned e = 0; e < EXTRA_COUNT; e++) {
		uint64_t fn = function_id(t, extra_name(e), NULL, 0);
		if (!fn)
			out->err = ENOMEM;
		put_uint(m, 1, t->extra + e);
		put_line(m, line, fn, 0);
		put_message(out, 4, m);
	}
}

static void put_functions(struct buf *out, struct buf *m, const struct tables *t)
{
	for (size_t i = 0; i < t->nfunctions; i++) {
		put_uint(m, 1, i + 1);
		put_uint(m, 2, (uint64_t)t->function_name[i]);
		put_uint(m, 3, (uint64_t)t->function_name[i]);
		put_uint(m, 4, (uint64_t)t->function_file[i]);
		put_uint(m, 5, t->function_start[i]);
		put_message(out, 5, m);
	}
}

/* The string table, in index order. */
static void put_strings(struct buf *out, const struct tables *t)
{
	for (size_t i = 0; i < rep_folded_count(t->strings); i++) {
		size_t n;
		const char *s = rep_folded_text(t->strings, (int64_t)i, &n);
		put_len(out, 6, s, n);
	}
}

/* Compresses b as one gzip stream into out. 0, or -1 with errno. */
static int write_gzip(FILE *out, const struct buf *b)
{
	unsigned char chunk[65536];
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	z.next_in = b->p;
	z.avail_in = (uInt)b->len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		rc = deflate(&z, Z_FINISH);
		size_t n = sizeof(chunk) - z.avail_out;
		if (n && fwrite(chunk, 1, n, out) != n) {
			deflateEnd(&z);
			return -1;
		}
	} while (rc == Z_OK);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		errno = EIO;
		return -1;
	}
	return rep_finish_output(out);
}

int rep_write_pprof(FILE *out, const struct rep_heap *h, struct rep_sites *x,
		    enum rep_moment_kind at)
{
	struct buf b = { 0 }, m = { 0 }, sub = { 0 };
	struct tables t = { .strings = rep_folded_new(), .functions = rep_folded_new(),
			    .frames = &x->frames, .extra = x->frames.nlocations + 1 };
	const struct rep_site *sites;
	size_t n = rep_heap_sites(h, &sites);
	int rc = -1;

	t.used = calloc(x->frames.nlocations + 1, 1);
	if (!t.strings || !t.functions || !t.used || string_index(&t, "", 0) != 0) {
		errno = ENOMEM;
		goto cleanup;
	}
	int64_t pid_key = string_index(&t, "pid", 3);
	put_value_type(&b, &m, 1, &t, "alloc_objects", "count");
	put_value_type(&b, &m, 1, &t, "alloc_space", "bytes");
	put_value_type(&b, &m, 1, &t, "inuse_objects", "count");
	put_value_type(&b, &m, 1, &t, "inuse_space", "bytes");
	for (size_t i = 0; i < n; i++)
		put_sample(&b, &m, &sub, &t, x, &sites[i], at, pid_key,
			   x->origins[sites[i].key].func);
	put_mappings(&b, &m, &t);
	put_locations(&b, &m, &sub, &t);
	put_functions(&b, &m, &t);
	put_value_type(&b, &m, 11, &t, "space", "bytes");
	put_uint(&b, 12, 1); /* period: every allocation */
	put_uint(&b, 14, (uint64_t)string_index(&t, "inuse_space", 11));
	if (rep_heap_sample_bytes(h)) { /* a comment: the values are already scaled */
		char note[256];
		int len = snprintf(note, sizeof(note), "estimated from a sample of the allocations, "
				   "one per %llu bytes on average (alloctapd --sample-bytes): each "
				   "allocation of s bytes counted as 1/(1 - exp(-s/%llu)) allocations of s bytes",
				   (unsigned long long)rep_heap_sample_bytes(h),
				   (unsigned long long)rep_heap_sample_bytes(h));
		if (len >= (int)sizeof(note))
			len = (int)sizeof(note) - 1;
		put_uint(&b, 13, (uint64_t)string_index(&t, note, (size_t)len));
	}
	put_strings(&b, &t); /* last: every string is interned by now */
	if (b.err || m.err || sub.err || pid_key < 0) {
		errno = ENOMEM;
		goto cleanup;
	}
	rc = write_gzip(out, &b);
cleanup:
	free(b.p);
	free(m.p);
	free(sub.p);
	free(t.function_name);
	free(t.function_file);
	free(t.function_start);
	free(t.used);
	rep_folded_free(t.strings);
	rep_folded_free(t.functions);
	return rc;
}
