/* stacks.c: alloctapd --stacks, from the maps to the stack records (stacks.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include "alloctap.h"
#include "bpf.h"
#include "display.h"
#include "prim.h"
#include "stacks.h"
#include "table_cache.h"
#include "unwind_walk.h"

#define AT_PIDFD_THREAD O_EXCL /* PIDFD_THREAD, which Debian 12's headers do not define */
#define HOLD_STACK_COPY (512u << 10) /* bytes of a held thread's stack read */

void at_stacks_configure(struct at_bpf *bpf, int on)
{
	if (!on)
		return;
	at_bpf_size_stacks(bpf, AT_STACKS_RULES, AT_STACKS_PAGES, AT_STACKS_ENTRIES, 16384,
			   AT_STACKS_STORED);
}

/* -v: a table built and loaded. */
static void table_loaded(void *arg, const char *path, const struct at_unwind_table *t)
{
	(void)arg;
	DISPLAYLEVEL(3, "%s: unwind table of %s: built in %.1f ms, %u rows, %zu bytes\n",
		     at_program_name, path, (double)t->stats.build_ns / 1e6, t->stats.rows,
		     at_unwind_table_bytes(t));
}

/* A scan's request for a table: to the builder thread. */
static int request_table(void *arg, const char *path, const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
			 uint8_t key_len)
{
	struct at_stacks *s = arg;

	return at_table_builder_request(s->builder, path, key, key_len);
}

/* The on-disk cache of tables in dir (NULL: none) into *c. 0 (*c NULL when it cannot be
 * made: a warning), or -1 after a message when the folder is unsafe. */
static int open_cache(const char *dir, uint64_t limit, struct at_table_cache **c)
{
	const char *why;

	*c = dir ? at_table_cache_open(dir, limit, &why) : NULL;
	if (*c || !dir)
		return 0;
	if (errno == EPERM) {
		at_error("unwind table cache %s: %s (--no-cache builds every table)", dir, why);
		return -1;
	}
	DISPLAYLEVEL(2, "%s: unwind table cache %s: %s: tables are built without it\n",
		     at_program_name, dir, why);
	return 0;
}

static void python_news(void *arg, pid_t pid, uint64_t hash);

int at_stacks_open(struct at_stacks *s, struct at_bpf *bpf, const char *cache_dir,
		   uint64_t cache_limit)
{
	uint32_t elements[4];
	struct at_table_cache *cache;

	memset(s, 0, sizeof(*s));
	s->bpf = bpf;
	if (!at_bpf_stacks_on(bpf))
		return 0;
	s->on = 1;
	for (int i = 0; i < 4; i++) {
		s->mem[i] = at_bpf_unwind_array(bpf, (enum at_bpf_array)i, &elements[i],
						 &s->mem_len[i]);
		if (!s->mem[i]) {
			at_error("cannot map the BPF unwind tables: %s", strerror(errno));
			return -1;
		}
	}
	s->scan = malloc(sizeof(*s->scan));
	if (!s->scan || at_stack_ids_init(&s->ids) < 0 ||
	    at_stack_tables_init(&s->tables, s->mem[0], elements[0], s->mem[1], elements[1],
				 s->mem[2], 2 * elements[2], s->mem[3], elements[3]) < 0) {
		at_error("cannot allocate the stack tables: %s", strerror(errno));
		return -1;
	}
	at_stack_procs_init(&s->procs, &s->tables, table_loaded, s);
	at_stack_store_init(&s->store);
	at_pytrace_init(&s->py);
	if (open_cache(cache_dir, cache_limit, &cache) < 0)
		return -1;
	s->builder = at_table_builder_start(cache, 0);
	if (!s->builder) {
		at_error("cannot start the unwind table builder: %s", strerror(errno));
		return -1;
	}
	at_stack_procs_defer(&s->procs, request_table, s);
	if (at_bpf_news_open(bpf, python_news, s) < 0)
		DISPLAYLEVEL(2, "%s: cannot read the ring of new Python stacks (%s): their frames "
			     "are named at their first event\n", at_program_name, strerror(errno));
	return 0;
}

void at_stacks_close(struct at_stacks *s)
{
	at_stacks_release_all(s);
	at_table_builder_stop(s->builder); /* a build in progress is abandoned, not waited for */
	free(s->held);
	for (int i = 0; i < 4; i++)
		if (s->mem[i])
			munmap(s->mem[i], s->mem_len[i]);
	if (s->on) {
		at_stack_procs_free(&s->procs);
		at_stack_tables_free(&s->tables);
		at_stack_ids_free(&s->ids);
		at_stack_store_free(&s->store);
		at_pytrace_free(&s->py);
	}
	free(s->scan);
	free(s->copy);
	free(s->no_table);
	memset(s, 0, sizeof(*s));
}

int at_stacks_scan(struct at_stacks *s, pid_t pid)
{
	char path[64];

	if (!s->on)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (at_stack_procs_scan(&s->procs, pid, path, at_now_ms(), s->scan) < 0)
		return -1;
	s->scan->hold_on_miss = (uint32_t)s->hold;
	if (at_bpf_put_mappings(s->bpf, pid, s->scan) < 0) {
		DISPLAYLEVEL(2, "%s: pid %d: cannot store its mappings for the stack walk: %s\n",
			     at_program_name, (int)pid, strerror(errno));
		return -1;
	}
	at_bpf_mappings_changed(s->bpf); /* the rule cache is stale */
	struct at_bpf_py_proc py;
	if (!s->no_python && at_pytrace_scan(&s->py, pid, &py) == 1 &&
	    at_bpf_put_python(s->bpf, pid, &py) < 0)
		DISPLAYLEVEL(2, "%s: pid %d: cannot store its interpreter for the Python walk: %s\n",
			     at_program_name, (int)pid, strerror(errno));
	DISPLAYLEVEL(4, "%s: pid %d: %u executable mappings\n", at_program_name, (int)pid,
		     s->scan->count);
	return 0;
}

void at_stacks_forget(struct at_stacks *s, pid_t pid)
{
	if (!s->on)
		return;
	/* what the daemon knows of its mappings stays until at_stacks_forgotten: its last
	 * events may still wait in the rings, and their stacks need the mapping records
	 * (a new process with the same pid retires them at its first scan); mappings_gen stays:
	 * a walk that finds no mappings reads no rule cache entry, and that scan's store bumps
	 * it */
	at_bpf_delete_mappings(s->bpf, pid);
	at_bpf_delete_python(s->bpf, pid);
}

void at_stacks_exec(struct at_stacks *s, pid_t pid)
{
	if (!s->on)
		return;
	at_bpf_delete_python(s->bpf, pid);
	at_pytrace_forget(&s->py, pid);
}

void at_stacks_forgotten(struct at_stacks *s, pid_t pid)
{
	if (!s->on)
		return;
	at_stack_procs_forget(&s->procs, pid);
	at_pytrace_forget(&s->py, pid);
}

uint64_t at_stacks_hash(uint32_t tgid, const uint64_t *pcs, const uint32_t *serials,
			const uint8_t *kinds, uint32_t count, uint32_t flags, int walked)
{
	uint64_t h;

	if (!walked)
		return at_stack_hash_key(at_stack_hash_unwalked(tgid, pcs[0]));
	h = at_stack_hash_begin(tgid);
	for (uint32_t i = 0; i < count; i++) {
		h = at_stack_hash_frame(h, pcs[i], serials[i]);
		h = at_stack_hash_kind(h, kinds ? kinds[i] : AT_FRAME_NATIVE);
	}
	return at_stack_hash_key(at_stack_hash_flags(h, flags));
}

/* The flags the BPF program gives a walk that ended so. */
static uint32_t walk_flags(enum at_unwind_end end)
{
	switch (end) {
	case AT_UNWIND_END_OF_STACK: return 0;
	case AT_UNWIND_TRUNCATED: return AT_STACK_TRUNCATED;
	case AT_UNWIND_NO_TABLE: return AT_STACK_INCOMPLETE | AT_BPF_STACK_NO_TABLE;
	default: return AT_STACK_INCOMPLETE;
	}
}

/* The process's mappings as the walk takes them: each with the index of its table in the
 * program's arrays (tables). */
static void walker_mappings(const struct at_stack_proc *p, const struct at_stack_tables *tables,
			    struct at_bpf_mappings *maps)
{
	maps->count = 0;
	for (uint32_t i = 0; i < p->count && maps->count < AT_BPF_MAX_MAPPINGS; i++) {
		struct at_bpf_mapping *m = &maps->m[maps->count++];
		m->start = p->maps[i].m.start;
		m->end = p->maps[i].m.end;
		m->bias = p->maps[i].bias;
		m->table = at_stack_tables_index(tables, p->maps[i].table);
	}
}

/* In the state at key of where, the state of thread id: its call's stack old_hash becomes
 * new_hash. */
static void restack_state(struct at_bpf *bpf, enum at_bpf_thread_store where, uint32_t key,
			  uint64_t id, uint64_t old_hash, uint64_t new_hash)
{
	struct at_thread t;

	if (at_bpf_thread_read(bpf, where, key, &t) == 0 && t.id == id && t.stack == old_hash) {
		t.stack = new_hash;
		at_bpf_thread_write(bpf, where, key, &t);
	}
}

/* The thread's call in progress, whose stack was taken as old_hash, now carries new_hash. The
 * thread is stopped. Its state is in thread_slots when the program said which slot (slot, 1 +
 * the index), else in task storage, found by a descriptor of the thread (pidfd_open with
 * PIDFD_THREAD, Linux 6.9; a thread group leader's descriptor also works without it). */
static void retarget_call(const struct at_stacks *s, pid_t tid, pid_t tgid, uint32_t slot,
			  uint64_t old_hash, uint64_t new_hash)
{
	uint64_t id = (uint64_t)(uint32_t)tgid << 32 | (uint32_t)tid;

	if (slot > 0) {
		restack_state(s->bpf, AT_BPF_THREAD_SLOT, slot - 1, id, old_hash, new_hash);
		return;
	}
	int fd = (int)syscall(SYS_pidfd_open, tid, AT_PIDFD_THREAD);

	if (fd < 0)
		fd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (fd < 0)
		return;
	restack_state(s->bpf, AT_BPF_THREAD_TASK, (uint32_t)fd, id, old_hash, new_hash);
	close(fd);
}

/* Fills raw's serials from p's current mappings, as the BPF walk would (the pc less 1 for a
 * return address), and returns the flags it would give a walk that ended so: one that stopped
 * in opaque code (a mapping without a file) asks for no rescan. */
static uint32_t frame_serials(const struct at_stack_proc *p, struct at_bpf_stack *raw,
			      enum at_unwind_end end)
{
	uint32_t flags = walk_flags(end);

	for (uint32_t i = 0; i < raw->count; i++)
		raw->serials[i] = at_stack_procs_serial_at(p, i == 0 ? raw->pcs[i] : raw->pcs[i] - 1);
	if ((flags & AT_BPF_STACK_NO_TABLE) && raw->count > 0) {
		uint64_t pc = raw->pcs[raw->count - 1] - (raw->count > 1);

		for (uint32_t i = 0; i < p->count; i++)
			if (pc >= p->maps[i].m.start && pc < p->maps[i].m.end && !p->maps[i].table)
				flags = AT_STACK_INCOMPLETE;
	}
	return flags;
}

/* Walks the stack of held thread tid of tgid from h's registers with the BPF program's walk
 * (unwind_walk.h), over what the daemon knows of tgid's mappings now, stores it under its hash
 * and points the thread's call at it. */
static void walk_held(struct at_stacks *s, pid_t tid, pid_t tgid, const struct at_bpf_held *h)
{
	static struct at_bpf_mappings maps;
	static struct at_unwind_result r;
	static struct at_bpf_stack raw;

	if (!s->copy && !(s->copy = malloc(HOLD_STACK_COPY)))
		return;
	struct at_stack_proc *p = at_stack_procs_find(&s->procs, tgid);
	struct iovec local = { s->copy, HOLD_STACK_COPY }, remote = { (void *)h->sp, HOLD_STACK_COPY };
	ssize_t got = process_vm_readv(tgid, &local, 1, &remote, 1, 0);
	if (!p || got < (ssize_t)AT_ARCH_ENTRY_RA_AT(0) + 8)
		return;
	/* the return probe has replaced it on the stack since */
	memcpy(s->copy + AT_ARCH_ENTRY_RA_AT(0), &h->ra, 8);
	walker_mappings(p, &s->tables, &maps);
	struct at_unwind_regs regs = { h->pc, h->sp, h->fp };
	struct at_unwind_stack stack = { h->sp, (uint64_t)got, s->copy };
	at_unwind_walk(&maps, &s->tables, &regs, &stack, &r);

	raw.pid = (uint32_t)tgid;
	raw.count = (uint16_t)r.count;
	memcpy(raw.pcs, r.pcs, r.count * sizeof(r.pcs[0]));
	memset(raw.kinds, AT_FRAME_NATIVE, r.count); /* the held thread's walk is native */
	raw.flags = (uint16_t)frame_serials(p, &raw, r.end);
	/* its Python frames, as the BPF walk appends them, named now: the thread is stopped */
	int filled;
	uint32_t py = at_pytrace_thread_frames(&s->py, tgid, tid, (uint64_t *)raw.pcs + raw.count,
					       raw.kinds + raw.count, raw.serials + raw.count,
					       AT_BPF_STACK_FRAMES - raw.count, &filled);
	raw.count = (uint16_t)(raw.count + py);
	if (filled)
		raw.flags |= AT_STACK_TRUNCATED;
	uint64_t hash = at_stacks_hash((uint32_t)tgid, (const uint64_t *)raw.pcs, raw.serials,
				       raw.kinds, raw.count, raw.flags, 1);
	if (at_bpf_put_stack(s->bpf, hash, &raw) < 0)
		return;
	if (py && !at_stack_ids_known(&s->ids, hash))
		at_pytrace_capture(&s->py, tgid, hash, (const uint64_t *)raw.pcs,
				   raw.kinds, raw.serials, raw.count);
	retarget_call(s, tid, tgid, h->slot, h->hash, hash);
}

/* Takes tid's hold entry from the BPF map into h and, for a pc in no known mapping, scans tgid
 * again. 0, or -1 when the stop is no hold. */
static int take_hold(struct at_stacks *s, pid_t tid, pid_t tgid, struct at_bpf_held *h)
{
	if (!s->on || at_bpf_take_held(s->bpf, tid, h) < 0)
		return -1;
	if (h->why == AT_BPF_HOLD_PYTHON) {
		s->py_holds++;
		return 0;
	}
	s->holds++;
	at_stacks_scan(s, tgid);
	return 0;
}

/* The module code objects of a stack of pid (raw, n frames of the BPF program's kinds) that are
 * named now: told to the BPF program, whose stacks with their frames hold no thread more. */
static void modules_named(struct at_stacks *s, pid_t pid, const struct at_bpf_stack *raw,
			  uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!at_bpf_kind_python(raw->kinds[i]) ||
		    !(raw->kinds[i] & AT_BPF_FRAME_PYTHON_MODULE) ||
		    !at_pytrace_named(&s->py, pid, raw->pcs[i]))
			continue;
		struct at_bpf_py_code c = { raw->pcs[i] & ((1ull << AT_PY_VALUE_SHIFT) - 1),
					    raw->serials[i], (uint32_t)pid };
		at_bpf_py_named(s->bpf, &c);
	}
}

/* Names the frames of held thread tid's new stack with a module's frame (h->hash), while the
 * thread waits and its module's code object lives. */
static void python_held(struct at_stacks *s, pid_t tgid, const struct at_bpf_held *h)
{
	static struct at_bpf_stack raw;

	if (at_stack_ids_known(&s->ids, h->hash) || at_bpf_peek_stack(s->bpf, h->hash, &raw) < 0)
		return;
	uint32_t n = raw.count > AT_BPF_STACK_FRAMES ? AT_BPF_STACK_FRAMES : raw.count;
	at_pytrace_capture(&s->py, tgid, h->hash, (const uint64_t *)raw.pcs, raw.kinds,
			   raw.serials, n);
	modules_named(s, tgid, &raw, n);
}

/* Adds stopped thread tid of tgid to the held ones, with its hold entry h (NULL: none, its
 * stack is not walked). 0, or -1 (ENOMEM). */
static int keep_held(struct at_stacks *s, pid_t tid, pid_t tgid, const struct at_bpf_held *h)
{
	if (s->held_count == s->held_cap) {
		uint32_t cap = s->held_cap ? 2 * s->held_cap : 16;
		struct at_stacks_held *v = realloc(s->held, cap * sizeof(*v));
		if (!v)
			return -1;
		s->held = v;
		s->held_cap = cap;
	}
	struct at_stacks_held *w = &s->held[s->held_count++];
	memset(w, 0, sizeof(*w));
	w->tid = tid;
	w->tgid = tgid;
	w->until_ms = at_now_ms() + (h ? AT_STACKS_HOLD_MS : AT_STACKS_PARK_MS);
	w->walk = h != NULL;
	if (h)
		w->h = *h;
	return 0;
}

int at_stacks_hold(struct at_stacks *s, pid_t tid, pid_t tgid)
{
	struct at_bpf_held h;

	if (take_hold(s, tid, tgid, &h) < 0)
		return 0;
	if (h.why == AT_BPF_HOLD_PYTHON) {
		python_held(s, tgid, &h);
		return 1;
	}
	struct at_stack_proc *p = at_stack_procs_find(&s->procs, tgid);
	if (!p || !p->pending) {
		walk_held(s, tid, tgid, &h);
		return 1;
	}
	if (keep_held(s, tid, tgid, &h) < 0) {
		walk_held(s, tid, tgid, &h);
		return 1;
	}
	return 2;
}

int at_stacks_park(struct at_stacks *s, pid_t tid, pid_t tgid)
{
	struct at_stack_proc *p = at_stack_procs_find(&s->procs, tgid);

	if (!s->on || !p || !p->pending || keep_held(s, tid, tgid, NULL) < 0)
		return 0;
	return 1;
}

/* Resumes the held threads that may go: every one when all is set, else those whose process
 * has no table being built, or whose wait is over. Each one's stack is walked first. */
static void release_held(struct at_stacks *s, int all)
{
	uint64_t now = at_now_ms();
	uint32_t kept = 0;

	for (uint32_t i = 0; i < s->held_count; i++) {
		struct at_stacks_held *w = &s->held[i];
		struct at_stack_proc *p = at_stack_procs_find(&s->procs, w->tgid);
		int late = now >= w->until_ms;

		if (!all && !late && p && p->pending) {
			s->held[kept++] = *w;
			continue;
		}
		s->hold_timeouts += p && p->pending;
		if (w->walk)
			walk_held(s, w->tid, w->tgid, &w->h);
		ptrace(PTRACE_CONT, w->tid, 0, 0);
	}
	s->held_count = kept;
}

int at_stacks_fd(const struct at_stacks *s)
{
	return s->on && s->builder ? at_table_builder_fd(s->builder) : -1;
}

void at_stacks_built(struct at_stacks *s)
{
	if (!s->on || !s->builder)
		return;
	struct at_table_build *list = at_table_builder_take(s->builder);

	for (struct at_table_build *w = list; w; w = w->next) {
		struct at_unwind_table *t = w->table;

		w->table = NULL; /* the cache's now, or freed by it */
		s->tables_built += t != NULL;
		s->tables_cached += w->cached;
		if (t && w->cached)
			DISPLAYLEVEL(3, "%s: unwind table of %s: read from the cache in %.1f ms, "
				     "%u rows, %zu bytes\n", at_program_name, w->path,
				     (double)w->ns / 1e6, t->stats.rows, at_unwind_table_bytes(t));
		if (w->cache_why)
			DISPLAYLEVEL(3, "%s: unwind table cache, %s: %s\n", at_program_name, w->path,
				     w->cache_why);
		if (!t)
			DISPLAYLEVEL(3, "%s: no unwind table for %s: %s\n", at_program_name,
				     w->path, w->why);
		at_stack_procs_built(&s->procs, w->key, w->key_len, t, w->gone);
		for (size_t i = 0; i < s->procs.count; i++) {
			struct at_stack_proc *p = &s->procs.procs[i];

			if (at_stack_procs_waits_for(p, w->key, w->key_len))
				at_stacks_scan(s, p->pid);
		}
	}
	at_table_builds_free(list);
	release_held(s, 0);
}

void at_stacks_tick(struct at_stacks *s)
{
	if (s->held_count)
		release_held(s, 0);
}

void at_stacks_release_all(struct at_stacks *s)
{
	if (s->held_count)
		release_held(s, 1);
}

/* at_pytrace_names' callback: a NAMES record into the sink. */
static void put_name(void *arg, const struct at_frame_name *n)
{
	struct at_sink_record rec = { .kind = AT_SINK_NAMES, .names = n };

	at_sink_put_record(arg, &rec);
}

/* Writes, for each frame of the stack, the record of the mapping its pc lay in (s->serials)
 * unless that record is the last of its addresses in the trace already, then the stack. */
static void write_stack(struct at_stacks *s, struct at_sink *sink, uint32_t sid)
{
	struct at_stack_proc *p = at_stack_procs_find(&s->procs, (pid_t)s->stack.pid);

	for (uint32_t i = 0; p && i < s->stack.count; i++) {
		struct at_stack_mapping *m = at_stack_procs_serial(p, s->serials[i]);

		if (!m || m->written || m->anonymous)
			continue;
		at_stack_procs_mark_written(p, m);
		struct at_sink_record rec = { .kind = AT_SINK_MAPPING, .mapping = &m->m };
		at_sink_put_record(sink, &rec);
	}
	at_pytrace_names(&s->py, &s->stack, sid, put_name, sink);
	struct at_sink_record r = { .kind = AT_SINK_STACK, .stack = &s->stack };
	at_sink_put_record(sink, &r);
	if (at_display_level >= 4) {
		char line[AT_STACK_MAX_FRAMES * 19 + 64];
		int n = snprintf(line, sizeof(line), "stack %u pid %u flags %u:", s->stack.id,
				 s->stack.pid, s->stack.flags);
		for (uint32_t i = 0; i < s->stack.count && n < (int)sizeof(line) - 20; i++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %llx",
				      (unsigned long long)s->stack.pcs[i]);
		DISPLAYLEVEL(4, "%s: %s\n", at_program_name, line);
	}
	s->written++;
}

/* A stack of pid stopped at a pc without a table: reads pid's maps again, at most every
 * AT_STACKS_RESCAN_MS. */
static void rescan(struct at_stacks *s, pid_t pid)
{
	struct at_stack_proc *p = at_stack_procs_find(&s->procs, pid);

	if (!p || at_now_ms() - p->scanned_ms >= AT_STACKS_RESCAN_MS) {
		s->rescans++;
		at_stacks_scan(s, pid);
	}
}

/* Remembers that stack id stopped at a pc without a table. */
static void mark_no_table(struct at_stacks *s, uint32_t id)
{
	if (id >= s->no_table_cap) {
		uint32_t cap = s->no_table_cap ? s->no_table_cap : 1024;
		while (cap <= id)
			cap *= 2;
		uint8_t *v = realloc(s->no_table, cap);
		if (!v)
			return;
		memset(v + s->no_table_cap, 0, cap - s->no_table_cap);
		s->no_table = v;
		s->no_table_cap = cap;
	}
	s->no_table[id] = 1;
}

/* The file id of session id sid, writing the stack (and its process's mappings not in the
 * file yet) when it is new to the file. 0 for an id without a stack. */
static uint32_t in_file(struct at_stacks *s, struct at_sink *sink, uint32_t sid)
{
	int is_new;
	uint32_t id = at_stack_store_file_id(&s->store, sid, &s->stack, s->serials, &is_new);

	if (is_new)
		write_stack(s, sink, sid);
	return id;
}

/* Copies the kinds of st's frames (st->count of them) from kinds, and sets AT_STACK_KINDS when
 * one is not native: a native stack is written without them, as before kinds existed. */
static void copy_kinds(struct at_stack *st, const uint8_t *kinds)
{
	memcpy(st->kinds, kinds, st->count);
	for (uint32_t i = 0; i < st->count; i++)
		if (kinds[i] != AT_FRAME_NATIVE)
			st->flags |= AT_STACK_KINDS;
}

uint32_t at_stacks_resolve(struct at_stacks *s, struct at_sink *sink, pid_t pid, uint64_t hash)
{
	struct at_bpf_stack raw;
	uint32_t id;

	if (!s->on || !hash)
		return 0;
	int rc = at_stack_ids_get(&s->ids, hash, &id);
	if (rc < 0)
		return 0;
	if (rc == 0) {
		/* the same incomplete stack again: the maps may have what it lacked by now */
		if (id < s->no_table_cap && s->no_table[id])
			rescan(s, pid);
		return in_file(s, sink, id);
	}
	if (at_bpf_take_stack(s->bpf, hash, &raw) < 0) {
		s->unreadable++;
		return 0;
	}
	if (raw.flags & AT_BPF_STACK_NO_TABLE) {
		mark_no_table(s, id);
		rescan(s, pid);
	}
	s->stack.pid = raw.pid;
	s->stack.flags = raw.flags & (AT_STACK_TRUNCATED | AT_STACK_INCOMPLETE);
	uint32_t count = raw.count > AT_BPF_STACK_FRAMES ? AT_BPF_STACK_FRAMES : raw.count;
	if (at_pytrace_has_python(raw.kinds, count)) {
		/* named now if its announcement has not been read yet (or found no room): a
		 * value's name from before may be of another code object at its address */
		at_pytrace_capture(&s->py, pid, hash, (const uint64_t *)raw.pcs, raw.kinds,
				   raw.serials, count);
		modules_named(s, pid, &raw, count);
		at_pytrace_bind(&s->py, hash, id);
		at_pytrace_splice(&s->py, (const uint64_t *)raw.pcs, raw.kinds, raw.serials, count,
				  &s->stack, s->serials);
	} else {
		s->stack.count = count > AT_STACK_MAX_FRAMES ? AT_STACK_MAX_FRAMES : count;
		memcpy(s->stack.pcs, raw.pcs, s->stack.count * sizeof(s->stack.pcs[0]));
		memcpy(s->serials, raw.serials, s->stack.count * sizeof(s->serials[0]));
		copy_kinds(&s->stack, raw.kinds);
	}
	if (s->stack.count == 0 || at_stack_store_add(&s->store, id, &s->stack, s->serials) < 0) {
		s->unreadable++;
		return 0;
	}
	s->truncated += (s->stack.flags & AT_STACK_TRUNCATED) != 0;
	s->incomplete += (s->stack.flags & AT_STACK_INCOMPLETE) != 0;
	return in_file(s, sink, id);
}

/* at_bpf_news_take's callback: a stack with Python frames the BPF program has just stored. */
static void python_news(void *arg, pid_t pid, uint64_t hash)
{
	struct at_stacks *s = arg;
	struct at_bpf_stack raw;

	if (at_stack_ids_known(&s->ids, hash) || at_bpf_peek_stack(s->bpf, hash, &raw) < 0)
		return; /* its first event came first: named then */
	uint32_t n = raw.count > AT_BPF_STACK_FRAMES ? AT_BPF_STACK_FRAMES : raw.count;
	at_pytrace_capture(&s->py, pid, hash, (const uint64_t *)raw.pcs, raw.kinds, raw.serials,
			   n);
	modules_named(s, pid, &raw, n);
}

int at_stacks_news_fd(const struct at_stacks *s)
{
	return s->on ? at_bpf_news_fd(s->bpf) : -1;
}

int at_stacks_news(struct at_stacks *s)
{
	return s->on ? at_bpf_news_take(s->bpf) : 0;
}

void at_stacks_new_file(struct at_stacks *s)
{
	if (!s->on)
		return;
	at_stack_store_new_file(&s->store);
	at_stack_procs_unwritten(&s->procs);
	at_pytrace_new_file(&s->py);
}


void at_stacks_summary(struct at_stacks *s)
{
	if (!s->on)
		return;
	at_bpf_stack_counts(s->bpf, s->counts);
	DISPLAYLEVEL(2, "%s: %llu stacks written, %llu truncated, %llu incomplete; %llu events "
		     "without a stack (stack map full)\n", at_program_name,
		     (unsigned long long)s->written, (unsigned long long)s->truncated,
		     (unsigned long long)s->incomplete,
		     (unsigned long long)(s->counts[AT_STACKS_NOT_STORED] + s->unreadable));
	DISPLAYLEVEL(3, "%s: %llu stacks taken, %llu before their process's mappings were known, "
		     "%llu rescans of mappings, %llu threads held for new mappings (%llu resumed before their "
		     "tables were built), %llu tables built (%llu read from the cache), %llu executable "
		     "mappings without a table; unwind "
		     "tables %llu of %llu bytes of kernel memory (%llu tables refused: full)\n",
		     at_program_name, (unsigned long long)s->counts[AT_STACKS_WALKED],
		     (unsigned long long)s->counts[AT_STACKS_NO_PROCESS],
		     (unsigned long long)s->rescans, (unsigned long long)s->holds,
		     (unsigned long long)s->hold_timeouts, (unsigned long long)s->tables_built,
		     (unsigned long long)s->tables_cached, (unsigned long long)s->procs.no_table,
		     (unsigned long long)at_stack_tables_bytes_used(&s->tables),
		     (unsigned long long)(s->mem_len[0] + s->mem_len[1] + s->mem_len[2] +
					  s->mem_len[3]),
		     (unsigned long long)s->tables.refused);
	if (s->py.processes)
		DISPLAYLEVEL(2, "%s: Python frames read in %llu processes: %llu stacks with Python "
			     "frames (%llu named as soon as taken, %llu incomplete: a run of frames "
			     "without its loop frame), %llu frame names read, %llu values not named "
			     "(their code objects were gone); %llu walks found no Python thread "
			     "state, %llu met unreadable memory; %llu new stacks not announced "
			     "(their ring was full); %llu threads held for a module's or class body's frame\n",
			     at_program_name,
			     (unsigned long long)s->py.processes, (unsigned long long)s->py.spliced,
			     (unsigned long long)s->py.captured, (unsigned long long)s->py.mismatched,
			     (unsigned long long)s->py.names, (unsigned long long)s->py.unnamed,
			     (unsigned long long)s->counts[AT_STACKS_PY_NO_THREAD],
			     (unsigned long long)s->counts[AT_STACKS_PY_BAD],
			     (unsigned long long)s->counts[AT_STACKS_PY_NOT_ANNOUNCED],
			     (unsigned long long)s->py_holds);
}
