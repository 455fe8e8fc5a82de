/* test_report_span.c: unit tests of report/span.c: each time option (--at SECONDS, --window
 * T0:T1, --every SECONDS) against traces with and without times, inside, at the edges of and
 * outside their span, with the exact refusal and its status; seconds written exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../report/span.h"

#define S 1000000000ull /* one second in ns */

/* The refusals' tails, as the report writes them after the time option. */
#define TEXT_NONE "needs event times, and this trace has none: a text log never has them; " \
		  "record a binary trace (alloctapd -f binary)"
#define BINARY_NONE "needs event times, and this trace has none: it was written without them " \
		    "(by an older alloctapd without --stacks, or converted from a text log); " \
		    "record it again with alloctapd -f binary, which writes them into every " \
		    "binary trace"
#define OUTSIDE_8S "is outside the trace, which spans 0 to 8.000123 s (seconds from its " \
		   "first event)"

static const struct rep_time_ask AT_3 = { "at", "3", 1, { 1, 0 }, { 0, 0 }, { 3 * S, 0 } };
static const struct rep_time_ask AT_99 = { "at", "99", 1, { 1, 0 }, { 0, 0 }, { 99 * S, 0 } };
static const struct rep_time_ask AT_MINUS_1 = { "at", "-1", 1, { 1, 0 }, { 1, 0 }, { S, 0 } };
static const struct rep_time_ask AT_0 = { "at", "0", 1, { 1, 0 }, { 0, 0 }, { 0, 0 } };
static const struct rep_time_ask AT_END = { "at", "8.000123", 1, { 1, 0 }, { 0, 0 },
					    { 8 * S + 123000, 0 } };
static const struct rep_time_ask AT_PAST_END = { "at", "8.000123001", 1, { 1, 0 }, { 0, 0 },
						 { 8 * S + 123001, 0 } };
static const struct rep_time_ask WIN_2_5 = { "window", "2:5", 2, { 1, 1 }, { 0, 0 },
					     { 2 * S, 5 * S } };
static const struct rep_time_ask WIN_2_9 = { "window", "2:9", 2, { 1, 1 }, { 0, 0 },
					     { 2 * S, 9 * S } };
static const struct rep_time_ask WIN_FROM_9 = { "window", "9:", 2, { 1, 0 }, { 0, 0 },
						{ 9 * S, 0 } };
static const struct rep_time_ask WIN_TO_5 = { "window", ":5", 2, { 0, 1 }, { 0, 0 }, { 0, 5 * S } };
static const struct rep_time_ask WIN_MINUS = { "window", "-1:", 2, { 1, 0 }, { 1, 0 }, { S, 0 } };
static const struct rep_time_ask EVERY_1 = { "every", "1", 0, { 1, 0 }, { 0, 0 }, { S, 0 } };
static const struct rep_time_ask EVERY_99 = { "every", "99", 0, { 1, 0 }, { 0, 0 }, { 99 * S, 0 } };

static void test_check(void **state)
{
	static const struct {
		const struct rep_time_ask *ask[2];
		enum rep_times times;
		uint64_t span_ns;
		int rc;
		const char *msg;
	} cases[] = {
		/* inside the span, edges included: answered */
		{ { &AT_3 }, REP_TIMES_PRESENT, 8 * S + 123000, 0, "" },
		{ { &AT_0 }, REP_TIMES_PRESENT, 8 * S + 123000, 0, "" },
		{ { &AT_END }, REP_TIMES_PRESENT, 8 * S + 123000, 0, "" },
		{ { &WIN_2_5 }, REP_TIMES_PRESENT, 8 * S + 123000, 0, "" },
		{ { &WIN_TO_5 }, REP_TIMES_PRESENT, 8 * S + 123000, 0, "" },
		{ { &EVERY_99 }, REP_TIMES_PRESENT, 8 * S + 123000, 0, "" }, /* an interval */
		{ { NULL }, REP_TIMES_NONE_TEXT, 0, 0, "" },   /* nothing asked of times */
		/* outside the span: refused, naming it */
		{ { &AT_99 }, REP_TIMES_PRESENT, 8 * S + 123000, REP_EXIT_UNANSWERABLE,
		  "--at 99 " OUTSIDE_8S },
		{ { &AT_MINUS_1 }, REP_TIMES_PRESENT, 8 * S + 123000, REP_EXIT_UNANSWERABLE,
		  "--at -1 " OUTSIDE_8S },
		{ { &AT_PAST_END }, REP_TIMES_PRESENT, 8 * S + 123000, REP_EXIT_UNANSWERABLE,
		  "--at 8.000123001 " OUTSIDE_8S },
		{ { &WIN_2_9 }, REP_TIMES_PRESENT, 8 * S + 123000, REP_EXIT_UNANSWERABLE,
		  "--window 2:9 " OUTSIDE_8S },
		{ { &WIN_FROM_9 }, REP_TIMES_PRESENT, 8 * S + 123000, REP_EXIT_UNANSWERABLE,
		  "--window 9: " OUTSIDE_8S },
		{ { &WIN_MINUS }, REP_TIMES_PRESENT, 8 * S + 123000, REP_EXIT_UNANSWERABLE,
		  "--window -1: " OUTSIDE_8S },
		{ { &AT_3 }, REP_TIMES_PRESENT, 0, REP_EXIT_UNANSWERABLE,
		  "--at 3 is outside the trace, which spans 0 to 0 s (seconds from its first event)" },
		/* the first refused of several is said */
		{ { &WIN_2_5, &AT_99 }, REP_TIMES_PRESENT, 8 * S + 123000, REP_EXIT_UNANSWERABLE,
		  "--at 99 " OUTSIDE_8S },
		{ { &WIN_2_9, &AT_99 }, REP_TIMES_PRESENT, 8 * S + 123000, REP_EXIT_UNANSWERABLE,
		  "--window 2:9 " OUTSIDE_8S },
		/* no times: refused, saying why and how to get them */
		{ { &AT_3 }, REP_TIMES_NONE_TEXT, 0, REP_EXIT_UNANSWERABLE, "--at 3 " TEXT_NONE },
		{ { &AT_3 }, REP_TIMES_NONE_BINARY, 0, REP_EXIT_UNANSWERABLE, "--at 3 " BINARY_NONE },
		{ { &AT_0 }, REP_TIMES_NONE_BINARY, 0, REP_EXIT_UNANSWERABLE, "--at 0 " BINARY_NONE },
		{ { &WIN_2_5 }, REP_TIMES_NONE_TEXT, 0, REP_EXIT_UNANSWERABLE, "--window 2:5 " TEXT_NONE },
		{ { &EVERY_1 }, REP_TIMES_NONE_BINARY, 0, REP_EXIT_UNANSWERABLE,
		  "--every 1 " BINARY_NONE "; or use timeline --churn BYTES, which needs none" },
		{ { &AT_3 }, REP_TIMES_NONE_EMPTY, 0, REP_EXIT_UNANSWERABLE,
		  "--at 3 needs event times, and this trace has none: it holds no event" },
	};

	(void)state;
	assert_int_equal(REP_EXIT_UNANSWERABLE, 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rep_time_asks asks = { .n = 0 };
		char msg[512];

		print_message("case %zu\n", i);
		for (size_t k = 0; k < 2 && cases[i].ask[k]; k++)
			assert_int_equal(rep_time_asks_add(&asks, cases[i].ask[k]), 0);
		memset(msg, 'x', sizeof(msg));
		assert_int_equal(rep_time_check(&asks, cases[i].times, cases[i].span_ns, msg,
						sizeof(msg)),
				 cases[i].rc);
		assert_string_equal(msg, cases[i].msg);
	}
}

/* A message longer than the room given is cut, still terminated. */
static void test_check_short_room(void **state)
{
	struct rep_time_asks asks = { .n = 0 };
	char msg[9];

	(void)state;
	rep_time_asks_add(&asks, &AT_99);
	assert_int_equal(rep_time_check(&asks, REP_TIMES_PRESENT, S, msg, sizeof(msg)),
			 REP_EXIT_UNANSWERABLE);
	assert_string_equal(msg, "--at 99 ");
}

/* The asks hold REP_TIME_ASKS; one more is refused and changes nothing. */
static void test_asks_full(void **state)
{
	struct rep_time_asks asks = { .n = 0 };

	(void)state;
	for (size_t i = 0; i < REP_TIME_ASKS; i++)
		assert_int_equal(rep_time_asks_add(&asks, &AT_3), 0);
	assert_int_equal(rep_time_asks_add(&asks, &AT_99), -1);
	assert_int_equal(asks.n, REP_TIME_ASKS);
	assert_string_equal(asks.ask[REP_TIME_ASKS - 1].arg, "3");
}

static void test_seconds_text(void **state)
{
	static const struct {
		uint64_t ns;
		const char *text;
	} cases[] = {
		{ 0, "0" },
		{ 8 * S, "8" },
		{ 1, "0.000000001" },
		{ 500000, "0.0005" },
		{ 3999000, "0.003999" },
		{ 8 * S + 123000, "8.000123" },
		{ S + S / 4, "1.25" },
		{ UINT64_MAX, "18446744073.709551615" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(rep_seconds_text(cases[i].ns, buf), cases[i].text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_check_short_room),
		cmocka_unit_test(test_asks_full),
		cmocka_unit_test(test_seconds_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
