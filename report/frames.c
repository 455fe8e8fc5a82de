/* frames.c: frames, locations and mappings, each interned once by its content (frames.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"

int rep_frames_init(struct rep_frames *t)
{
	memset(t, 0, sizeof(*t));
	t->frame_keys = rep_folded_new();
	t->location_keys = rep_folded_new();
	t->mapping_keys = rep_folded_new();
	if (!t->frame_keys || !t->location_keys || !t->mapping_keys) {
		rep_frames_free(t);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void rep_frames_free(struct rep_frames *t)
{
	rep_folded_free(t->frame_keys);
	rep_folded_free(t->location_keys);
	rep_folded_free(t->mapping_keys);
	free(t->frames);
	for (size_t i = 0; i < t->nlocations; i++) {
		free(t->locations[i].text[0]);
		free(t->locations[i].text[1]);
	}
	free(t->locations);
	free(t->lines);
	free(t->mappings);
	memset(t, 0, sizeof(*t));
}

/* Room for one more element of size each in *a (n used, *cap allocated): 0, or -1. */
static int room(void *a, size_t n, size_t *cap, size_t each)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 64;
	void *p = realloc(*(void **)a, c * each);
	if (!p)
		return -1;
	*(void **)a = p;
	*cap = c;
	return 0;
}

/* The entry of key[0..n) in keys; *is_new 1 when it was not there before. -1 on ENOMEM. */
static int64_t intern(struct rep_folded *keys, const void *key, size_t n, size_t count,
		      int *is_new)
{
	int64_t e = rep_folded_intern(keys, key, n);

	*is_new = e >= 0 && (size_t)e == count;
	return e;
}

/* Appends s and its NUL (nothing but the NUL for NULL... as "\1" so NULL and "" differ). */
static size_t put_text(char *key, size_t n, const char *s)
{
	if (!s) {
		key[n++] = 1;
	} else {
		size_t len = strlen(s);
		memcpy(key + n, s, len);
		n += len;
	}
	key[n++] = 0;
	return n;
}

static size_t text_size(const char *s)
{
	return (s ? strlen(s) : 1) + 1;
}

/* The id of frame f, interned by its content: -1 on ENOMEM. */
static int64_t frame_id(struct rep_frames *t, const struct at_frame *f, unsigned kind)
{
	struct rep_frame r = { .function = f->function, .file = f->file, .line = f->line,
			       .decl_line = f->decl_line, .inlined = (uint8_t)!!f->inlined,
			       .kind = (uint8_t)kind, .object = f->object,
			       .object_address = f->function ? 0 : f->object_address };
	size_t size = 32 + text_size(r.function) + text_size(r.file) + text_size(r.object), n;
	char *key = malloc(size);
	int is_new;

	if (!key)
		return -1;
	n = put_text(key, 0, r.function);
	n = put_text(key, n, r.file);
	n = put_text(key, n, r.object);
	memcpy(key + n, &r.line, 4);
	memcpy(key + n + 4, &r.decl_line, 4);
	memcpy(key + n + 8, &r.object_address, 8);
	key[n + 16] = (char)r.inlined;
	key[n + 17] = (char)r.kind;
	n += 18;
	if (room(&t->frames, t->nframes, &t->frames_cap, sizeof(*t->frames)) < 0) {
		free(key);
		return -1;
	}
	int64_t e = intern(t->frame_keys, key, n, t->nframes, &is_new);
	free(key);
	if (is_new)
		t->frames[t->nframes++] = r;
	return e;
}

/* The id of mapping m, interned: -1 on ENOMEM. */
static int64_t mapping_id(struct rep_frames *t, const struct at_mapping *m)
{
	char key[64];
	int is_new;

	memset(key, 0, sizeof(key));
	memcpy(key, &m->pid, 4);
	memcpy(key + 8, &m->start, 8);
	memcpy(key + 16, &m->end, 8);
	memcpy(key + 24, &m->offset, 8);
	memcpy(key + 32, &m->path, sizeof(m->path)); /* the object's, one per path and build-id */
	if (room(&t->mappings, t->nmappings, &t->mappings_cap, sizeof(*t->mappings)) < 0)
		return -1;
	int64_t e = intern(t->mapping_keys, key, 32 + sizeof(m->path), t->nmappings, &is_new);
	if (is_new)
		t->mappings[t->nmappings++] = *m;
	return e;
}

/* Appends word w to buf[*n..size): ';' first unless at the start, then w with ';' and
 * control bytes as '_' (they would break a folded line), cut at size. */
static void append_word(char *buf, size_t size, size_t *n, const char *w)
{
	size_t k = *n;

	if (k && k < size)
		buf[k++] = ';';
	for (; *w && k < size; w++)
		buf[k++] = (*w == ';' || (unsigned char)*w < 0x20 || *w == 0x7f) ? '_' : *w;
	*n = k;
}

/* Location l's two texts from its frames: 0, or -1 on ENOMEM. */
static int make_texts(const struct rep_frames *t, struct rep_location *l)
{
	size_t size = (size_t)l->count * (REP_FRAME_WORD_MAX + 1) + 1;
	char word[REP_FRAME_WORD_MAX];

	for (int located = 0; located < 2; located++) {
		size_t n = 0;
		char *text = malloc(size);
		if (!text)
			return -1;
		for (uint32_t i = l->count; i-- > 0;) {
			rep_frame_word(&t->frames[t->lines[l->first + i]], located, word, sizeof(word));
			append_word(text, size, &n, word);
		}
		char *fit = realloc(text, n ? n : 1);
		l->text[located] = fit ? fit : text;
		l->text_len[located] = (uint32_t)n;
	}
	return 0;
}

/* Symbolizes location l (its frames into t->lines): 0, or -1 on ENOMEM. */
static int add_frames(struct rep_frames *t, struct at_symbolizer *z, struct rep_location *l,
		      int return_address)
{
	struct at_frame frames[AT_SYMBOLIZE_MAX_INLINE];
	int count = at_symbolize_frame(z, l->pid, l->kind, l->value, return_address, frames,
				       AT_SYMBOLIZE_MAX_INLINE);

	l->first = (uint32_t)t->nlines;
	for (int i = 0; i < count; i++) {
		int64_t id = frame_id(t, &frames[i], l->kind);
		if (id < 0 || room(&t->lines, t->nlines, &t->lines_cap, sizeof(*t->lines)) < 0)
			return -1;
		t->lines[t->nlines++] = (uint32_t)id;
	}
	l->count = (uint32_t)count;
	return make_texts(t, l);
}

int64_t rep_frames_locate(struct rep_frames *t, struct at_symbolizer *z, uint32_t pid,
			  unsigned kind, uint64_t value, int return_address)
{
	struct rep_location l = { .pid = pid, .kind = (uint8_t)kind, .value = value };
	struct at_mapping m;
	char key[24];
	int is_new;
	/* a frame named by NAMES records: the name it has now is part of its location, as the
	 * mapping is for a native frame (a later record may name its value anew: another code
	 * object at the same address) */
	uint32_t named = kind == AT_FRAME_NATIVE ? 0 : at_symbolizer_name_serial(z, pid, kind, value);

	if (kind == AT_FRAME_NATIVE && at_symbolizer_mapping(z, pid, value, &m)) {
		int64_t id = mapping_id(t, &m);
		if (id < 0)
			goto nomem;
		l.mapping = (uint32_t)id + 1;
	}
	memcpy(key, &pid, 4);
	memcpy(key + 4, &l.mapping, 4);
	memcpy(key + 8, &value, 8);
	key[16] = (char)kind;
	key[17] = (char)!!return_address;
	memcpy(key + 18, &named, 4);
	if (room(&t->locations, t->nlocations, &t->locations_cap, sizeof(*t->locations)) < 0)
		goto nomem;
	int64_t e = intern(t->location_keys, key, 22, t->nlocations, &is_new);
	if (e < 0)
		goto nomem;
	if (!is_new)
		return e;
	if (add_frames(t, z, &l, return_address) < 0) {
		free(l.text[0]);
		free(l.text[1]);
		goto nomem; /* the key stays without a record: the next lookup finds it again */
	}
	t->locations[t->nlocations++] = l;
	return e;
nomem:
	errno = ENOMEM;
	return -1;
}

const char *rep_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int rep_frame_word(const struct rep_frame *f, int located, char *buf, size_t size)
{
	if (f->function && located && f->file && f->line)
		return snprintf(buf, size, "%s (%s:%" PRIu32 ")", f->function,
				rep_base_name(f->file), f->line);
	if (f->function)
		return snprintf(buf, size, "%s", f->function);
	if (f->object)
		return snprintf(buf, size, "%s+0x%" PRIx64, f->object, f->object_address);
	return snprintf(buf, size, "[unknown]");
}
