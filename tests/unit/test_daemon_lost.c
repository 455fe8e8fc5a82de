/* test_daemon_lost.c: unit tests of daemon/trace/lost.c: what counts as a lost event, what the
 * output is told and when, and reading the BPF program's per-CPU counters (daemon/bpf.c's
 * at_bpf_sum_counters, which at_lost_read uses, with a map of the same shape, when the test may
 * create one). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../daemon/bpf.h"
#include "../../daemon/trace/lost.h"
#include "source.h"

/* Records the rings had no room for count one event each, reallocs the merge gave up on one
 * each unless their return found no room (counted already), calls without per-thread state
 * are added; a thread end or a realloc entry that found no room is no event. */
static void test_events(void **state)
{
	(void)state;
	static const struct {
		uint64_t records, reallocs, no_state, thread_ends, entries, given_up;
		uint64_t lost;
	} cases[] = {
		{ 0, 0, 0, 0, 0, 0, 0 },
		{ 6, 0, 3, 0, 0, 0, 6 + 3 },
		{ 6, 1, 3, 0, 0, 2, 6 + 3 + 2 - 1 },
		{ 6, 4, 0, 0, 0, 2, 6 },       /* never below what the program counted */
		{ 0, 0, 0, 4, 5, 0, 0 },       /* no events */
		{ 1, 0, 0, 0, 0, 7, 1 + 7 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_reorder r = { .given_up = cases[i].given_up };
		struct at_lost l = { .bpf = { [AT_LOST_RECORDS] = cases[i].records,
					      [AT_LOST_REALLOCS] = cases[i].reallocs,
					      [AT_LOST_NO_STATE] = cases[i].no_state,
					      [AT_LOST_THREAD_ENDS] = cases[i].thread_ends,
					      [AT_LOST_REALLOC_ENTRIES] = cases[i].entries } };

		assert_int_equal(at_lost_events(&l, &r), cases[i].lost);
	}
}

/* Each note records the growth since the last one, where it is noticed. */
static void test_note(void **state)
{
	(void)state;
	int fd = memfd_create("lost", 0);
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ };
	struct at_lost l = { .reported = 0 };
	struct at_event ev = { 1, 1, AT_MALLOC, 1, { 8, 0 }, 0x10, 0, 0 };

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	at_lost_note(&l, 0, &s);
	assert_int_equal(at_sink_put(&s, &ev), 0);
	at_lost_note(&l, 5, &s);
	at_lost_note(&l, 5, &s); /* nothing new */
	assert_int_equal(at_sink_put(&s, &ev), 0);
	at_lost_note(&l, 8, &s);
	assert_int_equal(at_sink_put(&s, &ev), 0);
	assert_int_equal(l.reported, 8);
	assert_int_equal(at_sink_close(&s), 0);

	struct at_source src;
	struct at_event e;
	lseek(fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, fd, "mem"), 0);
	const uint64_t before[3] = { 0, 5, 3 };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(at_source_next(&src, &e), 1);
		assert_int_equal(at_atz_lost_before(src.atz), before[i]);
	}
	assert_int_equal(at_source_next(&src, &e), 0);
	at_source_close(&src);
	close(fd);

	/* text has no lost lines: the sink counts them only */
	fd = memfd_create("lost", 0);
	struct at_sink_stats st;
	l.reported = 0;
	opt.format = AT_SINK_TEXT;
	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	at_lost_note(&l, 4, &s);
	assert_int_equal(at_sink_close(&s), 0);
	at_sink_stats(&s, &st);
	assert_int_equal(st.lost, 4);
	assert_int_equal(lseek(fd, 0, SEEK_END), 0);
	close(fd);
}

/* The per-CPU values of each counter are summed. */
static void test_read(void **state)
{
	(void)state;
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "lost", sizeof(uint32_t),
				sizeof(uint64_t), AT_LOST_COUNT, NULL);

	if (fd < 0 || ncpu <= 0) {
		printf("no BPF map (%s): reading left untested\n", strerror(errno));
		skip();
	}
	uint64_t values[ncpu];
	for (uint32_t k = 0; k < AT_LOST_COUNT; k++) {
		for (int c = 0; c < ncpu; c++)
			values[c] = (k + 1) * 100 + (uint64_t)c;
		assert_int_equal(bpf_map_update_elem(fd, &k, values, BPF_ANY), 0);
	}
	struct at_lost l;
	memset(&l, 0xff, sizeof(l));
	at_bpf_sum_counters(fd, AT_LOST_COUNT, l.bpf);
	uint64_t spread = (uint64_t)ncpu * (uint64_t)(ncpu - 1) / 2;
	for (uint32_t k = 0; k < AT_LOST_COUNT; k++)
		assert_int_equal(l.bpf[k], (k + 1) * 100 * (uint64_t)ncpu + spread);
	close(fd);

	at_bpf_sum_counters(-1, AT_LOST_COUNT, l.bpf); /* unreadable: zeros */
	for (uint32_t k = 0; k < AT_LOST_COUNT; k++)
		assert_int_equal(l.bpf[k], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_note),
		cmocka_unit_test(test_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
