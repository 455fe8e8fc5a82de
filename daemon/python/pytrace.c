/* pytrace.c: the Python frames of a trace's stacks (pytrace.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloctap.h"
#include "display.h"
#include "pynames.h"
#include "pysplice.h"
#include "pytrace.h"

/* A name of a Python frame value, never changed once made: a stack's snapshot points at the
 * names its frames had when it was taken. */
struct py_name {
	struct py_name *next;        /* the process's names, for freeing */
	char *function, *file;
	uint32_t line;
};

/* One Python frame value of a process. */
struct value_name {
	uint64_t value;              /* 0: a free slot (a code object is never at address 0) */
	const struct py_name *cur;   /* its name when last read; NULL: its code object could not
				      * be read */
	const struct py_name *written; /* the name its last NAMES record in file `file` gave */
	uint32_t file;
	uint32_t globals;            /* the globals (folded) of the frame it was last read for */
	int read;                    /* its code object was read at least once */
};

/* The names of a stack's Python frames, in their order, when it was taken. */
struct snapshot {
	pid_t pid;
	uint32_t n;
	const struct py_name *names[];
};

struct at_pytrace_proc {
	pid_t pid;
	int known;                   /* 1: py is open and the BPF walk reads its frames */
	struct at_py_proc py;
	struct at_py_names *names;   /* its code objects, read once each */
	struct value_name *values;   /* open addressing by value, a power of two of slots */
	size_t nvalues, slots;
	struct py_name *all;         /* every name made, for freeing */
};

void at_pytrace_init(struct at_pytrace *t)
{
	memset(t, 0, sizeof(*t));
	t->file = 1;
}

static void proc_free(struct at_pytrace_proc *p)
{
	while (p->all) {
		struct py_name *n = p->all;

		p->all = n->next;
		free(n->function);
		free(n->file);
		free(n);
	}
	free(p->values);
	if (p->names)
		at_py_names_free(p->names);
	if (p->known)
		at_py_close(&p->py);
	free(p);
}

void at_pytrace_free(struct at_pytrace *t)
{
	for (size_t i = 0; i < t->count; i++)
		proc_free(t->procs[i]);
	free(t->procs);
	free(t->said);
	for (size_t i = 0; i < t->snap_slots; i++)
		free(t->snap_by_hash[i].snap);
	free(t->snap_by_hash);
	for (size_t i = 0; i < t->nby_id; i++)
		free(t->by_id[i]);
	free(t->by_id);
	memset(t, 0, sizeof(*t));
}

/* The process pid's entry, or NULL (its interpreter not decided yet). */
static struct at_pytrace_proc *find(const struct at_pytrace *t, pid_t pid)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->procs[i]->pid == pid)
			return t->procs[i];
	return NULL;
}

/* A decided process's entry, added: NULL when out of memory. */
static struct at_pytrace_proc *add(struct at_pytrace *t, pid_t pid)
{
	struct at_pytrace_proc *p;

	if (t->count == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct at_pytrace_proc **v = realloc(t->procs, cap * sizeof(*v));
		if (!v)
			return NULL;
		t->procs = v;
		t->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->py.mem_fd = -1;
	t->procs[t->count++] = p;
	return p;
}

/* The snapshots of pid's stacks go (its names went with it). */
static void drop_snapshots(struct at_pytrace *t, pid_t pid)
{
	for (size_t i = 0; i < t->nby_id; i++)
		if (t->by_id[i] && t->by_id[i]->pid == pid) {
			free(t->by_id[i]);
			t->by_id[i] = NULL;
		}
	for (size_t i = 0; i < t->snap_slots; i++)
		if (t->snap_by_hash[i].snap && t->snap_by_hash[i].snap->pid == pid) {
			free(t->snap_by_hash[i].snap);
			t->snap_by_hash[i].snap = NULL; /* the hash stays: a tombstone */
		}
}

void at_pytrace_forget(struct at_pytrace *t, pid_t pid)
{
	for (size_t i = 0; i < t->count; i++) {
		if (t->procs[i]->pid != pid)
			continue;
		proc_free(t->procs[i]);
		t->procs[i] = t->procs[--t->count];
		drop_snapshots(t, pid);
		return;
	}
}

/* Says why once per message (an unknown interpreter is said once, however many processes run
 * it). */
static void say_once(struct at_pytrace *t, pid_t pid, const char *why)
{
	for (size_t i = 0; i < t->nsaid; i++)
		if (strncmp(t->said[i], why, sizeof(t->said[i]) - 1) == 0)
			return;
	char(*v)[128] = realloc(t->said, (t->nsaid + 1) * sizeof(*v));
	if (v) {
		t->said = v;
		size_t n = strnlen(why, sizeof(v[0]) - 1);

		memcpy(t->said[t->nsaid], why, n);
		t->said[t->nsaid++][n] = 0;
	}
	DISPLAYLEVEL(2, "%s: pid %d: %s; its stacks hold native frames only\n", at_program_name,
		     (int)pid, why);
}

int at_pytrace_scan(struct at_pytrace *t, pid_t pid, struct at_bpf_py_proc *out)
{
	struct at_py_proc py;
	char why[640];
	struct at_pytrace_proc *p;

	if (find(t, pid))
		return 0;
	switch (at_py_open(&py, pid, why, sizeof(why))) {
	case AT_PY_KNOWN:
		break;
	case AT_PY_UNKNOWN:
		if (add(t, pid))
			say_once(t, pid, why);
		return 0;
	default: /* not a Python yet (its libpython may come with its dynamic loader), or gone */
		return 0;
	}
	p = add(t, pid);
	if (p)
		p->names = at_py_names_new();
	if (!p || !p->names) {
		at_py_close(&py);
		if (p)
			p->known = 0;
		return 0;
	}
	p->py = py;
	p->known = 1;
	t->processes++;
	out->runtime = py.runtime;
	out->off = py.off;
	DISPLAYLEVEL(3, "%s: pid %d: %s is Python %u.%u: its Python frames are read\n",
		     at_program_name, (int)pid, py.object, py.version >> 24,
		     (py.version >> 16) & 0xFF);
	return 1;
}

/* Whether pc lies in one of eval[0..neval). */
static int in_eval_pc(const struct at_py_eval *eval, int neval, uint64_t pc)
{
	for (int i = 0; i < neval; i++)
		if (pc >= eval[i].start && pc < eval[i].end)
			return 1;
	return 0;
}

uint32_t at_pytrace_thread_frames(struct at_pytrace *t, pid_t pid, pid_t tid, uint64_t *pcs,
				  uint8_t *kinds, uint32_t *serials, uint32_t room, int *filled)
{
	struct at_py_frame f[AT_PY_WALK_MAX];
	const struct at_pytrace_proc *p = find(t, pid);
	int n;

	uint32_t max = room < AT_PY_WALK_MAX ? room : AT_PY_WALK_MAX;

	*filled = 0;
	if (!p || !p->known || !room)
		return 0;
	n = at_py_thread_frames(&p->py, tid, f, (int)max);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		pcs[i] = at_py_value(&f[i]);
		kinds[i] = AT_BPF_PYTHON_KIND(&f[i]);
		serials[i] = (uint32_t)(f[i].globals ^ (f[i].globals >> 32)); /* as the BPF walk */
	}
	*filled = (uint32_t)n == max;
	return (uint32_t)n;
}

int at_pytrace_has_python(const uint8_t *kinds, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		if (at_bpf_kind_python(kinds[i]))
			return 1;
	return 0;
}

void at_pytrace_splice(struct at_pytrace *t, const uint64_t *raw, const uint8_t *kinds,
		       const uint32_t *raw_serials, uint32_t count, struct at_stack *st,
		       uint32_t *serials)
{
	enum { RAW = AT_BPF_STACK_FRAMES };
	uint64_t pcs[RAW], out[RAW];
	uint32_t native_serials[RAW];
	struct at_py_frame py[RAW];
	uint8_t is_python[RAW];
	int n = 0, npy = 0, neval = 0;
	const struct at_pytrace_proc *p = find(t, (pid_t)st->pid);
	struct at_py_eval eval = { 0, 0 };

	for (uint32_t i = 0; i < count && i < RAW; i++) {
		if (!at_bpf_kind_python(kinds[i])) {
			pcs[n] = raw[i];
			native_serials[n++] = raw_serials[i];
		} else {
			py[npy].code = at_py_value_code(raw[i]);
			py[npy].offset = at_py_value_offset(raw[i]);
			py[npy++].entry = (kinds[i] & AT_BPF_FRAME_PYTHON_ENTRY) != 0;
		}
	}
	if (p && p->known && p->py.eval_end > p->py.eval_start) {
		eval.start = p->py.eval_start;
		eval.end = p->py.eval_end;
		neval = 1;
	}
	struct at_py_spliced r = at_py_splice(pcs, n, &eval, neval, py, npy, out, is_python, RAW);
	int keep = r.count;

	t->spliced++;
	if (r.mismatch || r.left) {
		if (st->flags & AT_STACK_TRUNCATED) {
			/* the frames were cut (the native walk's, or the Python ones, filled
			 * their room): the stack ends at the first loop frame left without its
			 * run */
			for (int k = 1; k < r.count; k++)
				if (!is_python[k] && in_eval_pc(&eval, neval, out[k] - 1)) {
					keep = k;
					break;
				}
		} else {
			st->flags |= AT_STACK_INCOMPLETE;
			t->mismatched++;
		}
	}
	if (keep > AT_STACK_MAX_FRAMES) {
		keep = AT_STACK_MAX_FRAMES;
		st->flags |= AT_STACK_TRUNCATED;
	}
	/* the native frames kept are pcs in order, less the loop frames replaced: each takes
	 * the serial of the next native frame of its value (one pc, one mapping) */
	int j = 0;
	for (int k = 0; k < keep; k++) {
		st->pcs[k] = out[k];
		st->kinds[k] = is_python[k] ? AT_FRAME_PYTHON : AT_FRAME_NATIVE;
		serials[k] = 0;
		if (is_python[k])
			continue;
		while (j < n && pcs[j] != out[k])
			j++;
		if (j < n)
			serials[k] = native_serials[j++];
	}
	st->count = (uint16_t)keep;
	if (r.runs)
		st->flags |= AT_STACK_KINDS;
}

/* The slot of value v in p's table (free or v's). */
static struct value_name *slot(struct value_name *values, size_t slots, uint64_t v)
{
	size_t i = (size_t)((v * 0x9E3779B97F4A7C15ull) >> 20) & (slots - 1);

	while (values[i].value && values[i].value != v)
		i = (i + 1) & (slots - 1);
	return &values[i];
}

/* The table grown to twice its slots: 0, or -1 (ENOMEM). */
static int grow(struct at_pytrace_proc *p)
{
	size_t slots = p->slots ? 2 * p->slots : 256;
	struct value_name *v = calloc(slots, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < p->slots; i++)
		if (p->values[i].value)
			*slot(v, slots, p->values[i].value) = p->values[i];
	free(p->values);
	p->values = v;
	p->slots = slots;
	return 0;
}

/* A name made from nm: NULL when out of memory. */
static const struct py_name *new_name(struct at_pytrace_proc *p, const struct at_py_name *nm)
{
	struct py_name *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->function = strdup(nm->function ? nm->function : "");
	n->file = strdup(nm->file ? nm->file : "");
	n->line = nm->line > 0 ? (uint32_t)nm->line : 0;
	n->next = p->all;
	p->all = n;
	if (!n->function || !n->file)
		return NULL; /* freed with the process */
	return n;
}

/* Whether name n says what nm says. */
static int same_name(const struct py_name *n, const struct at_py_name *nm)
{
	return n && strcmp(n->function, nm->function ? nm->function : "") == 0 &&
	       strcmp(n->file, nm->file ? nm->file : "") == 0 &&
	       n->line == (nm->line > 0 ? (uint32_t)nm->line : 0);
}

/* v's entry in p: NULL when out of memory. */
static struct value_name *value_of(struct at_pytrace_proc *p, uint64_t v)
{
	if (2 * (p->nvalues + 1) > p->slots && grow(p) < 0)
		return NULL;
	struct value_name *e = slot(p->values, p->slots, v);
	if (!e->value) {
		e->value = v;
		p->nvalues++;
	}
	return e;
}

/* v's name as the process has it now (its code object read, or its header checked again, or
 * named for a frame of the same module, globals folded to module, 0 when not known): NULL when
 * the code object cannot be read. */
static const struct py_name *read_name(struct at_pytrace *t, struct at_pytrace_proc *p,
				       struct value_name *e, uint32_t module)
{
	struct at_py_name nm;

	if (at_py_names_get(p->names, &p->py, e->value, module, &nm) != 0) {
		if (!e->read)
			DISPLAYLEVEL(4, "%s: pid %d: the Python code object at 0x%llx cannot be "
				     "read\n", at_program_name, (int)p->pid,
				     (unsigned long long)at_py_value_code(e->value));
		t->unnamed += !e->read;
		e->read = 1;
		return e->cur;
	}
	if (!same_name(e->cur, &nm)) {
		e->cur = new_name(p, &nm);
		t->names++;
	}
	e->read = 1;
	return e->cur;
}

/* v's name for a stack taken without a snapshot: the one last read, or read now. */
static const struct py_name *name_now(struct at_pytrace *t, struct at_pytrace_proc *p,
				      uint64_t v)
{
	struct value_name *e = value_of(p, v);

	if (!e)
		return NULL;
	return e->read ? e->cur : read_name(t, p, e, 0);
}

/* The slot of hash in the snapshots by hash (free or hash's). */
static struct snap_slot *snap_slot(struct snap_slot *v, size_t slots, uint64_t hash)
{
	size_t i = (size_t)((hash * 0x9E3779B97F4A7C15ull) >> 24) & (slots - 1);

	while (v[i].hash && v[i].hash != hash)
		i = (i + 1) & (slots - 1);
	return &v[i];
}

/* The snapshots by hash grown to twice their slots: 0, or -1. */
static int snap_grow(struct at_pytrace *t)
{
	size_t slots = t->snap_slots ? 2 * t->snap_slots : 1024;
	struct snap_slot *v = calloc(slots, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < t->snap_slots; i++)
		if (t->snap_by_hash[i].snap)
			*snap_slot(v, slots, t->snap_by_hash[i].hash) = t->snap_by_hash[i];
	t->nsnaps_used = t->nsnaps;
	free(t->snap_by_hash);
	t->snap_by_hash = v;
	t->snap_slots = slots;
	return 0;
}

void at_pytrace_capture(struct at_pytrace *t, pid_t pid, uint64_t hash, const uint64_t *pcs,
			const uint8_t *kinds, const uint32_t *serials, uint32_t count)
{
	struct at_pytrace_proc *p = find(t, pid);
	uint32_t n = 0;

	if (!p || !p->known || !hash)
		return;
	for (uint32_t i = 0; i < count; i++)
		n += at_bpf_kind_python(kinds[i]);
	if (2 * (t->nsnaps_used + 1) > t->snap_slots && snap_grow(t) < 0)
		return;
	struct snap_slot *sl = snap_slot(t->snap_by_hash, t->snap_slots, hash);
	if (sl->snap)
		return; /* taken already */
	struct snapshot *sn = malloc(sizeof(*sn) + n * sizeof(sn->names[0]));
	if (!sn)
		return;
	sn->pid = pid;
	sn->n = 0;
	for (uint32_t i = 0; i < count; i++) {
		if (!at_bpf_kind_python(kinds[i]))
			continue;
		struct value_name *e = value_of(p, pcs[i]);
		/* a value named for a frame of the same globals keeps its name: a code object
		 * at its address since is of the same module, which is all but never another
		 * one (a module's code object freed after its import and another module's at
		 * its address differ by their globals) */
		if (e && !(e->read && e->globals == serials[i])) {
			read_name(t, p, e, serials[i]);
			e->globals = serials[i];
		}
		sn->names[sn->n++] = e ? e->cur : NULL;
	}
	if (!sl->hash)
		t->nsnaps_used++;
	sl->hash = hash;
	sl->snap = sn;
	t->nsnaps++;
	t->captured++;
}

void at_pytrace_bind(struct at_pytrace *t, uint64_t hash, uint32_t id)
{
	if (!t->snap_slots)
		return;
	struct snap_slot *sl = snap_slot(t->snap_by_hash, t->snap_slots, hash);
	if (!sl->snap)
		return;
	if (id >= t->nby_id) {
		size_t cap = t->nby_id ? t->nby_id : 1024;
		while (cap <= id)
			cap *= 2;
		struct snapshot **v = realloc(t->by_id, cap * sizeof(*v));
		if (!v)
			return;
		memset(v + t->nby_id, 0, (cap - t->nby_id) * sizeof(*v));
		t->by_id = v;
		t->nby_id = cap;
	}
	free(t->by_id[id]);
	t->by_id[id] = sl->snap;
	sl->snap = NULL; /* the hash stays: a tombstone */
	t->nsnaps--;
}

void at_pytrace_names(struct at_pytrace *t, const struct at_stack *st, uint32_t id,
		      void (*put)(void *arg, const struct at_frame_name *n), void *arg)
{
	struct at_pytrace_proc *p = find(t, (pid_t)st->pid);
	const struct snapshot *sn = id < t->nby_id ? t->by_id[id] : NULL;
	uint32_t k = 0;

	if (!p || !p->known || !(st->flags & AT_STACK_KINDS))
		return;
	for (uint32_t i = 0; i < st->count; i++) {
		if (st->kinds[i] != AT_FRAME_PYTHON)
			continue;
		const struct py_name *nm = sn && sn->pid == p->pid && k < sn->n
						   ? sn->names[k]
						   : name_now(t, p, st->pcs[i]);
		k++;
		struct value_name *e = value_of(p, st->pcs[i]);
		if (!nm || !e || (e->file == t->file && e->written == nm))
			continue;
		struct at_frame_name n = { st->pid, AT_FRAME_PYTHON, st->pcs[i], nm->line,
					   nm->function, nm->file };
		put(arg, &n);
		e->written = nm;
		e->file = t->file;
	}
}

int at_pytrace_named(struct at_pytrace *t, pid_t pid, uint64_t v)
{
	struct at_pytrace_proc *p = find(t, pid);
	struct value_name *e = p && p->known && p->slots ? slot(p->values, p->slots, v) : NULL;

	return e && e->value == v && e->cur != NULL;
}

void at_pytrace_new_file(struct at_pytrace *t)
{
	t->file++;
}
