/* text.c: logalloc text formatting and parsing. */
#include <string.h>

#include "text.h"

const char at_digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

const char at_hex_digits[17] = "0123456789abcdef";

size_t at_put_hex(char *dst, uint64_t v)
{
	int bits = v ? 64 - __builtin_clzll(v) : 1;
	size_t n = (size_t)(bits + 3) / 4;

	for (size_t i = n; i-- > 0; v >>= 4)
		dst[i] = at_hex_digits[v & 15];
	return n;
}

/* Writes "PID TID func(" and returns the length. */
static size_t put_head(char *d, const struct at_event *e)
{
	size_t n = at_put_dec(d, e->pid);
	d[n++] = ' ';
	n += at_put_dec(d + n, e->tid);
	d[n++] = ' ';
	memcpy(d + n, at_func_name[e->func], at_func_name_len[e->func]);
	n += at_func_name_len[e->func];
	d[n++] = '(';
	return n;
}

static size_t put_ptr(char *d, uint64_t v, int munged)
{
	if (munged) {
		d[0] = '#';
		return 1 + at_put_dec(d + 1, v);
	}
	d[0] = '0';
	d[1] = 'x';
	return 2 + at_put_hex(d + 2, v);
}

static size_t format(char *d, const struct at_event *e, int munged)
{
	size_t n = put_head(d, e);
	unsigned nargs = at_func_nargs[e->func];

	for (unsigned i = 0; i < nargs; i++) {
		if (i)
			d[n++] = ',';
		if (i == 0 && at_func_takes_pointer(e->func))
			n += put_ptr(d + n, e->arg[0], munged);
		else
			n += at_put_dec(d + n, e->arg[i]);
	}
	d[n++] = ')';
	if (e->has_result) {
		d[n++] = '=';
		n += put_ptr(d + n, e->result, munged);
	}
	d[n++] = '\n';
	return n;
}

size_t at_format_raw(char *dst, const struct at_event *e)
{
	return format(dst, e, 0);
}

size_t at_format_munged(char *dst, const struct at_event *e)
{
	return format(dst, e, 1);
}

/* C-locale isspace(), which is what Python 2's int() and str.strip() use. */
static inline int is_pyspace(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

struct at_span at_strip(const char *p, size_t n)
{
	while (n && is_pyspace(p[0])) {
		p++;
		n--;
	}
	while (n && is_pyspace(p[n - 1]))
		n--;
	return (struct at_span){ p, n };
}

int at_split_raw(const char *p, size_t n, struct at_raw_line *out, const char **why)
{
	const char *end = p + n;
	const char *sp = memchr(p, ' ', n);

	*why = "Malformed input";
	if (!sp)
		return -1;
	out->pid = (struct at_span){ p, (size_t)(sp - p) };
	const char *call = sp + 1;
	const char *close = memchr(call, ')', (size_t)(end - call));
	if (!close || memchr(close + 1, ')', (size_t)(end - close - 1)))
		return -1;
	const char *open = memchr(call, '(', (size_t)(close - call));
	if (!open || memchr(open + 1, '(', (size_t)(close - open - 1)))
		return -1;
	const char *tail = close + 1;
	if (tail < end) {
		if (*tail != '=')
			return -1;
		tail++;
	}
	out->result = (struct at_span){ tail, (size_t)(end - tail) };
	out->args = (struct at_span){ open + 1, (size_t)(close - open - 1) };
	out->nargs = 0;
	if (out->args.n) {
		const char *c = memchr(out->args.p, ',', out->args.n);
		out->arg0 = (struct at_span){ out->args.p,
					      c ? (size_t)(c - out->args.p) : out->args.n };
		out->nargs = 1;
		for (const char *q = out->args.p; q < close; q++)
			out->nargs += *q == ',';
	} else {
		out->arg0 = out->args;
	}
	const char *fsp = memchr(call, ' ', (size_t)(open - call));
	if (fsp) {
		out->tid = (struct at_span){ call, (size_t)(fsp - call) };
		out->func = (struct at_span){ fsp + 1, (size_t)(open - fsp - 1) };
	} else {
		out->tid = out->pid;
		out->func = (struct at_span){ call, (size_t)(open - call) };
	}
	return 0;
}

const uint8_t at_hex_plus1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

int at_parse_pyint(const char *p, size_t n, int base, int *neg, uint64_t *mag)
{
	const char *q = p, *end = p + n;
	uint64_t v = 0;
	int too_big = 0;

	*neg = 0;
	*mag = 0;
	while (q < end && is_pyspace(*q))
		q++;
	if (q < end && (*q == '+' || *q == '-')) {
		*neg = *q++ == '-';
		while (q < end && is_pyspace(*q)) /* Python 2's strtoul skips it again: "- 5" */
			q++;
	}
	if (base == 16 && end - q >= 3 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X') &&
	    at_hex_plus1[(unsigned char)q[2]])
		q += 2;
	const char *digits = q;
	for (; q < end; q++) {
		unsigned d = at_hex_plus1[(unsigned char)*q];
		if (!d || d > (unsigned)base)
			break;
		d--;
		if (v > (UINT64_MAX - d) / (unsigned)base)
			too_big = 1;
		v = v * (unsigned)base + d;
	}
	if (q == digits)
		return AT_PYINT_INVALID;
	while (q < end && is_pyspace(*q))
		q++;
	if (q != end)
		return AT_PYINT_INVALID;
	if (too_big)
		return AT_PYINT_TOO_BIG;
	*mag = v;
	if (!v)
		*neg = 0;
	return AT_PYINT_OK;
}

int at_take_dec(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;

	if (p == end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*pp = p;
	*v = x;
	return 0;
}

int at_take_hex(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	unsigned d;

	if (p == end || !at_hex_plus1[(unsigned char)*p])
		return -1;
	for (; p < end && (d = at_hex_plus1[(unsigned char)*p]) != 0; p++) {
		if (x >> 60)
			return -1;
		x = x << 4 | (d - 1);
	}
	*pp = p;
	*v = x;
	return 0;
}

int at_take_char(const char **pp, const char *end, char c)
{
	if (*pp == end || **pp != c)
		return -1;
	(*pp)++;
	return 0;
}

static int take_slot(const char **pp, const char *end, uint64_t *v)
{
	if (at_take_char(pp, end, '#') < 0)
		return -1;
	return at_take_dec(pp, end, v);
}

int at_parse_munged(const char *p, size_t n, struct at_event *ev, const char **why)
{
	const char *end = p + n;
	uint64_t pid, tid;

	while (end > p && is_pyspace(end[-1]))
		end--;
	*why = "expected a decimal process number";
	if (at_take_dec(&p, end, &pid) < 0 || pid > UINT32_MAX)
		return -1;
	*why = "expected a space and a decimal thread number";
	if (at_take_char(&p, end, ' ') < 0 || at_take_dec(&p, end, &tid) < 0 || tid > UINT32_MAX)
		return -1;
	*why = "expected a space and a function name";
	if (at_take_char(&p, end, ' ') < 0)
		return -1;
	const char *name = p;
	while (p < end && *p != '(')
		p++;
	int f = at_func_lookup(name, (size_t)(p - name));
	*why = "unknown function";
	if (f < 0)
		return -1;
	*why = "expected '(' after the function name";
	if (at_take_char(&p, end, '(') < 0)
		return -1;
	ev->pid = (uint32_t)pid;
	ev->tid = (uint32_t)tid;
	ev->func = (uint8_t)f;
	ev->arg[0] = ev->arg[1] = 0;
	for (unsigned i = 0; i < at_func_nargs[f]; i++) {
		*why = "expected ','";
		if (i && at_take_char(&p, end, ',') < 0)
			return -1;
		if (i == 0 && at_func_takes_pointer((unsigned)f)) {
			*why = "expected a slot (#N) as the pointer argument";
			if (take_slot(&p, end, &ev->arg[0]) < 0)
				return -1;
		} else {
			*why = "expected a decimal size or alignment argument";
			if (at_take_dec(&p, end, &ev->arg[i]) < 0)
				return -1;
		}
	}
	*why = "wrong number of arguments, or ')' missing";
	if (at_take_char(&p, end, ')') < 0)
		return -1;
	ev->has_result = 0;
	ev->result = 0;
	if (p < end) {
		*why = "free and jemalloc_stats take no result";
		if (!at_func_returns_pointer((unsigned)f))
			return -1;
		*why = "expected '=#N' after ')'";
		if (at_take_char(&p, end, '=') < 0 || take_slot(&p, end, &ev->result) < 0)
			return -1;
		ev->has_result = 1;
		*why = "unexpected text after the result";
		if (p != end)
			return -1;
	}
	return 0;
}
