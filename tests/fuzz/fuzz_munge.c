/* fuzz_munge.c: munge/munge.h over arbitrary raw lines.
 *
 * The input is cut into lines at '\n', each munged in a block of its own exact size by four
 * munge states side by side:
 *   A  at_munge_line(): the fast parser for the common shape, the reference's split otherwise;
 *   B  at_munge_apply() with the fast parser skipped, so every line takes the reference's path;
 *   C  at_munge_event() on the event of each line that is exactly at_format_raw() of an event;
 *   D  at_munge_line() on those same lines.
 * A and B must give the same result for every line and the same output; so must C (its
 * events printed with at_format_munged) and D. */
#include "fuzz_input.h"
#include "munge/munge.h"
#include "output.h"
#include "text.h"

#define STATS_EVERY 5

struct sink {
	int fd;
	struct at_output out;
};

static void sink_open(struct sink *s)
{
	s->fd = fuzz_memfd(NULL, 0);
	FUZZ_CHECK(at_output_open_fd(&s->out, s->fd, "<fuzz>") == 0);
}

/* Closes the sink; returns what was written (malloc'ed), *n its length. */
static uint8_t *sink_close(struct sink *s, size_t *n)
{
	FUZZ_CHECK(at_output_close(&s->out) == 0);
	uint8_t *p = fuzz_memfd_contents(s->fd, n);
	close(s->fd);
	return p;
}

/* A decimal of digits only, no overflow; advances *pp. */
static int take_dec(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;

	if (p == end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*pp = p;
	*v = x;
	return 0;
}

/* The event of a line at_munge_parse() took, if the line is exactly at_format_raw() of it
 * (without the newline). 0, or -1 for any other line. */
static int canonical_event(const char *line, size_t n, const struct at_munge_parsed *pl,
			   struct at_event *ev)
{
	char again[AT_LINE_MAX];

	if (pl->func < 0 || pl->pid > UINT32_MAX || pl->tid > UINT32_MAX)
		return -1;
	memset(ev, 0, sizeof(*ev));
	ev->pid = (uint32_t)pl->pid;
	ev->tid = (uint32_t)pl->tid;
	ev->func = (uint8_t)pl->func;
	ev->has_result = pl->has_result;
	ev->result = pl->has_result ? pl->res : 0;
	unsigned first = 0;
	const char *p = line + pl->args_off, *end = p + pl->args_len;
	if (at_func_takes_pointer(ev->func)) {
		ev->arg[0] = pl->ptr;
		p = line + pl->rest_off;
		first = 1;
	}
	for (unsigned i = first; i < at_func_nargs[ev->func]; i++) {
		if (i && (p == end || *p++ != ','))
			return -1;
		if (take_dec(&p, end, &ev->arg[i]) < 0)
			return -1;
	}
	if (p != end || n + 1 > AT_LINE_MAX)
		return -1;
	size_t len = at_format_raw(again, ev);
	return len == n + 1 && memcmp(again, line, n) == 0 ? 0 : -1;
}

struct run {
	struct at_munge a, b, c, d;
	struct sink sa, sb, sd;
	char *c_text;    /* C's events as munged text */
	size_t c_len, c_cap;
};

static void c_append(struct run *r, const struct at_event *ev)
{
	if (r->c_len + AT_LINE_MAX > r->c_cap) {
		r->c_cap = r->c_cap ? r->c_cap * 2 : 4096;
		r->c_text = realloc(r->c_text, r->c_cap);
		FUZZ_CHECK(r->c_text != NULL);
	}
	r->c_len += at_format_munged(r->c_text + r->c_len, ev);
}

static void munge_one(struct run *r, const char *line, size_t n)
{
	struct at_munge_parsed pl, slow = { .func = -1 };
	const char *why_a = NULL, *why_b = NULL, *why_c = NULL, *why_d = NULL;

	at_munge_parse(line, n, &pl);
	int rc_a = at_munge_apply(&r->a, line, n, &pl, &r->sa.out, &why_a);
	int rc_b = at_munge_apply(&r->b, line, n, &slow, &r->sb.out, &why_b);
	FUZZ_CHECK(rc_a == rc_b);
	FUZZ_CHECK(rc_a == AT_MUNGE_WRITTEN || rc_a == AT_MUNGE_IGNORED);
	if (rc_a == AT_MUNGE_IGNORED)
		FUZZ_CHECK(why_a && why_b && strcmp(why_a, why_b) == 0);

	struct at_event ev, out[2];
	unsigned n_out;
	if (canonical_event(line, n, &pl, &ev) < 0)
		return;
	int rc_c = at_munge_event(&r->c, &ev, out, &n_out, &why_c);
	int rc_d = at_munge_line(&r->d, line, n, &r->sd.out, &why_d);
	FUZZ_CHECK(rc_c == rc_d);
	if (rc_c == AT_MUNGE_IGNORED)
		FUZZ_CHECK(why_c && why_d && strcmp(why_c, why_d) == 0);
	FUZZ_CHECK(n_out <= 2 && (n_out > 0) == (rc_c == AT_MUNGE_WRITTEN));
	for (unsigned i = 0; i < n_out; i++)
		c_append(r, &out[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct at_munge_options opt = { .stats_every = STATS_EVERY };
	struct run *r = calloc(1, sizeof(*r));
	const uint8_t *end = data + size;

	FUZZ_CHECK(r != NULL);
	at_munge_init(&r->a, &opt);
	at_munge_init(&r->b, &opt);
	at_munge_init(&r->c, &opt);
	at_munge_init(&r->d, &opt);
	sink_open(&r->sa);
	sink_open(&r->sb);
	sink_open(&r->sd);
	for (const uint8_t *p = data; p < end;) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = fuzz_exact_copy(p, n);
		munge_one(r, line, n);
		free(line);
		p += n + 1;
	}
	size_t na, nb, nd;
	uint8_t *ta = sink_close(&r->sa, &na), *tb = sink_close(&r->sb, &nb);
	uint8_t *td = sink_close(&r->sd, &nd);
	FUZZ_CHECK(na == nb && memcmp(ta, tb, na) == 0);
	FUZZ_CHECK(nd == r->c_len && (nd == 0 || memcmp(td, r->c_text, nd) == 0));
	free(ta);
	free(tb);
	free(td);
	free(r->c_text);
	at_munge_free(&r->a);
	at_munge_free(&r->b);
	at_munge_free(&r->c);
	at_munge_free(&r->d);
	free(r);
	return 0;
}
