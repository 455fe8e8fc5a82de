/* test_report_html_data.c: unit tests of report/html_data.c, table-driven: short event
 * sequences (x the event number, as on a trace without times) and the JSON the page gets:
 * sites split by size class where they have no stack, each column where a site changed (live
 * bytes and blocks at its end, allocations, bytes, temporaries), what each site held at its
 * process's peak and at the end; columns merging in pairs as the x axis grows; sites past the
 * kept ones folded into "other sites" with exact totals. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/html_data.h"

#define MAX_EVENTS 8

struct ev {
	uint32_t pid, tid;
	enum at_func func;
	uint64_t a0, a1, result;
};

struct data_case {
	const char *name;
	struct ev ev[MAX_EVENTS];
	const char *want;   /* the whole JSON */
	uint64_t peak, end; /* rep_html_data_totals */
};

#define E(pid, tid, f, a0, a1, r) { pid, tid, AT_##f, a0, a1, r }

static const struct data_case cases[] = {
	{ "two size classes of malloc; the peak's values kept when the sites change after it",
	  { E(1, 1, MALLOC, 100, 0, 0x100), E(1, 1, MALLOC, 20, 0, 0x200),
	    E(1, 2, FREE, 0x100, 0, 0), E(1, 1, MALLOC, 30, 0, 0x300) },
	  "{\"width\":1,\"ncols\":5,\"frames\":[[\"malloc\",\"\"],\n[\"size 64 B to 127 B\",\"\"],\n"
	  "[\"size 16 B to 31 B\",\"\"]],\n\"sites\":["
	  "{\"pid\":1,\"s\":[0,1],\"peak\":[100,1],\"end\":[0,0],\"c\":[1,100,1,1,100,0,0,3,0,0,0,0,0,0]},\n"
	  "{\"pid\":1,\"s\":[0,2],\"peak\":[20,1],\"end\":[50,2],\"c\":[2,20,1,1,20,0,0,4,50,2,1,30,0,0]}]}",
	  120, 50 },
	{ "a temporary: freed by its thread's next event, counted in its column",
	  { E(1, 1, MALLOC, 8, 0, 0x100), E(1, 1, FREE, 0x100, 0, 0), E(1, 1, CALLOC, 2, 4, 0x200) },
	  "{\"width\":1,\"ncols\":4,\"frames\":[[\"malloc\",\"\"],\n[\"size 8 B to 15 B\",\"\"],\n"
	  "[\"calloc\",\"\"]],\n\"sites\":["
	  "{\"pid\":1,\"s\":[0,1],\"peak\":[8,1],\"end\":[0,0],\"c\":[1,8,1,1,8,0,0,2,0,0,0,0,1,8]},\n"
	  "{\"pid\":1,\"s\":[2,1],\"peak\":[0,0],\"end\":[8,1],\"c\":[3,8,1,1,8,0,0]}]}",
	  8, 8 },
	{ "realloc: the old block released from its site, the new one at the realloc's; two processes",
	  { E(1, 1, MALLOC, 16, 0, 0x100), E(1, 1, REALLOC, 0x100, 4000, 0x200),
	    E(2, 2, MALLOC, 0, 0, 0x100) },
	  "{\"width\":1,\"ncols\":4,\"frames\":[[\"malloc\",\"\"],\n[\"size 16 B to 31 B\",\"\"],\n"
	  "[\"realloc\",\"\"],\n[\"size 2048 B to 4095 B\",\"\"],\n[\"size 0 B\",\"\"]],\n\"sites\":["
	  "{\"pid\":1,\"s\":[0,1],\"peak\":[0,0],\"end\":[0,0],\"c\":[1,16,1,1,16,0,0,2,0,0,0,0,1,16]},\n"
	  "{\"pid\":1,\"s\":[2,3],\"peak\":[4000,1],\"end\":[4000,1],\"c\":[2,4000,1,1,4000,0,0]},\n"
	  "{\"pid\":2,\"s\":[0,4],\"peak\":[0,0],\"end\":[0,1],\"c\":[3,0,1,1,0,0,0]}]}",
	  4000, 4000 },
};

static struct rep_html_data *tick_data;

static void tick(void *arg, struct rep_heap *h, const struct at_event *ev)
{
	(void)arg;
	(void)ev;
	rep_html_data_event(tick_data, rep_heap_events(h) + 1);
}

/* The data of events ev (n of them) as JSON, in a string the caller frees. */
static char *run(const struct ev *ev, size_t n, uint64_t *peak, uint64_t *end)
{
	struct rep_sites x;
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(rep_sites_init(&x, REP_WEIGHT_ALLOC_COUNT, NULL, NULL, NULL), 0);
	struct rep_heap *h = rep_heap_new(&x, &(struct rep_heap_options){ 0 });
	assert_non_null(h);
	struct rep_html_data *d = rep_html_data_new(h);
	assert_non_null(d);
	tick_data = d;
	rep_heap_on_event(h, tick, NULL);
	for (size_t i = 0; i < n; i++) {
		struct at_event e = { .pid = ev[i].pid, .tid = ev[i].tid, .func = (uint8_t)ev[i].func,
				      .has_result = ev[i].func != AT_FREE,
				      .arg = { ev[i].a0, ev[i].a1 }, .result = ev[i].result };
		assert_int_equal(rep_heap_event(h, &e), 0);
	}
	rep_heap_finish(h);
	rep_html_data_finish(d);
	rep_html_data_totals(d, peak, end);
	FILE *m = open_memstream(&text, &len);
	assert_non_null(m);
	assert_int_equal(rep_html_data_write(m, d), 0);
	assert_int_equal(fclose(m), 0);
	rep_html_data_free(d);
	rep_heap_free(h);
	rep_sites_free(&x);
	return text;
}

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = 0;
		uint64_t peak, end;
		print_message("case: %s\n", cases[i].name);
		while (n < MAX_EVENTS && cases[i].ev[n].pid)
			n++;
		char *json = run(cases[i].ev, n, &peak, &end);
		assert_string_equal(json, cases[i].want);
		assert_int_equal(peak, cases[i].peak);
		assert_int_equal(end, cases[i].end);
		free(json);
	}
}

/* 450 events: the columns of width 1 merge into width 2 at x 200, 4 at x 400; each merged
 * column keeps the last live value and the sums of what happened in it. */
static void test_columns_merge(void **state)
{
	struct ev ev[450];
	uint64_t peak, end;

	(void)state;
	for (size_t i = 0; i < 450; i++)
		ev[i] = (struct ev)E(1, 1, MALLOC, 1, 0, 0x1000 + 16 * i);
	char *json = run(ev, 450, &peak, &end);
	assert_non_null(strstr(json, "{\"width\":4,\"ncols\":113,"));
	/* column 0 holds x 0..3 (events 1..3), column 1 x 4..7, the last x 448..450 */
	assert_non_null(strstr(json, "\"c\":[0,3,3,3,3,0,0,1,7,7,4,4,0,0,2,11,11,4,4,0,0,"));
	assert_non_null(strstr(json, ",112,450,450,3,3,0,0]}]}"));
	assert_int_equal(peak, 450);
	assert_int_equal(end, 450);
	free(json);
}

/* More sites than are kept (one per process: each the same figures): the first
 * REP_HTML_SITES kept, the rest one "other sites" entry of pid 0 whose totals are theirs. */
static void test_folded(void **state)
{
	enum { N = REP_HTML_SITES + 50 };
	struct ev ev[N];
	uint64_t peak, end;

	(void)state;
	for (size_t i = 0; i < N; i++)
		ev[i] = (struct ev)E((uint32_t)i + 1, (uint32_t)i + 1, MALLOC, 10, 0, 0x1000);
	char *json = run(ev, N, &peak, &end);
	size_t pids = 0;
	for (const char *p = json; (p = strstr(p, "{\"pid\":")); p++)
		pids++;
	assert_int_equal(pids, REP_HTML_SITES + 1);
	assert_non_null(strstr(json, "[\"other sites\",\"\"]"));
	assert_non_null(strstr(json, "{\"pid\":0,\"s\":[2],\"peak\":[500,50],\"end\":[500,50],\"c\":[0,0,0,0,0,0,0,"));
	assert_int_equal(peak, 10 * N);
	assert_int_equal(end, 10 * N);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_columns_merge),
		cmocka_unit_test(test_folded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
