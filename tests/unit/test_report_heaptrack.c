/* test_report_heaptrack.c: unit tests of report/heaptrack.c: given mappings, stacks, events and
 * RSS records, the exact heaptrack file: strings, ips and trace nodes written when first used,
 * allocation infos by (site, size) first allocated in their order, + and - in trace order
 * (failed calls, frees of blocks not live and free(NULL) writing nothing), c lines per later
 * millisecond and at the 10 ms tick after a pause, R lines in 4096-byte pages; cut stacks under
 * their marker; a second process refused without a pid, one chosen with it; the gzip stream
 * the same text; a failed write. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "../../report/heaptrack.h"
#include "display.h"

struct test_event {
	uint32_t pid;
	uint8_t func;
	uint64_t arg0, arg1, result;
	uint32_t stack;
	uint64_t time_ns;
};

/* A pass: the sites, the engine, the file into a memory stream. */
struct pass {
	struct rep_sites x;
	struct rep_heap *h;
	struct rep_heaptrack t;
	FILE *out;
	char *buf;
	size_t len;
};

static void start(struct pass *p, int gz, int have_pid, uint32_t pid)
{
	struct rep_heap_options o = { .have_pid = have_pid, .pid = pid };

	memset(p, 0, sizeof(*p));
	assert_int_equal(rep_sites_init(&p->x, REP_WEIGHT_ALLOC_COUNT, "/nonexistent", NULL, NULL),
			 0);
	p->h = rep_heap_new(&p->x, &o);
	assert_non_null(p->h);
	p->out = open_memstream(&p->buf, &p->len);
	assert_non_null(p->out);
	assert_int_equal(rep_heaptrack_start(&p->t, p->out, gz, p->h, &p->x, "T", have_pid, pid), 0);
}

/* Feeds the events: each must be taken (0). */
static void feed(struct pass *p, const struct test_event *evs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct at_event ev = { .pid = evs[i].pid ? evs[i].pid : 1, .tid = 1,
				       .func = evs[i].func, .has_result = evs[i].func != AT_FREE,
				       .arg = { evs[i].arg0, evs[i].arg1 }, .result = evs[i].result,
				       .stack = evs[i].stack, .time_ns = evs[i].time_ns };

		assert_int_equal(rep_heaptrack_event(&p->t, &ev), 0);
	}
}

/* Ends the file: its text (the caller frees it), the pass freed. */
static char *end(struct pass *p)
{
	assert_int_equal(rep_heaptrack_end(&p->t), 0);
	rep_heaptrack_free(&p->t);
	fclose(p->out);
	rep_heap_free(p->h);
	rep_sites_free(&p->x);
	return p->buf;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Without stacks: each function its own one-frame trace; infos by site and size. */
static const struct test_event plain[] = {
	{ 0, AT_MALLOC, 8, 0, 0x10, 0, 0 },
	{ 0, AT_CALLOC, 1, 1, 0x20, 0, 0 },
	{ 0, AT_REALLOC, 0x10, 9, 0x10, 0, 0 }, /* releases info 0, allocates its own */
	{ 0, AT_FREE, 0x10, 0, 0, 0, 0 },
	{ 0, AT_MALLOC, 8, 0, 0, 0, 0 },        /* failed: nothing */
	{ 0, AT_FREE, 0x999, 0, 0, 0, 0 },      /* not live: nothing */
	{ 0, AT_FREE, 0, 0, 0, 0, 0 },          /* free(NULL): nothing */
	{ 0, AT_MALLOC, 8, 0, 0x30, 0, 0 },     /* info 0 again */
	{ 0, AT_FREE, 0x30, 0, 0, 0, 0 },
};
static const char plain_want[] =
	"v 10400 3\nI 1000 0\nX alloctap trace T, pid 1\n"
	"s 6 malloc\ni 0 0 1\nt 1 0\na 8 1\n+ 0\n"
	"s 6 calloc\ni 0 0 2\nt 2 0\na 1 2\n+ 1\n"
	"- 0\ns 7 realloc\ni 0 0 3\nt 3 0\na 9 3\n+ 2\n"
	"- 2\n+ 0\n- 0\n"
	"# strings: 3\n# ips: 3\n";

/* Times: a c line per later millisecond, and the 10 ms tick after a pause. */
static const struct test_event timed[] = {
	{ 0, AT_MALLOC, 16, 0, 0x10, 0, 1000000000 },
	{ 0, AT_MALLOC, 16, 0, 0x20, 0, 1000400000 },  /* the same ms: no c */
	{ 0, AT_MALLOC, 16, 0, 0x30, 0, 1001500000 },  /* ms 1 */
	{ 0, AT_FREE, 0x20, 0, 0, 0, 1031000000 },     /* ms 31: the tick at 11 first */
};
static const char timed_want[] =
	"v 10400 3\nI 1000 0\nX alloctap trace T, pid 1\n"
	"c 0\ns 6 malloc\ni 0 0 1\nt 1 0\na 10 1\n+ 0\n+ 0\n"
	"c 1\n+ 0\n"
	"c b\nc 1f\n- 0\n"
	"# strings: 1\n# ips: 1\n";

static void test_files(void **state)
{
	static const struct {
		const char *name;
		const struct test_event *evs;
		size_t n;
		const char *want;
	} cases[] = {
		{ "no stacks", plain, N(plain), plain_want },
		{ "times", timed, N(timed), timed_want },
	};

	(void)state;
	for (size_t k = 0; k < N(cases); k++) {
		struct pass p;

		start(&p, 0, 0, 0);
		feed(&p, cases[k].evs, cases[k].n);
		char *got = end(&p);
		if (strcmp(got, cases[k].want) != 0)
			fail_msg("%s:\n%s\nwant:\n%s", cases[k].name, got, cases[k].want);
		free(got);
	}
}

/* Stacks: unnamed frames in a mapping (the object cannot be read: an ip with its module and no
 * frame), a cut stack under its marker. A stack record's first pc is in the allocation
 * function; its callers are the rest, root last. */
static void test_stacks(void **state)
{
	struct pass p;
	struct at_mapping m = { .pid = 1, .start = 0x1000, .end = 0x2000, .path = "/nonexistent/a.so" };
	struct at_stack s1 = { .id = 1, .pid = 1, .count = 3, .pcs = { 0x1100, 0x1200, 0x1300 } };
	struct at_stack s2 = { .id = 2, .pid = 1, .count = 3, .flags = AT_STACK_TRUNCATED,
			       .pcs = { 0x1100, 0x1400, 0x1300 } };
	static const struct test_event evs[] = {
		{ 0, AT_MALLOC, 32, 0, 0x10, 1, 0 },
		{ 0, AT_MALLOC, 32, 0, 0x20, 1, 0 },
		{ 0, AT_MALLOC, 32, 0, 0x30, 2, 0 },
		{ 0, AT_FREE, 0x10, 0, 0, 0, 0 },
	};

	(void)state;
	start(&p, 0, 0, 0);
	assert_int_equal(rep_sites_mapping(&p.x, &m), 0);
	assert_int_equal(rep_sites_stack(&p.x, &s1), 0);
	assert_int_equal(rep_sites_stack(&p.x, &s2), 0);
	feed(&p, evs, N(evs));
	char *got = end(&p);
	assert_string_equal(got, "v 10400 3\nI 1000 0\nX alloctap trace T, pid 1\n"
				 "s 11 /nonexistent/a.so\ni 1300 1\nt 1 0\ni 1200 1\nt 2 1\n"
				 "a 20 2\n+ 0\n+ 0\n"
				 "s b [truncated]\ni 0 0 2\nt 3 0\nt 1 3\ni 1400 1\nt 4 4\n"
				 "a 20 5\n+ 1\n- 0\n"
				 "# strings: 2\n# ips: 4\n");
	free(got);
}

/* One process: a second refused without a pid; with one, only its events and RSS. */
static void test_processes(void **state)
{
	struct pass p;
	struct at_event ev = { .pid = 1, .tid = 1, .func = AT_MALLOC, .has_result = 1,
			       .arg = { 8 }, .result = 0x10 };

	(void)state;
	at_display_level = 0;
	start(&p, 0, 0, 0);
	assert_int_equal(rep_heaptrack_event(&p.t, &ev), 0);
	ev.pid = 2;
	errno = 0;
	assert_int_equal(rep_heaptrack_event(&p.t, &ev), -1);
	assert_int_equal(errno, ECANCELED);
	free(end(&p));

	start(&p, 0, 1, 2);
	ev.pid = 1;
	assert_int_equal(rep_heaptrack_event(&p.t, &ev), 0);
	ev.pid = 2;
	ev.arg[0] = 4;
	assert_int_equal(rep_heaptrack_event(&p.t, &ev), 0);
	struct at_rss other = { .pid = 1, .bytes = 4096 }, own = { .pid = 2, .bytes = 4097 };
	assert_int_equal(rep_heap_rss(p.h, &other), 0);
	rep_heaptrack_rss(&p.t, &other);
	assert_int_equal(rep_heap_rss(p.h, &own), 0);
	rep_heaptrack_rss(&p.t, &own);
	char *got = end(&p);
	assert_string_equal(got, "v 10400 3\nI 1000 0\nX alloctap trace T, pid 2\n"
				 "s 6 malloc\ni 0 0 1\nt 1 0\na 4 1\n+ 0\nR 2\n"
				 "# strings: 1\n# ips: 1\n");
	free(got);
}

/* gzip: the same text, one gzip stream. */
static void test_gzip(void **state)
{
	struct pass p;
	unsigned char text[4096];
	z_stream z;

	(void)state;
	start(&p, 1, 0, 0);
	feed(&p, plain, N(plain));
	char *got = end(&p);
	size_t n = p.len;
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)got;
	z.avail_in = (uInt)n;
	z.next_out = text;
	z.avail_out = sizeof(text) - 1;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	text[sizeof(text) - 1 - z.avail_out] = 0;
	inflateEnd(&z);
	assert_string_equal((char *)text, plain_want);
	free(got);
}

/* A failed write: the event that wrote it, or the end, fails with the errno. */
static void test_write_error(void **state)
{
	struct pass p;
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	assert_non_null(full);
	setvbuf(full, NULL, _IONBF, 0);
	start(&p, 0, 0, 0);
	p.t.out = full;
	struct at_event ev = { .pid = 1, .tid = 1, .func = AT_MALLOC, .has_result = 1,
			       .arg = { 8 }, .result = 0x10 };
	errno = 0;
	assert_int_equal(rep_heaptrack_event(&p.t, &ev), -1);
	assert_int_equal(errno, ENOSPC);
	errno = 0;
	assert_int_equal(rep_heaptrack_end(&p.t), -1);
	assert_int_equal(errno, ENOSPC);
	p.t.out = p.out;
	rep_heaptrack_free(&p.t);
	fclose(p.out);
	free(p.buf);
	rep_heap_free(p.h);
	rep_sites_free(&p.x);
	fclose(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_stacks),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
