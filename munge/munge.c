/* munge.c: the reference munge algorithm, with a fast path for well-formed lines.
 *
 * Every line goes through the same steps in the reference's order (apply_fields): process id,
 * thread id, function, argument count, pointer argument, result. Only the way the fields are
 * found differs: at_munge_parse() takes the common shape "PID TID func(ARGS)=0xHEX" in one
 * pass; anything else (whitespace, signs, old lines without a tid, odd numbers, garbage) goes
 * to slow_fields(), which splits and parses exactly as the Python script does. */
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "munge.h"
#include "text.h"

struct at_munge_process {
	struct at_idmap tids;
	struct at_idmap pointers;
	uint64_t written;       /* lines written for this process, for --stats-every */
	uint64_t last_tid_id;   /* one-entry cache of the last tid looked up, 0 if none */
	uint64_t last_tid_mag;
	int last_tid_neg;
};

/* A parsed integer field: st is an AT_PYINT_* status. */
struct pyint {
	int st;
	int neg;
	uint64_t mag;
};

/* The fields of one line, as the reference's split_log_line() and int() calls see them. */
struct fields {
	struct pyint pid, tid, ptr, res;
	int func;               /* enum at_func, or -1 when unknown */
	unsigned nargs;
	struct at_span args;    /* the text between the parentheses */
	struct at_span rest;    /* for free and realloc: args after the first one (",SIZE") */
	int has_result;         /* a non-empty text followed '=' */
	int plain_args;         /* the argument text is known to be decimal numbers */
};

void at_munge_init(struct at_munge *m, const struct at_munge_options *opt)
{
	memset(m, 0, sizeof(*m));
	m->opt = *opt;
	at_idmap_init(&m->pids);
}

void at_munge_free(struct at_munge *m)
{
	for (uint64_t i = 0; i < m->nprocs; i++) {
		at_idmap_free(&m->procs[i].tids);
		at_idmap_free(&m->procs[i].pointers);
	}
	free(m->procs);
	at_idmap_free(&m->pids);
	memset(m, 0, sizeof(*m));
}

/* --- numbers ----------------------------------------------------------------------------- */

static struct pyint parse_span(struct at_span s, int base)
{
	struct pyint r;

	r.st = at_parse_pyint(s.p, s.n, base, &r.neg, &r.mag);
	return r;
}

/* --- finding the fields ---------------------------------------------------------------- */

/* A decimal of 1 to 19 digits at *pp (so it cannot overflow). */
static inline int fast_dec(const char **pp, const char *end, uint64_t *v)
{
	const char *q = *pp, *s = q;
	uint64_t x = 0;

	while (q < end && (unsigned char)(*q - '0') < 10)
		x = x * 10 + (uint64_t)(*q++ - '0');
	if (q == s || q - s > 19)
		return -1;
	*pp = q;
	*v = x;
	return 0;
}

#define UNSEEN_POINTER "Did not see an alloc for pointer"

int at_munge_unseen_pointer(const char *why)
{
	return why && strcmp(why, UNSEEN_POINTER) == 0;
}

/* "0x" and 1 to 16 hex digits at *pp. */
static inline int fast_hex(const char **pp, const char *end, uint64_t *v)
{
	const char *q = *pp;
	uint64_t x = 0;

	if (end - q < 3 || q[0] != '0' || q[1] != 'x')
		return -1;
	q += 2;
	const char *s = q;
	unsigned d;
	while (q < end && (d = at_hex_plus1[(unsigned char)*q]) != 0) {
		x = (x << 4) | (d - 1);
		q++;
	}
	if (q == s || q - s > 16)
		return -1;
	*pp = q;
	*v = x;
	return 0;
}

/* The function whose name and '(' start at *pp, which then points past the '('; -1 if none. */
static inline int func_at(const char **pp, const char *end)
{
	const char *q = *pp;
	size_t room = (size_t)(end - q) < AT_FUNC_NAME_SIZE ? (size_t)(end - q) : AT_FUNC_NAME_SIZE;
	const char *open = memchr(q, '(', room);

	if (!open)
		return -1;
	int f = at_func_lookup(q, (size_t)(open - q));
	if (f >= 0)
		*pp = open + 1;
	return f;
}

/* The common shape in one pass: "PID TID func(ARGS)[=0xHEX]" with decimal pid, tid and sizes,
 * 0x pointers, the right argument count, nothing else. Returns -1 for anything else (the slow
 * path then decides), so a line taken here is one the reference splits and parses the same. */
int at_munge_parse(const char *p, size_t n, struct at_munge_parsed *pl)
{
	const char *q = p, *end = p + n;
	uint64_t v;

	pl->func = -1;
	if (n > UINT32_MAX)
		return -1;
	if (fast_dec(&q, end, &pl->pid) < 0 || q == end || *q++ != ' ')
		return -1;
	if (fast_dec(&q, end, &pl->tid) < 0 || q == end || *q++ != ' ')
		return -1;
	int func = func_at(&q, end);
	if (func < 0)
		return -1;
	const char *args = q, *rest = q;
	unsigned want = at_func_nargs[func];
	if (want && at_func_takes_pointer((unsigned)func)) {
		if (fast_hex(&q, end, &pl->ptr) < 0)
			return -1;
		rest = q;
		if (want == 2) {
			if (q == end || *q++ != ',' || fast_dec(&q, end, &v) < 0)
				return -1;
		}
	} else {
		for (unsigned i = 0; i < want; i++)
			if ((i && (q == end || *q++ != ',')) || fast_dec(&q, end, &v) < 0)
				return -1;
	}
	if (q == end || *q != ')')
		return -1;
	pl->args_off = (uint32_t)(args - p);
	pl->args_len = (uint32_t)(q - args);
	pl->rest_off = (uint32_t)(rest - p);
	q++;
	pl->has_result = q < end;
	if (pl->has_result) {
		if (!at_func_returns_pointer((unsigned)func) || *q++ != '=' ||
		    fast_hex(&q, end, &pl->res) < 0 || q != end)
			return -1;
	}
	pl->func = (int8_t)func;
	return 0;
}

/* The fields of a line at_munge_parse() took. */
static inline void parsed_fields(const char *line, const struct at_munge_parsed *pl,
				 struct fields *f)
{
	f->pid = (struct pyint){ AT_PYINT_OK, 0, pl->pid };
	f->tid = (struct pyint){ AT_PYINT_OK, 0, pl->tid };
	f->ptr = (struct pyint){ AT_PYINT_OK, 0, pl->ptr };
	f->res = (struct pyint){ AT_PYINT_OK, 0, pl->res };
	f->func = pl->func;
	f->nargs = at_func_nargs[pl->func];
	f->args = (struct at_span){ line + pl->args_off, pl->args_len };
	f->rest = (struct at_span){ line + pl->rest_off,
				    pl->args_off + pl->args_len - pl->rest_off };
	f->has_result = pl->has_result;
	f->plain_args = 1; /* at_munge_parse takes only 1 to 19 decimal digits */
}

/* Any line, split and parsed as the reference does. -1 with *why for a line it cannot split. */
static int slow_fields(const char *line, size_t len, struct fields *f, const char **why)
{
	struct at_span s = at_strip(line, len);
	struct at_raw_line r;

	if (at_split_raw(s.p, s.n, &r, why) < 0)
		return -1;
	f->pid = parse_span(r.pid, 10);
	f->tid = parse_span(r.tid, 10);
	f->func = at_func_lookup(r.func.p, r.func.n);
	f->nargs = r.nargs;
	f->args = r.args;
	f->rest = (struct at_span){ r.arg0.p + r.arg0.n, r.args.n - r.arg0.n };
	if (f->func >= 0 && at_func_takes_pointer((unsigned)f->func) && r.nargs)
		f->ptr = parse_span(r.arg0, 16);
	f->has_result = r.result.n > 0;
	if (f->has_result)
		f->res = parse_span(r.result, 16);
	return 0;
}

/* --- applying them ------------------------------------------------------------------------ */

const char *at_munge_unreplayable_event(const struct at_event *ev)
{
	if (at_func_returns_pointer(ev->func) && !ev->has_result)
		return AT_MUNGE_NO_RESULT;
	if ((at_func_takes_pointer(ev->func) && ev->arg[0] >= AT_SLOT_LIMIT) ||
	    (ev->has_result && ev->result >= AT_SLOT_LIMIT))
		return AT_MUNGE_BIG_SLOT;
	return NULL;
}

/* Why a replay cannot read the munged line of f, a line the reference writes as it comes, or
 * NULL. A replay reads the munged shape strictly (lib/text.h, at_parse_munged): each size or
 * alignment a decimal number that fits 64 bits, and a result on every allocation; the
 * reference copies the argument text as written (spaces, signs, hex, anything) and writes an
 * allocation without a result as it is. */
static const char *unreplayable(const struct fields *f)
{
	if (at_func_returns_pointer((unsigned)f->func) && !f->has_result)
		return AT_MUNGE_NO_RESULT;
	if (f->plain_args)
		return NULL;
	int ptr = at_func_takes_pointer((unsigned)f->func);
	struct at_span text = ptr ? f->rest : f->args;
	const char *p = text.p, *end = text.p + text.n;
	uint64_t v;
	for (unsigned i = ptr; i < f->nargs; i++)
		if ((i && at_take_char(&p, end, ',') < 0) || at_take_dec(&p, end, &v) < 0)
			return AT_MUNGE_ODD_ARGUMENT;
	return p == end ? NULL : AT_MUNGE_ODD_ARGUMENT;
}

/* Reason for a failed integer field: what[0] when not an integer, what[1] when too big. */
static const char *const pid_why[2] = {
	"Malformed process id",
	"Process id beyond 64 bits (the reference accepts it, alloctap-munge does not)" };
static const char *const tid_why[2] = {
	"Malformed thread id",
	"Thread id beyond 64 bits (the reference accepts it, alloctap-munge does not)" };
static const char *const ptr_why[2] = {
	"Malformed pointer",
	"Pointer beyond 64 bits (the reference accepts it, alloctap-munge does not)" };
static const char *const res_why[2] = {
	"Malformed result",
	"Result beyond 64 bits (the reference accepts it, alloctap-munge does not)" };

static inline const char *int_why(const struct pyint *v, const char *const what[2])
{
	return what[v->st == AT_PYINT_TOO_BIG];
}

/* The process of pid (neg, mag): its index in m->procs, created on first sight. Returns the
 * process id (>= 1), 0 when memory ran out. */
static inline uint64_t process_of(struct at_munge *m, int neg, uint64_t mag)
{
	if (m->last_pid_id && m->last_pid_mag == mag && m->last_pid_neg == neg)
		return m->last_pid_id;
	uint64_t id = at_idmap_get(&m->pids, neg, mag);
	if (!id)
		return 0;
	while (id > m->nprocs) { /* pids are never released: their ids come in order */
		if (m->nprocs == m->procs_cap) {
			uint64_t cap = m->procs_cap ? m->procs_cap * 2 : 16;
			struct at_munge_process *p = realloc(m->procs, cap * sizeof(*p));
			if (!p)
				return 0; /* the pid keeps its id; a later line adds the process */
			m->procs = p;
			m->procs_cap = cap;
		}
		struct at_munge_process *p = &m->procs[m->nprocs++];
		memset(p, 0, sizeof(*p));
		at_idmap_init(&p->tids);
		at_idmap_init(&p->pointers);
	}
	m->last_pid_id = id;
	m->last_pid_mag = mag;
	m->last_pid_neg = neg;
	return id;
}

static inline uint64_t thread_of(struct at_munge_process *p, int neg, uint64_t mag)
{
	if (p->last_tid_id && p->last_tid_mag == mag && p->last_tid_neg == neg)
		return p->last_tid_id;
	uint64_t id = at_idmap_get(&p->tids, neg, mag);
	if (id) {
		p->last_tid_id = id;
		p->last_tid_mag = mag;
		p->last_tid_neg = neg;
	}
	return id;
}

/* Room for a munged line besides its argument text: the padded prefix and name copies, two
 * '#' numbers of at most 20 digits, ')', '=', '\n'. */
#define LINE_OVERHEAD 128

/* Writes "PID TID func(" at d (which has room for LINE_OVERHEAD bytes); returns the length. */
static inline size_t put_head(char *d, const struct at_munge_thread *t, int func)
{
	size_t n = t->len + at_func_name_len[func];

	memcpy(d, t->prefix, sizeof(t->prefix));
	memcpy(d + t->len, at_func_name[func], AT_FUNC_NAME_SIZE);
	d[n] = '(';
	return n + 1;
}

/* Writes the munged line "PID TID func(ARGS)[=#RES]\n": for free and realloc ARGS is #ptr_id
 * and the original text after the first argument, else the original argument text; res_id 0
 * means no result. An argument text too long for the output buffer is written in pieces. */
static void put_line(struct at_output *out, const struct at_munge_thread *t,
		     const struct fields *f, uint64_t ptr_id, uint64_t res_id)
{
	int ptr = at_func_takes_pointer((unsigned)f->func);
	struct at_span text = ptr ? f->rest : f->args;
	char small[LINE_OVERHEAD];
	size_t need = LINE_OVERHEAD + text.n;
	char *d = need <= AT_OUTPUT_BUFSIZE ? at_output_reserve(out, need) : small;
	size_t n = put_head(d, t, f->func);

	if (ptr) {
		d[n++] = '#';
		n += at_put_dec(d + n, ptr_id);
	}
	if (d == small) { /* an argument text longer than the whole buffer */
		at_output_write(out, small, n);
		at_output_write(out, text.p, text.n);
		n = 0;
	} else {
		memcpy(d + n, text.p, text.n);
		n += text.n;
	}
	d[n++] = ')';
	if (res_id) {
		d[n++] = '=';
		d[n++] = '#';
		n += at_put_dec(d + n, res_id);
	}
	d[n++] = '\n';
	if (d == small)
		at_output_write(out, small, n);
	else
		at_output_commit(out, n);
}

static void put_stats_line(struct at_output *out, uint64_t pid)
{
	static const char tail[] = " 1 jemalloc_stats()\n";
	char *d = at_output_reserve(out, 20 + sizeof(tail));
	size_t n = at_put_dec(d, pid);

	memcpy(d + n, tail, sizeof(tail) - 1);
	at_output_commit(out, n + sizeof(tail) - 1);
}

static inline unsigned thread_slot(uint64_t pid, uint64_t tid)
{
	return (unsigned)(((pid * UINT64_C(0x9E3779B97F4A7C15)) ^ (tid * UINT64_C(0xC2B2AE3D27D4EB4F))) >>
			  56) % AT_MUNGE_THREAD_CACHE;
}

/* Fills a thread cache entry for the pair of f, now mapped to process pid and thread tid. */
static void fill_thread(const struct at_munge *m, struct at_munge_thread *t,
			const struct fields *f, uint64_t pid, uint64_t tid)
{
	t->pid_mag = f->pid.mag;
	t->tid_mag = f->tid.mag;
	t->proc = (uint32_t)(pid - 1);
	t->pid_id = m->opt.has_pid ? 1 : pid;
	t->tid_id = tid;
	memset(t->prefix, 0, sizeof(t->prefix));
	size_t n = at_put_dec(t->prefix, t->pid_id);
	t->prefix[n++] = ' ';
	n += at_put_dec(t->prefix + n, tid);
	t->prefix[n++] = ' ';
	t->len = (uint32_t)n;
}

#define IGNORE(reason)                                                                         \
	do {                                                                                   \
		*why = (reason);                                                               \
		return AT_MUNGE_IGNORED;                                                       \
	} while (0)

/* The reference's main loop body, step by step, on fields already found, up to the output:
 * *tp becomes the line's thread entry (possibly local), *ptr_id and *res_id its slots (0 for
 * none). Returns AT_MUNGE_WRITTEN when the line is to be written. */
static inline int munge_fields(struct at_munge *m, const struct fields *f,
			       struct at_munge_thread *local, struct at_munge_thread **tp,
			       uint64_t *ptr_id_out, uint64_t *res_id_out, const char **why)
{
	if (f->pid.st)
		IGNORE(int_why(&f->pid, pid_why));
	if (m->opt.has_pid && (f->pid.mag != m->opt.pid_mag || f->pid.neg != m->opt.pid_neg))
		return AT_MUNGE_FILTERED;
	struct at_munge_thread *t = NULL;
	if (!f->tid.st && !f->pid.neg && !f->tid.neg) {
		t = &m->threads[thread_slot(f->pid.mag, f->tid.mag)];
		if (!t->pid_id || t->pid_mag != f->pid.mag || t->tid_mag != f->tid.mag)
			t = NULL;
	}
	if (!t) {
		uint64_t pid = process_of(m, f->pid.neg, f->pid.mag);
		if (!pid)
			return AT_MUNGE_NOMEM;
		struct at_munge_process *p = &m->procs[pid - 1];
		if (f->tid.st)
			IGNORE(int_why(&f->tid, tid_why));
		uint64_t tid = thread_of(p, f->tid.neg, f->tid.mag);
		if (!tid)
			return AT_MUNGE_NOMEM;
		t = f->pid.neg || f->tid.neg ? local
					     : &m->threads[thread_slot(f->pid.mag, f->tid.mag)];
		fill_thread(m, t, f, pid, tid);
	}
	struct at_munge_process *p = &m->procs[t->proc];
	if (f->func < 0)
		IGNORE("Unknown function");
	if (f->nargs != at_func_nargs[f->func])
		IGNORE("Malformed input");
	if (f->has_result && !at_func_returns_pointer((unsigned)f->func))
		IGNORE("Malformed input");
	uint64_t ptr_id = 0, res_id = 0;
	if (at_func_takes_pointer((unsigned)f->func)) {
		if (f->ptr.st)
			IGNORE(int_why(&f->ptr, ptr_why));
		if (f->ptr.mag) {
			int r = at_idmap_release(&p->pointers, f->ptr.neg, f->ptr.mag, &ptr_id);
			if (r < 0)
				return AT_MUNGE_NOMEM;
			if (r == 0)
				IGNORE(UNSEEN_POINTER);
		} else if (!(ptr_id = at_idmap_get(&p->pointers, 0, 0))) {
			return AT_MUNGE_NOMEM; /* 0 takes an id once and keeps it: never released */
		}
	}
	if (f->has_result) {
		if (f->res.st)
			IGNORE(int_why(&f->res, res_why));
		if (!f->res.mag)
			IGNORE("Result is NULL");
		if (!(res_id = at_idmap_get(&p->pointers, f->res.neg, f->res.mag)))
			return AT_MUNGE_NOMEM;
	}
	*tp = t;
	*ptr_id_out = ptr_id;
	*res_id_out = res_id;
	return AT_MUNGE_WRITTEN;
}

/* munge_fields, then the munged line (and a due jemalloc_stats() line) into out; a line a
 * replay cannot read is dropped with replayable_only, else written with its reason. */
static inline int apply_fields(struct at_munge *m, const struct fields *f, struct at_output *out,
			       const char **why)
{
	struct at_munge_thread local, *t;
	uint64_t ptr_id, res_id;
	int rc = munge_fields(m, f, &local, &t, &ptr_id, &res_id, why);

	if (rc != AT_MUNGE_WRITTEN)
		return rc;
	*why = unreplayable(f);
	if (!*why && (ptr_id >= AT_SLOT_LIMIT || res_id >= AT_SLOT_LIMIT))
		*why = AT_MUNGE_BIG_SLOT; /* 2^28 blocks live at once */
	if (*why && m->opt.replayable_only)
		return AT_MUNGE_IGNORED;
	put_line(out, t, f, ptr_id, res_id);
	if (m->opt.stats_every && ++m->procs[t->proc].written % m->opt.stats_every == 0)
		put_stats_line(out, t->pid_id);
	return AT_MUNGE_WRITTEN;
}

int at_munge_event(struct at_munge *m, const struct at_event *in, struct at_event out[2],
		   unsigned *n_out, const char **why)
{
	struct fields f;
	struct at_munge_thread local, *t;
	uint64_t ptr_id, res_id;
	unsigned func = in->func;

	*n_out = 0;
	memset(&f, 0, sizeof(f));
	f.pid.mag = in->pid;
	f.tid.mag = in->tid;
	f.func = (int)func;
	f.nargs = at_func_nargs[func];
	if (at_func_takes_pointer(func))
		f.ptr.mag = in->arg[0];
	f.has_result = in->has_result;
	f.res.mag = in->result;
	int rc = munge_fields(m, &f, &local, &t, &ptr_id, &res_id, why);
	if (rc != AT_MUNGE_WRITTEN)
		return rc;
	struct at_event *e = &out[0];
	e->pid = (uint32_t)t->pid_id;
	e->tid = (uint32_t)t->tid_id;
	e->func = (uint8_t)func;
	e->has_result = res_id != 0;
	e->arg[0] = f.nargs > 0 ? (at_func_takes_pointer(func) ? ptr_id : in->arg[0]) : 0;
	e->arg[1] = f.nargs > 1 ? in->arg[1] : 0;
	e->result = res_id;
	e->time_ns = in->time_ns; /* a 2.x trace's time and stack id go along */
	e->stack = in->stack;
	*why = at_munge_unreplayable_event(e); /* the numbers are numbers: no odd argument */
	if (*why && m->opt.replayable_only)
		return AT_MUNGE_IGNORED;
	*n_out = 1;
	if (m->opt.stats_every && ++m->procs[t->proc].written % m->opt.stats_every == 0) {
		out[1] = (struct at_event){ .pid = (uint32_t)t->pid_id, .tid = 1,
					    .func = AT_JEMALLOC_STATS, .time_ns = in->time_ns };
		*n_out = 2;
	}
	return AT_MUNGE_WRITTEN;
}

int at_munge_apply(struct at_munge *m, const char *line, size_t len,
		   const struct at_munge_parsed *pl, struct at_output *out, const char **why)
{
	struct fields f;

	if (pl->func >= 0) {
		parsed_fields(line, pl, &f);
	} else {
		memset(&f, 0, sizeof(f));
		if (slow_fields(line, len, &f, why) < 0)
			return AT_MUNGE_IGNORED;
	}
	return apply_fields(m, &f, out, why);
}

int at_munge_line(struct at_munge *m, const char *line, size_t len, struct at_output *out,
		  const char **why)
{
	struct at_munge_parsed pl;

	at_munge_parse(line, len, &pl);
	return at_munge_apply(m, line, len, &pl, out, why);
}

void at_munge_prefetch(const struct at_munge *m, const struct at_munge_parsed *pl)
{
	if (pl->func < 0)
		return;
	const struct at_munge_thread *t = &m->threads[thread_slot(pl->pid, pl->tid)];
	if (!t->pid_id || t->pid_mag != pl->pid || t->tid_mag != pl->tid)
		return;
	const struct at_idmap *ids = &m->procs[t->proc].pointers;
	uint64_t ptr = at_func_takes_pointer((unsigned)pl->func) ? pl->ptr : pl->res;
	if (ids->mask && ptr)
		__builtin_prefetch(&ids->slots[at_idmap_home(ids, ptr, 0)]);
}
