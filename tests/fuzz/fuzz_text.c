/* fuzz_text.c: the line parsers of lib/text.h.
 *
 * The input is cut into lines at '\n'; each line, in a block of its own exact size, goes
 * through at_strip, at_split_raw, the Python-int parser (at_parse_pyint, base 10 and 16) and
 * at_parse_munged. Checked: every span stays inside the line, the integer parser agrees with a
 * plain reading of Python 2's rules, and a munged line parsed, printed again and parsed again
 * gives the same event. */
#include "fuzz_input.h"
#include <string.h>

#include "text.h"

static int inside(struct at_span s, const char *p, size_t n)
{
	return s.p >= p && s.p <= p + n && s.n <= (size_t)(p + n - s.p);
}

static int is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static void check_strip(const char *p, size_t n)
{
	struct at_span s = at_strip(p, n);

	FUZZ_CHECK(inside(s, p, n));
	FUZZ_CHECK(s.n == 0 || (!is_space(s.p[0]) && !is_space(s.p[s.n - 1])));
}

static void check_split(const char *p, size_t n)
{
	struct at_raw_line l;
	const char *why = NULL;

	if (at_split_raw(p, n, &l, &why) < 0) {
		FUZZ_CHECK(why != NULL);
		return;
	}
	FUZZ_CHECK(inside(l.pid, p, n) && inside(l.tid, p, n) && inside(l.func, p, n));
	FUZZ_CHECK(inside(l.args, p, n) && inside(l.arg0, p, n) && inside(l.result, p, n));
	FUZZ_CHECK(l.args.p > p && l.args.p[-1] == '(');
	FUZZ_CHECK(l.args.p + l.args.n < p + n && l.args.p[l.args.n] == ')');
	FUZZ_CHECK(l.arg0.p == l.args.p && l.arg0.n <= l.args.n);
	FUZZ_CHECK(l.result.p > p); /* source.c looks at result.p[-1] */
	unsigned commas = 0;
	for (size_t i = 0; i < l.args.n; i++)
		commas += l.args.p[i] == ',';
	FUZZ_CHECK(l.nargs == (l.args.n ? commas + 1 : 0));
}

/* A second, plain reading of Python 2's int(text, base) for base 10 and 16: whitespace around,
 * a sign that whitespace may follow, 0x/0X for base 16, at least one digit; a magnitude past
 * 64 bits is AT_PYINT_TOO_BIG, -0 is 0. at_parse_pyint must agree with it on every input. */
static int reference_pyint(const char *p, size_t n, int base, int *neg, uint64_t *mag)
{
	static const char space[] = " \t\n\r\v\f";
	size_t i = 0, end = n;
	int too_big = 0;

	while (i < end && p[i] && strchr(space, p[i]))
		i++;
	while (end > i && p[end - 1] && strchr(space, p[end - 1]))
		end--;
	*neg = 0;
	if (i < end && (p[i] == '+' || p[i] == '-')) {
		*neg = p[i++] == '-';
		while (i < end && p[i] && strchr(space, p[i]))
			i++;
	}
	if (base == 16 && end - i >= 2 && p[i] == '0' && (p[i + 1] == 'x' || p[i + 1] == 'X'))
		i += 2;
	if (i == end)
		return AT_PYINT_INVALID;
	*mag = 0;
	for (; i < end; i++) {
		int d = p[i] >= '0' && p[i] <= '9'                 ? p[i] - '0'
			: base == 16 && p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10
			: base == 16 && p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 10
								    : -1;
		if (d < 0)
			return AT_PYINT_INVALID;
		if (*mag > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			too_big = 1;
		else
			*mag = *mag * (uint64_t)base + (uint64_t)d;
	}
	if (too_big)
		return AT_PYINT_TOO_BIG;
	if (*mag == 0)
		*neg = 0;
	return AT_PYINT_OK;
}

static void check_pyint(const char *p, size_t n, int base)
{
	int neg1, neg2;
	uint64_t mag1, mag2;
	int rc1 = at_parse_pyint(p, n, base, &neg1, &mag1);
	int rc2 = reference_pyint(p, n, base, &neg2, &mag2);

	FUZZ_CHECK(rc1 == rc2);
	if (rc1 == AT_PYINT_OK) {
		FUZZ_CHECK(mag1 == mag2);
		FUZZ_CHECK(neg1 == neg2);
	}
}

static int same_event(const struct at_event *a, const struct at_event *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->func == b->func &&
	       a->has_result == b->has_result && a->arg[0] == b->arg[0] &&
	       a->arg[1] == b->arg[1] && a->result == b->result;
}

static void check_munged(const char *p, size_t n)
{
	struct at_event ev, again;
	const char *why = NULL;
	char line[AT_LINE_MAX];

	if (at_parse_munged(p, n, &ev, &why) < 0) {
		FUZZ_CHECK(why != NULL);
		return;
	}
	FUZZ_CHECK(ev.func < AT_FUNC_COUNT);
	FUZZ_CHECK(!ev.has_result || at_func_returns_pointer(ev.func));
	size_t len = at_format_munged(line, &ev);
	FUZZ_CHECK(len > 0 && len <= AT_LINE_MAX && line[len - 1] == '\n');
	FUZZ_CHECK(at_parse_munged(line, len - 1, &again, &why) == 0);
	FUZZ_CHECK(same_event(&ev, &again));
}

static void check_line(const uint8_t *data, size_t n)
{
	char *p = fuzz_exact_copy(data, n);
	struct at_span st = at_strip(p, n);

	check_strip(p, n);
	check_split(st.p, st.n);
	check_pyint(p, n, 10);
	check_pyint(p, n, 16);
	check_munged(p, n);
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *end = data + size;

	for (const uint8_t *p = data; p < end;) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		check_line(p, n);
		p += n + 1;
	}
	check_line(data, size); /* the whole input as one line, newlines and all */
	return 0;
}
