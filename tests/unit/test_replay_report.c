/* test_replay_report.c: unit tests of replay/report.c: the exact shape of the stats line. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "display.h"
#include "../../replay/procinfo.h"
#include "../../replay/report.h"

/* Runs rp_report_stats with stderr sent to a pipe; returns what it wrote. */
static void capture_stats(const struct rp_engine *e, uint64_t line, char *out, size_t cap)
{
	int fds[2], saved = dup(2);

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(dup2(fds[1], 2), 2);
	rp_report_stats(e, line, 0);
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	ssize_t n = read(fds[0], out, cap - 1);
	close(fds[0]);
	out[n < 0 ? 0 : n] = 0;
}

static void test_stats_line(void **state)
{
	(void)state;
	struct rp_engine e;
	struct at_event ev = { 3, 3, AT_MALLOC, 1, { 40, 0 }, 5, 0, 0 };
	const char *why;
	char out[1024];
	uint64_t v;

	assert_int_equal(rp_engine_init(&e, 64, RP_SLOP), 0);
	assert_int_equal(rp_engine_step(&e, &ev, &why), RP_STEP_DONE);
	capture_stats(&e, 12, out, sizeof(out));
	const char *prefix = "stats line=12 ops=1 objects=1 slots=6 requested=40 arena=";
	assert_memory_equal(out, prefix, strlen(prefix));
	const char *keys[] = { " mmap=", " in_use=", " free=", " rss=", " own=", " slop=" };
	const char *p = out + strlen(prefix);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		p = strstr(p, keys[i]);
		assert_non_null(p);
		p += strlen(keys[i]);
		assert_int_equal(sscanf(p, "%" SCNu64, &v), 1);
	}
	assert_int_equal(v, e.slop_bytes);
	assert_int_equal(out[strlen(out) - 1], '\n');
	assert_null(strchr(out, '\n') + 1 == out + strlen(out) ? NULL : "more than one line");
	/* own: the one resident page of the slot array */
	assert_non_null(strstr(out, " own=4096 "));

	/* -q: nothing */
	at_display_level = 1;
	capture_stats(&e, 12, out, sizeof(out));
	assert_string_equal(out, "");
	at_display_level = 2;
	free(e.slots.slot[5].ptr);
	rp_engine_fini(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
