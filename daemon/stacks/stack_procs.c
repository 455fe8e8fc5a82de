/* stack_procs.c: traced processes' executable mappings and their tables (stack_procs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "procmaps.h"
#include "stack_procs.h"

void at_stack_procs_init(struct at_stack_procs *ps, struct at_stack_tables *tables,
			 at_stack_table_loaded_fn loaded, void *arg)
{
	memset(ps, 0, sizeof(*ps));
	ps->tables = tables;
	ps->loaded = loaded;
	ps->arg = arg;
}

/* Frees the paths of count mappings at v, and v. */
static void free_list(struct at_stack_mapping *v, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		free(v[i].path);
	free(v);
}

static void free_maps(struct at_stack_proc *p)
{
	free_list(p->maps, p->count);
	free_list(p->retired, p->retired_count);
	p->maps = p->retired = NULL;
	p->count = p->retired_count = p->retired_cap = 0;
}

void at_stack_procs_free(struct at_stack_procs *ps)
{
	for (size_t i = 0; i < ps->count; i++)
		free_maps(&ps->procs[i]);
	free(ps->procs);
	at_unwind_cache_free(&ps->cache);
	free(ps->pending);
	free(ps->failed);
	memset(ps, 0, sizeof(*ps));
}

struct at_stack_proc *at_stack_procs_find(struct at_stack_procs *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->count; i++)
		if (ps->procs[i].pid == pid)
			return &ps->procs[i];
	return NULL;
}

void at_stack_procs_forget(struct at_stack_procs *ps, pid_t pid)
{
	struct at_stack_proc *p = at_stack_procs_find(ps, pid);

	if (!p)
		return;
	free_maps(p);
	*p = ps->procs[--ps->count]; /* the last entry takes its place */
}

/* What one scan collects. */
struct scan {
	struct at_stack_procs *ps;
	pid_t pid;
	const char *maps_path;
	struct at_bpf_mappings *out;
	struct at_stack_mapping *maps;
	uint32_t count;
	int failed;
};

void at_stack_procs_defer(struct at_stack_procs *ps, at_stack_table_request_fn request,
			  void *arg)
{
	ps->request = request;
	ps->request_arg = arg;
}

/* The index of the key in the count keys at v, or -1. */
static long key_in(const struct at_stack_key *v, size_t count, const uint8_t *id, uint8_t len)
{
	for (size_t i = 0; i < count; i++)
		if (v[i].len == len && memcmp(v[i].id, id, AT_UNWIND_BUILD_ID_MAX) == 0)
			return (long)i;
	return -1;
}

/* Adds the key to the list at *v. 0, or -1 (ENOMEM). */
static int key_add(struct at_stack_key **v, size_t *count, size_t *cap, const uint8_t *id,
		   uint8_t len)
{
	if (*count == *cap) {
		size_t n = *cap ? *cap * 2 : 16;
		struct at_stack_key *w = realloc(*v, n * sizeof(*w));
		if (!w)
			return -1;
		*v = w;
		*cap = n;
	}
	memcpy((*v)[*count].id, id, AT_UNWIND_BUILD_ID_MAX);
	(*v)[(*count)++].len = len;
	return 0;
}

/* The table of the object at open_path, key in r: from the cache, or built now when no builder
 * is set; else asked for (r->pending) and NULL. NULL too when it cannot be built. */
static const struct at_unwind_table *object_table(struct at_stack_procs *ps,
						  const char *open_path,
						  struct at_stack_mapping *r)
{
	const char *why;

	if (!ps->request)
		return at_unwind_cache_get(&ps->cache, open_path, &why);
	if (at_unwind_object_key(open_path, r->key, &r->key_len, &why) < 0)
		return NULL;
	const struct at_unwind_table *t = at_unwind_cache_find(&ps->cache, r->key, r->key_len);
	if (t || key_in(ps->failed, ps->failed_count, r->key, r->key_len) >= 0)
		return t;
	if (key_in(ps->pending, ps->pending_count, r->key, r->key_len) < 0) {
		if (key_add(&ps->pending, &ps->pending_count, &ps->pending_cap, r->key,
			    r->key_len) < 0)
			return NULL;
		if (ps->request(ps->request_arg, open_path, r->key, r->key_len) < 0) {
			ps->pending_count--;
			return NULL;
		}
	}
	r->pending = 1;
	return NULL;
}

/* The table index of the object mapped at e in the scanned process (AT_BPF_OPAQUE when it
 * has none yet: r->pending tells whether it will), its bias, and in r its key when known. */
static uint32_t table_of(struct scan *s, const struct at_procmaps_entry *e, int64_t *bias,
			 const struct at_unwind_table **table, struct at_stack_mapping *r)
{
	char path[96];
	uint32_t index;

	/* the maps file given for tests may not be a process's: then the path is the object */
	if (strncmp(s->maps_path, "/proc/", 6) == 0)
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)s->pid,
			 (unsigned long long)e->start, (unsigned long long)e->end);
	const char *open_path = strncmp(s->maps_path, "/proc/", 6) == 0 ? path : e->path;
	const struct at_unwind_table *t = object_table(s->ps, open_path, r);

	*table = t;
	if (!t || at_unwind_table_bias(t, e->start, e->offset, bias) < 0)
		return AT_BPF_OPAQUE;
	uint32_t before = s->ps->tables->table_used;
	if (at_stack_tables_add(s->ps->tables, t, &index) < 0)
		return AT_BPF_OPAQUE;
	if (s->ps->tables->table_used != before && s->ps->loaded)
		s->ps->loaded(s->ps->arg, e->path, t);
	return index;
}

/* Whether e is executable memory without a file (a JIT's code, the vdso): kept, opaque. */
static int is_anonymous(const struct at_procmaps_entry *e)
{
	return e->path[0] != '/' || e->inode == 0;
}

static int take_mapping(const struct at_procmaps_entry *e, void *arg)
{
	struct scan *s = arg;
	const struct at_unwind_table *t = NULL;
	int64_t bias = 0;
	int anonymous = is_anonymous(e);

	/* [vsyscall] lies above user space: no pc of a walk is there, and the BPF search, which
	 * compares by the sign of a difference, needs starts below 2^63 apart from any pc */
	if (e->perms[2] != 'x' || e->path_truncated || e->start >= at_arch_user_top)
		return 0;
	if (s->out->count == AT_BPF_MAX_MAPPINGS) {
		s->ps->too_many++;
		return 0;
	}
	struct at_stack_mapping *r = &s->maps[s->count];
	memset(r, 0, sizeof(*r));
	uint32_t table = anonymous ? AT_BPF_OPAQUE : table_of(s, e, &bias, &t, r);
	if (table == AT_BPF_OPAQUE && !anonymous && !r->pending)
		s->ps->no_table++;
	struct at_bpf_mapping *m = &s->out->m[s->out->count++];
	m->start = e->start;
	m->end = e->end;
	m->bias = bias;
	m->table = table;
	m->serial = 0; /* given when the scan is complete */
	m->inode = anonymous ? 0 : e->inode;
	m->file_delta = e->offset - e->start;
	m->valid_seq = AT_BPF_SEQ_NONE;
	m->pad = 0;
	m->vma = 0;

	r->path = strdup(e->path);
	if (!r->path) {
		s->failed = 1;
		return 1;
	}
	r->anonymous = anonymous;
	r->m.pid = (uint32_t)s->pid;
	r->m.start = e->start;
	r->m.end = e->end;
	r->m.offset = e->offset;
	r->m.path = r->path;
	r->table = table < AT_BPF_OPAQUE ? t : NULL;
	r->bias = bias;
	if (t && t->build_id_len) {
		r->m.build_id_len = t->build_id_len;
		memcpy(r->m.build_id, t->build_id, t->build_id_len);
	} else if (!t && r->key_len) { /* the same mapping before and after its table is built */
		r->m.build_id_len = r->key_len;
		memcpy(r->m.build_id, r->key, r->key_len);
	}
	s->count++;
	return 0;
}

/* Calls take_mapping for every executable mapping of the maps file at path, with a file or
 * not. 0, -1 with errno when it cannot be read, -2 on a malformed line. */
static int each_executable(const char *path, struct scan *s)
{
	char buf[AT_PROCMAPS_BUF];
	struct at_linereader r;
	struct at_procmaps_entry e;
	int rc;

	if (at_linereader_open_buffer(&r, path, buf, sizeof(buf)) < 0)
		return -1;
	while ((rc = at_procmaps_next(&r, &e)) == 1)
		if (e.perms[2] == 'x' && take_mapping(&e, s))
			break;
	int err = errno;
	at_linereader_close(&r);
	errno = err;
	return rc < 0 ? rc : 0;
}

/* Whether a and b are the same mapping: place, offset, file, object, and both with or without
 * a file. */
static int same_mapping(const struct at_stack_mapping *a, const struct at_stack_mapping *b)
{
	return a->m.start == b->m.start && a->m.end == b->m.end && a->m.offset == b->m.offset &&
	       a->anonymous == b->anonymous && a->m.build_id_len == b->m.build_id_len &&
	       memcmp(a->m.build_id, b->m.build_id, a->m.build_id_len) == 0 &&
	       strcmp(a->path, b->path) == 0;
}

/* The mapping of the count at v that is the same as a, or NULL. */
static struct at_stack_mapping *same_in(struct at_stack_mapping *v, uint32_t count,
					const struct at_stack_mapping *a)
{
	for (uint32_t i = 0; i < count; i++)
		if (same_mapping(&v[i], a))
			return &v[i];
	return NULL;
}

struct at_stack_mapping *at_stack_procs_serial(struct at_stack_proc *p, uint32_t serial)
{
	for (uint32_t i = 0; serial && i < p->count; i++)
		if (p->maps[i].serial == serial)
			return &p->maps[i];
	for (uint32_t i = 0; serial && i < p->retired_count; i++)
		if (p->retired[i].serial == serial)
			return &p->retired[i];
	return NULL;
}

uint32_t at_stack_procs_serial_at(const struct at_stack_proc *p, uint64_t pc)
{
	for (uint32_t i = 0; i < p->count; i++)
		if (pc >= p->maps[i].m.start && pc < p->maps[i].m.end)
			return p->maps[i].serial;
	return 0;
}

/* Clears written in the count mappings at v that overlap m (m itself excepted). */
static void unwrite_overlapping(struct at_stack_mapping *v, uint32_t count,
				const struct at_stack_mapping *m)
{
	for (uint32_t i = 0; i < count; i++)
		if (&v[i] != m && v[i].m.start < m->m.end && m->m.start < v[i].m.end)
			v[i].written = 0;
}

void at_stack_procs_mark_written(struct at_stack_proc *p, struct at_stack_mapping *m)
{
	unwrite_overlapping(p->maps, p->count, m);
	unwrite_overlapping(p->retired, p->retired_count, m);
	m->written = 1;
}

/* Moves p's current mapping m, which the last scan did not see, to its retired ones (its path
 * with it; freed when a retired one has its serial already). 0, or -1 (ENOMEM). */
static int retire(struct at_stack_proc *p, struct at_stack_mapping *m)
{
	for (uint32_t i = 0; i < p->retired_count; i++)
		if (p->retired[i].serial == m->serial) {
			p->retired[i].written = m->written;
			free(m->path);
			return 0;
		}
	if (p->retired_count == p->retired_cap) {
		uint32_t cap = p->retired_cap ? p->retired_cap * 2 : 16;
		struct at_stack_mapping *v = realloc(p->retired, cap * sizeof(*v));
		if (!v) {
			free(m->path);
			return -1;
		}
		p->retired = v;
		p->retired_cap = cap;
	}
	p->retired[p->retired_count] = *m;
	p->retired[p->retired_count].m.path = p->retired[p->retired_count].path;
	p->retired_count++;
	return 0;
}

/* Gives each mapping of the scan its serial (that of the same mapping known to p, current or
 * retired, else a new one) and whether it is written, in the scan and in out; then retires
 * p's current mappings the scan did not see and makes the scan's current. */
static void adopt(struct at_stack_procs *ps, struct at_stack_proc *p, struct scan *s)
{
	for (uint32_t i = 0; i < s->count; i++) {
		struct at_stack_mapping *a = &s->maps[i];
		struct at_stack_mapping *old = same_in(p->maps, p->count, a);

		if (!old)
			old = same_in(p->retired, p->retired_count, a);
		a->serial = old ? old->serial : ++ps->last_serial;
		a->written = old ? old->written : 0;
		s->out->m[i].serial = a->serial;
	}
	for (uint32_t i = 0; i < p->count; i++) {
		if (same_in(s->maps, s->count, &p->maps[i]))
			free(p->maps[i].path);
		else
			retire(p, &p->maps[i]);
	}
	free(p->maps);
	p->maps = s->maps;
	p->count = s->count;
}

/* The entry of pid in ps, made (empty) when there is none. NULL on ENOMEM. */
static struct at_stack_proc *proc_entry(struct at_stack_procs *ps, pid_t pid)
{
	struct at_stack_proc *p = at_stack_procs_find(ps, pid);

	if (p)
		return p;
	if (ps->count == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 64;
		struct at_stack_proc *v = realloc(ps->procs, cap * sizeof(*v));
		if (!v) {
			errno = ENOMEM;
			return NULL;
		}
		ps->procs = v;
		ps->cap = cap;
	}
	p = &ps->procs[ps->count++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

int at_stack_procs_scan(struct at_stack_procs *ps, pid_t pid, const char *maps_path,
			uint64_t now_ms, struct at_bpf_mappings *out)
{
	struct scan s = { .ps = ps, .pid = pid, .maps_path = maps_path, .out = out };
	struct at_stack_proc *p = proc_entry(ps, pid);

	out->count = 0;
	if (!p)
		return -1;
	p->scanned_ms = now_ms;
	s.maps = calloc(AT_BPF_MAX_MAPPINGS, sizeof(*s.maps));
	if (!s.maps)
		return -1;
	int rc = each_executable(maps_path, &s);
	if (rc < 0 || s.failed) {
		free_list(s.maps, s.count);
		if (rc == -2 || s.failed)
			errno = rc == -2 ? EINVAL : ENOMEM;
		return -1;
	}
	adopt(ps, p, &s);
	p->pending = 0;
	for (uint32_t i = 0; i < p->count; i++)
		p->pending += p->maps[i].pending != 0;
	return 0;
}

int at_stack_procs_built(struct at_stack_procs *ps, const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
			 uint8_t key_len, struct at_unwind_table *t, int gone)
{
	long i = key_in(ps->pending, ps->pending_count, key, key_len);

	if (i >= 0)
		ps->pending[i] = ps->pending[--ps->pending_count];
	if (t)
		return at_unwind_cache_put(&ps->cache, t);
	if (gone)
		return 0;
	return key_add(&ps->failed, &ps->failed_count, &ps->failed_cap, key, key_len);
}

int at_stack_procs_waits_for(const struct at_stack_proc *p,
			     const uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t key_len)
{
	for (uint32_t i = 0; i < p->count; i++)
		if (p->maps[i].pending && p->maps[i].key_len == key_len &&
		    memcmp(p->maps[i].key, key, AT_UNWIND_BUILD_ID_MAX) == 0)
			return 1;
	return 0;
}

void at_stack_procs_unwritten(struct at_stack_procs *ps)
{
	for (size_t i = 0; i < ps->count; i++) {
		for (uint32_t k = 0; k < ps->procs[i].count; k++)
			ps->procs[i].maps[k].written = 0;
		for (uint32_t k = 0; k < ps->procs[i].retired_count; k++)
			ps->procs[i].retired[k].written = 0;
	}
}
