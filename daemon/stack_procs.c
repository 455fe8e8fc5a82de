/* stack_procs.c: traced processes' executable mappings and their tables (stack_procs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void free_maps(struct at_stack_proc *p)
{
	for (uint32_t i = 0; i < p->count; i++)
		free(p->maps[i].path);
	free(p->maps);
	p->maps = NULL;
	p->count = 0;
}

void at_stack_procs_free(struct at_stack_procs *ps)
{
	for (size_t i = 0; i < ps->count; i++)
		free_maps(&ps->procs[i]);
	free(ps->procs);
	at_unwind_cache_free(&ps->cache);
	memset(ps, 0, sizeof(*ps));
}

struct at_stack_proc *at_stack_procs_find(struct at_stack_procs *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->count; i++)
		if (ps->procs[i].pid == pid)
			return &ps->procs[i];
	return NULL;
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

/* The table index of the object mapped at e in the scanned process (AT_BPF_NO_TABLE when it
 * has none), and its bias. */
static uint32_t table_of(struct scan *s, const struct at_procmaps_entry *e, int64_t *bias,
			 const struct at_unwind_table **table)
{
	char path[96];
	const char *why;
	uint32_t index;

	/* the maps file given for tests may not be a process's: then the path is the object */
	if (strncmp(s->maps_path, "/proc/", 6) == 0)
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)s->pid,
			 (unsigned long long)e->start, (unsigned long long)e->end);
	const char *open_path = strncmp(s->maps_path, "/proc/", 6) == 0 ? path : e->path;
	const struct at_unwind_table *t = at_unwind_cache_get(&s->ps->cache, open_path, &why);

	*table = t;
	if (!t || at_unwind_table_bias(t, e->start, e->offset, bias) < 0)
		return AT_BPF_NO_TABLE;
	uint32_t before = s->ps->tables->table_used;
	if (at_stack_tables_add(s->ps->tables, t, &index) < 0)
		return AT_BPF_NO_TABLE;
	if (s->ps->tables->table_used != before && s->ps->loaded)
		s->ps->loaded(s->ps->arg, e->path, t);
	return index;
}

static int take_mapping(const struct at_procmaps_entry *e, void *arg)
{
	struct scan *s = arg;
	const struct at_unwind_table *t = NULL;
	int64_t bias = 0;

	if (e->perms[2] != 'x' || e->path_truncated)
		return 0;
	if (s->out->count == AT_BPF_MAX_MAPPINGS) {
		s->ps->too_many++;
		return 0;
	}
	uint32_t table = table_of(s, e, &bias, &t);
	if (table == AT_BPF_NO_TABLE)
		s->ps->no_table++;
	struct at_bpf_mapping *m = &s->out->m[s->out->count++];
	m->start = e->start;
	m->end = e->end;
	m->bias = bias;
	m->table = table;
	m->pad = 0;

	struct at_stack_mapping *r = &s->maps[s->count];
	memset(r, 0, sizeof(*r));
	r->path = strdup(e->path);
	if (!r->path) {
		s->failed = 1;
		return 1;
	}
	r->m.pid = (uint32_t)s->pid;
	r->m.start = e->start;
	r->m.end = e->end;
	r->m.offset = e->offset;
	r->m.path = r->path;
	r->table = table == AT_BPF_NO_TABLE ? NULL : t;
	r->bias = bias;
	if (t && t->build_id_len) {
		r->m.build_id_len = t->build_id_len;
		memcpy(r->m.build_id, t->build_id, t->build_id_len);
	}
	s->count++;
	return 0;
}

/* Whether mapping a was written already in the list before the scan (same place, file and
 * offset). */
static int was_written(const struct at_stack_proc *p, const struct at_stack_mapping *a)
{
	for (uint32_t i = 0; i < p->count; i++) {
		const struct at_stack_mapping *b = &p->maps[i];
		if (b->written && b->m.start == a->m.start && b->m.end == a->m.end &&
		    b->m.offset == a->m.offset && strcmp(b->path, a->path) == 0)
			return 1;
	}
	return 0;
}

int at_stack_procs_scan(struct at_stack_procs *ps, pid_t pid, const char *maps_path,
			uint64_t now_ms, struct at_bpf_mappings *out)
{
	struct scan s = { .ps = ps, .pid = pid, .maps_path = maps_path, .out = out };

	out->count = 0;
	out->hold_after_ns = 0;
	s.maps = calloc(AT_BPF_MAX_MAPPINGS, sizeof(*s.maps));
	if (!s.maps)
		return -1;
	int rc = at_procmaps_for_each_file(maps_path, take_mapping, &s, NULL);
	if (rc < 0 || s.failed) {
		for (uint32_t i = 0; i < s.count; i++)
			free(s.maps[i].path);
		free(s.maps);
		if (rc == -2 || s.failed)
			errno = rc == -2 ? EINVAL : ENOMEM;
		return -1;
	}
	struct at_stack_proc *p = at_stack_procs_find(ps, pid);
	if (!p) {
		if (ps->count == ps->cap) {
			size_t cap = ps->cap ? ps->cap * 2 : 64;
			struct at_stack_proc *v = realloc(ps->procs, cap * sizeof(*v));
			if (!v) {
				for (uint32_t i = 0; i < s.count; i++)
					free(s.maps[i].path);
				free(s.maps);
				errno = ENOMEM;
				return -1;
			}
			ps->procs = v;
			ps->cap = cap;
		}
		p = &ps->procs[ps->count++];
		memset(p, 0, sizeof(*p));
		p->pid = pid;
	}
	for (uint32_t i = 0; i < s.count; i++)
		s.maps[i].written = was_written(p, &s.maps[i]);
	free_maps(p);
	p->maps = s.maps;
	p->count = s.count;
	p->scanned_ms = now_ms;
	return 0;
}

void at_stack_procs_unwritten(struct at_stack_procs *ps)
{
	for (size_t i = 0; i < ps->count; i++)
		for (uint32_t k = 0; k < ps->procs[i].count; k++)
			ps->procs[i].maps[k].written = 0;
}
