/* pprof.c: a pass as gzip'd profile.proto (pprof.h). Field numbers are profile.proto's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sites.h"
#include "finish.h"
#include "folded.h"
#include "pprof.h"

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

/* Strings and frame names, each interned once: the index in the string table, and the id of
 * the function (and of its location) a frame name stands for. */
struct tables {
	struct rep_folded *strings;   /* entry i: string i; entry 0 is "" */
	struct rep_folded *frames;    /* entry i: function and location i + 1 */
	int64_t *frame_name;          /* by frame entry: its name's string index */
	size_t nframe_names, cap;
};

static int64_t string_index(struct tables *t, const char *s, size_t n)
{
	return rep_folded_intern(t->strings, s, n);
}

/* The id of the function (and location) of frame name s[0..n): 0 on ENOMEM. */
static uint64_t frame_id(struct tables *t, const char *s, size_t n)
{
	int64_t e = rep_folded_intern(t->frames, s, n);
	if (e < 0)
		return 0;
	if ((size_t)e == t->nframe_names) {
		if (t->nframe_names == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 256;
			int64_t *a = realloc(t->frame_name, cap * sizeof(*a));
			if (!a)
				return 0;
			t->frame_name = a;
			t->cap = cap;
		}
		int64_t name = string_index(t, s, n);
		if (name < 0)
			return 0;
		t->frame_name[t->nframe_names++] = name;
	}
	return (uint64_t)e + 1;
}

/* One sample: the site's frames leaf first, its four values, its pid label. */
static void put_sample(struct buf *out, struct buf *m, struct buf *list, struct tables *t,
		       const struct rep_heap *h, const struct rep_site *s, enum rep_moment_kind at,
		       int64_t pid_key)
{
	size_t len;
	const char *text = rep_heap_site_text(h, s, &len);
	const char *end = text + len;

	list->len = 0;
	while (end > text) { /* frames from the leaf (the last) back to the root */
		const char *start = end;
		while (start > text && start[-1] != ';')
			start--;
		uint64_t id = frame_id(t, start, (size_t)(end - start));
		if (!id) {
			out->err = ENOMEM;
			return;
		}
		put_varint(list, id);
		end = start > text ? start - 1 : text;
	}
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

static void put_mappings(struct buf *out, struct buf *m, struct tables *t,
			 const struct rep_sites *x)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < x->nobjects; i++) {
		const struct at_mapping *o = &x->objects[i];
		char id[2 * AT_BUILD_ID_MAX];
		for (unsigned k = 0; k < o->build_id_len; k++) {
			id[2 * k] = hex[o->build_id[k] >> 4];
			id[2 * k + 1] = hex[o->build_id[k] & 15];
		}
		put_uint(m, 1, i + 1);
		put_uint(m, 2, o->start);
		put_uint(m, 3, o->end);
		put_uint(m, 4, o->offset);
		put_uint(m, 5, (uint64_t)string_index(t, o->path, strlen(o->path)));
		put_uint(m, 6, (uint64_t)string_index(t, id, 2u * o->build_id_len));
		put_uint(m, 7, 1); /* has_functions */
		put_message(out, 3, m);
	}
}

/* Locations and functions, one each per frame name, with the same ids. */
static void put_frames(struct buf *out, struct buf *m, struct buf *line, struct tables *t)
{
	for (size_t i = 0; i < t->nframe_names; i++) {
		put_uint(line, 1, i + 1); /* Line.function_id */
		put_uint(m, 1, i + 1);
		put_message(m, 4, line);
		put_message(out, 4, m);
	}
	for (size_t i = 0; i < t->nframe_names; i++) {
		put_uint(m, 1, i + 1);
		put_uint(m, 2, (uint64_t)t->frame_name[i]);
		put_uint(m, 3, (uint64_t)t->frame_name[i]);
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
	struct tables t = { rep_folded_new(), rep_folded_new(), NULL, 0, 0 };
	const struct rep_site *sites;
	size_t n = rep_heap_sites(h, &sites);
	int rc = -1;

	if (!t.strings || !t.frames || string_index(&t, "", 0) != 0) {
		errno = ENOMEM;
		goto cleanup;
	}
	int64_t pid_key = string_index(&t, "pid", 3);
	put_value_type(&b, &m, 1, &t, "alloc_objects", "count");
	put_value_type(&b, &m, 1, &t, "alloc_space", "bytes");
	put_value_type(&b, &m, 1, &t, "inuse_objects", "count");
	put_value_type(&b, &m, 1, &t, "inuse_space", "bytes");
	for (size_t i = 0; i < n; i++)
		put_sample(&b, &m, &sub, &t, h, &sites[i], at, pid_key);
	put_mappings(&b, &m, &t, x);
	put_frames(&b, &m, &sub, &t);
	put_value_type(&b, &m, 11, &t, "space", "bytes");
	put_uint(&b, 12, 1); /* period: every allocation */
	put_uint(&b, 14, (uint64_t)string_index(&t, "inuse_space", 11));
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
	free(t.frame_name);
	rep_folded_free(t.strings);
	rep_folded_free(t.frames);
	return rc;
}
