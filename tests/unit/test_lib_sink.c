/* test_lib_sink.c: unit tests of lib/sink.c: the exact bytes of text sinks (raw and munged),
 * .atz round trips through lib/source.c with lost and table records, the one-error rule
 * (/dev/full, a closed pipe, a file size limit), the two counters, flush and close, and the
 * guarantee that text goes out in whole lines. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "atz.h"
#include "sink.h"
#include "sink_thread.h"
#include "source.h"
#include "text.h"

/* Times that go backwards once (two CPUs), as a recorder may see them; text prints none. */
static const struct at_event events[] = {
	{ 10, 11, AT_MALLOC, 1, { 32, 0 }, 0x1000, 5000, 0 },
	{ 10, 12, AT_CALLOC, 1, { 4, 8 }, 0x2000, 4990, 0 },
	{ 10, 11, AT_REALLOC, 1, { 0x1000, 64 }, 0x3000, 6000, 0 },
	{ 10, 11, AT_FREE, 0, { 0x3000, 0 }, 0, 6001, 0 },
	{ 10, 10, AT_JEMALLOC_STATS, 0, { 0, 0 }, 0, 0, 0 },
};
/* The stack ids the binary round trip gives them (the text tests put none). */
static const uint32_t event_stacks[] = { 1, 2, 1, 0, 0 };
#define NEVENTS (sizeof(events) / sizeof(events[0]))

static const char raw_text[] = "10 11 malloc(32)=0x1000\n"
			       "10 12 calloc(4,8)=0x2000\n"
			       "10 11 realloc(0x1000,64)=0x3000\n"
			       "10 11 free(0x3000)\n"
			       "10 10 jemalloc_stats()\n";

static const char munged_text[] = "10 11 malloc(32)=#4096\n"
				  "10 12 calloc(4,8)=#8192\n"
				  "10 11 realloc(#4096,64)=#12288\n"
				  "10 11 free(#12288)\n"
				  "10 10 jemalloc_stats()\n";

static const struct at_sink_options text_raw = { .format = AT_SINK_TEXT };
static const struct at_sink_options text_munged = { .format = AT_SINK_TEXT, .munged = 1 };

/* The whole content of fd. */
static char *slurp(int fd, size_t *n)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	char *p = malloc((size_t)st.st_size + 1);
	assert_int_equal(pread(fd, p, (size_t)st.st_size, 0), st.st_size);
	p[st.st_size] = 0;
	*n = (size_t)st.st_size;
	return p;
}

static void put_all(struct at_sink *s)
{
	for (size_t i = 0; i < NEVENTS; i++)
		assert_int_equal(at_sink_put(s, &events[i]), 0);
}

static void assert_text(const struct at_sink_options *opt, const char *want)
{
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_stats st;
	size_t n;

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, opt), 0);
	put_all(&s);
	assert_int_equal(at_sink_close(&s), 0);
	char *got = slurp(fd, &n);
	assert_string_equal(got, want);
	at_sink_stats(&s, &st);
	assert_int_equal(st.accepted, NEVENTS);
	assert_int_equal(st.written, NEVENTS);
	assert_int_equal(st.bytes, strlen(want));
	assert_int_equal(st.content_bytes, strlen(want));
	free(got);
	close(fd);
}

static void test_text_bytes(void **state)
{
	(void)state;
	assert_text(&text_raw, raw_text);
	assert_text(&text_munged, munged_text);
}

/* A text sink follows at_sink_set_munged from the next line on; records write nothing. */
static void test_text_switch_and_records(void **state)
{
	(void)state;
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_stats st;
	struct at_sink_record proc = { .kind = AT_SINK_PROCESS, .process = { 10, "python3" } };
	struct at_sink_record change = { .kind = AT_SINK_PROCESS_CHANGE,
					 .change = { .change = AT_ATZ_PROCESS_EXIT, .pid = 10 } };
	struct at_stack stack = { .id = 1, .pid = 10, .count = 1, .pcs = { 0x401000 } };
	struct at_mapping map = { .pid = 10, .start = 0x400000, .end = 0x402000, .path = "/a" };
	struct at_sink_record srec = { .kind = AT_SINK_STACK, .stack = &stack };
	struct at_sink_record mrec = { .kind = AT_SINK_MAPPING, .mapping = &map };
	struct at_sink_record end = { .kind = AT_SINK_THREAD_END, .thread = { 10, 11 } };
	struct at_event with_stack = events[0];
	size_t n;

	with_stack.stack = 1;
	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &text_raw), 0);
	assert_int_equal(at_sink_put(&s, &events[0]), 0);
	assert_int_equal(at_sink_lost(&s, 7), 0);
	assert_int_equal(at_sink_put_record(&s, &proc), 0);
	assert_int_equal(at_sink_put_record(&s, &change), 0);
	assert_int_equal(at_sink_put_record(&s, &mrec), 0);
	assert_int_equal(at_sink_put_record(&s, &srec), 0);
	assert_int_equal(at_sink_put(&s, &with_stack), 0);
	assert_int_equal(at_sink_put_record(&s, &end), 0);
	at_sink_set_munged(&s, 1);
	assert_int_equal(at_sink_put(&s, &events[0]), 0);
	assert_int_equal(at_sink_close(&s), 0);
	char *got = slurp(fd, &n);
	assert_string_equal(got, "10 11 malloc(32)=0x1000\n10 11 malloc(32)=0x1000\n"
			    "10 11 malloc(32)=#4096\n");
	at_sink_stats(&s, &st);
	assert_int_equal(st.lost, 7);
	assert_int_equal(st.written, 3);
	free(got);
	close(fd);
}

/* An event outside the model is refused without harming the sink. */
static void test_bad_event(void **state)
{
	(void)state;
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_event bad = events[0];
	size_t n;

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &text_raw), 0);
	bad.func = AT_FUNC_COUNT;
	assert_int_equal(at_sink_put(&s, &bad), -1);
	assert_int_equal(errno, EINVAL);
	bad = events[0];
	bad.has_result = 2;
	assert_int_equal(at_sink_put(&s, &bad), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_sink_error(&s), 0);
	assert_int_equal(at_sink_put(&s, &events[0]), 0);
	assert_int_equal(at_sink_close(&s), 0);
	char *got = slurp(fd, &n);
	assert_string_equal(got, "10 11 malloc(32)=0x1000\n");
	free(got);
	close(fd);
}

/* What the source's stack and mapping callbacks saw, in order: "S<id>" and "M<path>". */
struct seen {
	char order[64];
	struct at_stack stack[2];
	struct at_mapping map;
	char path[64];
};

static void see_stack(void *arg, const struct at_stack *s)
{
	struct seen *w = arg;
	assert_true(s->id >= 1 && s->id <= 2);
	w->stack[s->id - 1] = *s;
	snprintf(w->order + strlen(w->order), sizeof(w->order) - strlen(w->order), "S%u ", s->id);
}

static void see_mapping(void *arg, const struct at_mapping *m)
{
	struct seen *w = arg;
	w->map = *m;
	snprintf(w->path, sizeof(w->path), "%s", m->path);
	snprintf(w->order + strlen(w->order), sizeof(w->order) - strlen(w->order), "M%s ",
		 m->path);
}

/* A binary sink: a trace lib/source.c reads back event for event (time and stack id
 * included), with the losses where they were recorded, the stack and mapping records through
 * the source's callbacks before the events that follow them, and the header's flags and
 * fields. */
static void roundtrip_atz(int munged)
{
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ, .munged = munged,
				       .atz = { .host = "box", .start_ns = 99 } };
	struct at_stack st1 = { .id = 1, .pid = 10, .count = 3, .flags = AT_STACK_INCOMPLETE,
				.pcs = { 0x7f0000001000, 0x401234, 0x401100 } };
	struct at_stack st2 = { .id = 2, .pid = 10, .count = 1, .flags = AT_STACK_TRUNCATED,
				.pcs = { 0x7f0000002000 } };
	struct at_mapping map = { .pid = 10, .build_id_len = 3, .build_id = { 0xab, 0xcd, 0xef },
				  .start = 0x400000, .end = 0x402000, .offset = 0, .path = "/bin/x" };
	struct at_sink_record srec1 = { .kind = AT_SINK_STACK, .stack = &st1 };
	struct at_sink_record srec2 = { .kind = AT_SINK_STACK, .stack = &st2 };
	struct at_sink_record mrec = { .kind = AT_SINK_MAPPING, .mapping = &map };
	struct at_event put[NEVENTS];
	static struct seen seen;

	memset(&seen, 0, sizeof(seen));
	for (size_t i = 0; i < NEVENTS; i++) {
		put[i] = events[i];
		put[i].stack = event_stacks[i];
	}
	struct at_sink_record obj = { .kind = AT_SINK_OBJECT,
				      .object = { 10, 0x7f00, 0x8f00, 0x1000, "/lib/libc.so.6" } };
	struct at_sink_record proc = { .kind = AT_SINK_PROCESS, .process = { 10, "python3" } };
	struct at_sink_record change = {
		.kind = AT_SINK_PROCESS_CHANGE,
		.change = { .change = AT_ATZ_PROCESS_EXEC, .pid = 10, .parent = 1, .time_ns = 77,
			    .exe = "/usr/bin/python3", .exe_len = 16, .args = "python3\0", .args_len = 8 },
	};
	struct at_sink_stats st;

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_put_record(&s, &proc), 0);
	assert_int_equal(at_sink_put_record(&s, &change), 0);
	assert_int_equal(at_sink_put_record(&s, &obj), 0);
	assert_int_equal(at_sink_put(&s, &put[1]), -1); /* stack 2 not written yet */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_sink_put_record(&s, &mrec), 0);
	assert_int_equal(at_sink_put_record(&s, &srec1), 0);
	assert_int_equal(at_sink_put(&s, &put[0]), 0);
	assert_int_equal(at_sink_lost(&s, 5), 0);
	assert_int_equal(at_sink_lost(&s, 0), 0);
	assert_int_equal(at_sink_put_record(&s, &srec2), 0);
	for (size_t i = 1; i < NEVENTS; i++)
		assert_int_equal(at_sink_put(&s, &put[i]), 0);
	assert_int_equal(at_sink_lost(&s, 2), 0); /* after the last event */
	assert_int_equal(at_sink_close(&s), 0);
	at_sink_stats(&s, &st);
	assert_int_equal(st.accepted, NEVENTS);
	assert_int_equal(st.written, NEVENTS);
	assert_int_equal(st.lost, 7);
	assert_int_equal(st.bytes, (uint64_t)lseek(fd, 0, SEEK_END));

	struct at_source src;
	struct at_event ev;
	lseek(fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, fd, "mem"), 0);
	assert_int_equal(src.kind, AT_SOURCE_BINARY);
	assert_int_equal(src.munged, munged);
	const struct at_atz_header *h = at_atz_reader_header(src.atz);
	assert_string_equal(h->host, "box");
	assert_int_equal(h->start_ns, 99);
	assert_int_equal(h->major, 2);
	at_source_on_stack(&src, see_stack, &seen);
	at_source_on_mapping(&src, see_mapping, &seen);
	static const char *const order[] = { "M/bin/x S1 ", "M/bin/x S1 S2 " };
	for (size_t i = 0; i < NEVENTS; i++) {
		assert_int_equal(at_source_next(&src, &ev), 1);
		assert_string_equal(seen.order, order[i > 0]);
		assert_int_equal(ev.time_ns, events[i].time_ns);
		assert_int_equal(ev.stack, event_stacks[i]);
		assert_memory_equal(&ev.arg, &events[i].arg, sizeof(ev.arg));
		assert_int_equal(ev.pid, events[i].pid);
		assert_int_equal(ev.tid, events[i].tid);
		assert_int_equal(ev.func, events[i].func);
		assert_int_equal(ev.has_result, events[i].has_result);
		assert_int_equal(ev.result, events[i].result);
		assert_int_equal(at_atz_lost_before(src.atz), i == 1 ? 5 : 0);
	}
	assert_int_equal(at_source_next(&src, &ev), 0);
	struct at_atz_stats ast;
	at_atz_reader_stats(src.atz, &ast);
	assert_int_equal(ast.lost, 7);
	assert_int_equal(ast.processes, 1);
	assert_int_equal(ast.stacks, 2);
	assert_int_equal(ast.mappings, 1);
	at_source_close(&src);
	close(fd);
	assert_memory_equal(&seen.stack[0], &st1, offsetof(struct at_stack, pcs) + 3 * 8);
	assert_memory_equal(&seen.stack[1], &st2, offsetof(struct at_stack, pcs) + 8);
	assert_int_equal(seen.map.pid, 10);
	assert_int_equal(seen.map.start, 0x400000);
	assert_int_equal(seen.map.end, 0x402000);
	assert_int_equal(seen.map.offset, 0);
	assert_int_equal(seen.map.build_id_len, 3);
	assert_memory_equal(seen.map.build_id, map.build_id, 3);
	assert_string_equal(seen.path, "/bin/x");
}

static void test_atz_roundtrip(void **state)
{
	(void)state;
	roundtrip_atz(0);
	roundtrip_atz(1);
}

/* A thread end in a 2.3 binary sink: an END record; the thread's next event starts a new
 * thread table entry. No event is counted for it. */
static void test_atz_thread_end(void **state)
{
	(void)state;
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_stats st;
	struct at_sink_options opt = { .format = AT_SINK_ATZ,
				       .atz = { .major = 2, .minor = AT_ATZ_V2_MINOR } };
	struct at_sink_record end = { .kind = AT_SINK_THREAD_END, .thread = { 10, 11 } };

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_put(&s, &events[0]), 0);
	assert_int_equal(at_sink_put_record(&s, &end), 0);
	assert_int_equal(at_sink_put(&s, &events[0]), 0);
	assert_int_equal(at_sink_close(&s), 0);
	at_sink_stats(&s, &st);
	assert_int_equal(st.written, 2);

	struct at_source src;
	struct at_event e;
	struct at_atz_stats ast;
	lseek(fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, fd, "mem"), 0);
	assert_int_equal(at_source_next(&src, &e), 1);
	assert_int_equal(at_source_next(&src, &e), 1);
	assert_int_equal(e.tid, 11);
	assert_int_equal(at_source_next(&src, &e), 0);
	at_atz_reader_stats(src.atz, &ast);
	assert_int_equal(ast.ended, 1);
	assert_int_equal(ast.threads, 2);
	at_source_close(&src);
	close(fd);
}

/* A binary sink asked for 1.x: stack and mapping records are dropped, events keep everything
 * 1.x holds (no time, no stack id). */
static void test_atz_v1_drops_stacks(void **state)
{
	(void)state;
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ, .atz = { .major = 1 } };
	struct at_stack st = { .id = 1, .pid = 10, .count = 1, .pcs = { 0x1000 } };
	struct at_mapping map = { .pid = 10, .start = 0x1000, .end = 0x2000, .path = "/x" };
	struct at_sink_record srec = { .kind = AT_SINK_STACK, .stack = &st };
	struct at_sink_record mrec = { .kind = AT_SINK_MAPPING, .mapping = &map };
	struct at_event ev = events[0];

	ev.stack = 1;
	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_put_record(&s, &mrec), 0);
	assert_int_equal(at_sink_put_record(&s, &srec), 0);
	assert_int_equal(at_sink_put(&s, &ev), 0);
	assert_int_equal(at_sink_close(&s), 0);

	struct at_source src;
	struct at_event e;
	struct at_atz_stats ast;
	lseek(fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, fd, "mem"), 0);
	assert_int_equal(at_atz_reader_header(src.atz)->major, 1);
	assert_int_equal(at_source_next(&src, &e), 1);
	assert_int_equal(e.result, ev.result);
	assert_int_equal(e.time_ns, 0);
	assert_int_equal(e.stack, 0);
	assert_int_equal(at_source_next(&src, &e), 0);
	at_atz_reader_stats(src.atz, &ast);
	assert_int_equal(ast.stacks + ast.mappings, 0);
	at_source_close(&src);
	close(fd);
}

/* A record the output's version cannot hold (a Python frame in a 2.3 trace) is the sink's
 * error: put refuses it, and close says why, as for a write that failed; 2.5 holds it. */
static void test_atz_refused_record(void **state)
{
	(void)state;
	struct at_stack st = { .id = 1, .pid = 10, .count = 2, .flags = AT_STACK_KINDS,
			       .pcs = { 0x1000, 0x7f0000001000 },
			       .kinds = { AT_FRAME_NATIVE, AT_FRAME_PYTHON } };
	struct at_sink_record srec = { .kind = AT_SINK_STACK, .stack = &st };

	for (unsigned minor = 3; minor <= 5; minor += 2) {
		int fd = memfd_create("sink", 0);
		struct at_sink s;
		struct at_sink_options opt = { .format = AT_SINK_ATZ, .atz = { .minor = minor } };

		assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
		assert_int_equal(at_sink_start(&s, &opt), 0);
		if (minor == 3) {
			assert_int_equal(at_sink_put_record(&s, &srec), -1);
			assert_int_equal(at_sink_error(&s), EINVAL);
			assert_int_equal(at_sink_close(&s), -1);
		} else {
			assert_int_equal(at_sink_put_record(&s, &srec), 0);
			assert_int_equal(at_sink_close(&s), 0);
		}
		close(fd);
	}
}

/* A binary flush ends the block: what was put so far can be read before the sink closes, and
 * counts as written. */
static void test_atz_flush_ends_block(void **state)
{
	(void)state;
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ };
	struct at_sink_stats st;

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	put_all(&s);
	at_sink_stats(&s, &st);
	assert_int_equal(st.accepted, NEVENTS);
	assert_int_equal(st.written, 0);
	assert_int_equal(at_sink_flush(&s), 0);
	at_sink_stats(&s, &st);
	assert_int_equal(st.written, NEVENTS);
	off_t flushed = lseek(fd, 0, SEEK_END);
	assert_int_equal(at_sink_flush(&s), 0); /* nothing new: nothing written */
	assert_int_equal(lseek(fd, 0, SEEK_END), flushed);

	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int rd = open(path, O_RDONLY); /* a second descriptor, at offset 0 */
	assert_true(rd >= 0);
	struct at_atz_reader *r = at_atz_reader_open(rd, "mem", NULL, 0);
	struct at_event ev;
	for (size_t i = 0; i < NEVENTS; i++)
		assert_int_equal(at_atz_next(r, &ev), 1);
	assert_int_equal(at_atz_next(r, &ev), -1); /* the frame has no end mark yet */
	assert_int_equal(at_atz_reader_status(r), AT_ATZ_ERR_TRUNCATED);
	at_atz_reader_close(r);
	close(rd);
	assert_int_equal(at_sink_close(&s), 0);
	close(fd);
}

/* /dev/full: the first write fails with ENOSPC; the sink keeps that error, drops every later
 * write, and flush and close say so. */
static void test_dev_full_text(void **state)
{
	(void)state;
	struct at_sink s;
	struct at_sink_stats st;

	assert_int_equal(at_sink_open(&s, "/dev/full", AT_SINK_TRUNCATE), 0);
	assert_int_equal(at_sink_start(&s, &text_raw), 0);
	assert_int_equal(at_sink_flush(&s), 0); /* nothing buffered: no write, no error */
	put_all(&s);                            /* buffered: no error yet */
	assert_int_equal(at_sink_error(&s), 0);
	assert_int_equal(at_sink_flush(&s), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(at_sink_error(&s), ENOSPC);
	assert_int_equal(at_sink_put(&s, &events[0]), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(at_sink_lost(&s, 3), -1);
	assert_int_equal(at_sink_flush(&s), -1);
	/* a later failure of another kind does not replace the first error */
	assert_int_equal(at_sink_reopen(&s, "/nonexistent/dir/log"), -1);
	assert_int_equal(at_sink_error(&s), ENOSPC);
	assert_int_equal(at_sink_close(&s), -1);
	assert_int_equal(at_sink_error(&s), ENOSPC);
	assert_string_equal(at_sink_name(&s), "/dev/full");
	at_sink_stats(&s, &st);
	assert_int_equal(st.accepted, NEVENTS + 1);
	assert_int_equal(st.written, 0);
	assert_int_equal(st.bytes, 0);
}

/* A binary trace writes its headers at start: on /dev/full, start fails. */
static void test_dev_full_atz(void **state)
{
	(void)state;
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ };

	assert_int_equal(at_sink_open(&s, "/dev/full", AT_SINK_TRUNCATE), 0);
	assert_int_equal(at_sink_start(&s, &opt), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(at_sink_put(&s, &events[0]), -1);
	assert_int_equal(at_sink_error(&s), ENOSPC);
	assert_int_equal(at_sink_close(&s), -1);
	assert_int_equal(at_sink_error(&s), ENOSPC);
}

/* A closed pipe: EPIPE, and the binary trace stops after it. */
static void test_closed_pipe(void **state)
{
	(void)state;
	int p[2];
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ };

	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(at_sink_open_fd(&s, p[1], "pipe"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0); /* the headers are in the pipe */
	close(p[0]);
	put_all(&s);
	assert_int_equal(at_sink_flush(&s), -1);
	assert_int_equal(at_sink_error(&s), EPIPE);
	assert_int_equal(at_sink_close(&s), -1);
	struct at_sink_stats st;
	at_sink_stats(&s, &st);
	assert_int_equal(st.written, 0);
	/* the caller's descriptor stays open */
	assert_true(fcntl(p[1], F_GETFD) >= 0);
	close(p[1]);
}

/* The file ends inside the buffer (a file size limit, set in a child so that the test's own
 * output is not limited): the counter says how many whole lines reached it, and the start of
 * the line cut short is taken back, so the file ends with a whole line. */
static void test_short_write_counts_whole_lines(void **state)
{
	(void)state;
	char path[] = "/tmp/test_lib_sink.XXXXXX";
	int fd = mkstemp(path), p[2];
	struct { struct at_sink_stats st; int close_rc, err; } got;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pipe(p), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct rlimit lim = { 100, 100 }; /* four 24-byte lines and 4 bytes of the fifth */
		struct at_sink s;
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim) < 0 || at_sink_open(&s, path, AT_SINK_TRUNCATE) < 0 ||
		    at_sink_start(&s, &text_raw) < 0)
			_exit(1);
		for (int i = 0; i < 10; i++)
			at_sink_put(&s, &events[0]);
		got.close_rc = at_sink_close(&s);
		got.err = at_sink_error(&s);
		at_sink_stats(&s, &got.st);
		_exit(write(p[1], &got, sizeof(got)) == sizeof(got) ? 0 : 1);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &got, sizeof(got)), sizeof(got));
	close(p[0]);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(status, 0);
	assert_int_equal(got.close_rc, -1);
	assert_int_equal(got.err, EFBIG);
	assert_int_equal(got.st.accepted, 10);
	assert_int_equal(got.st.written, 4);
	assert_int_equal(got.st.bytes, 96);
	fd = open(path, O_RDONLY);
	size_t n;
	char *text = slurp(fd, &n);
	assert_int_equal(n, 96);
	assert_memory_equal(text, raw_text, 24); /* events[0]'s line, four times */
	assert_int_equal(text[95], '\n');
	free(text);
	close(fd);
	unlink(path);
}

/* Writes `count` varied events (a flush every `flush_every`) to path in a child whose file size
 * is limited to `limit` bytes; returns the child's stats. */
static struct at_sink_stats write_limited(const char *path, const struct at_sink_options *opt,
					  unsigned count, unsigned flush_every, rlim_t limit)
{
	int p[2];
	struct at_sink_stats st;

	assert_int_equal(pipe(p), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct rlimit lim = { limit, limit };
		struct at_sink s;
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim) < 0 || at_sink_open(&s, path, AT_SINK_TRUNCATE) < 0 ||
		    at_sink_start(&s, opt) < 0)
			_exit(1);
		uint64_t x = 88172645463325252ull;
		for (unsigned i = 0; i < count; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			struct at_event ev = { 100 + (uint32_t)(x % 3), 7, AT_MALLOC, 1,
					       { x % 100000, 0 }, x & ~15ull, 0, 0 };
			at_sink_put(&s, &ev);
			if (flush_every && (i + 1) % flush_every == 0)
				at_sink_flush(&s);
		}
		int rc = at_sink_close(&s);
		at_sink_stats(&s, &st);
		_exit(rc == -1 && at_sink_error(&s) == EFBIG &&
			      write(p[1], &st, sizeof(st)) == sizeof(st) ? 0 : 2);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &st, sizeof(st)), sizeof(st));
	close(p[0]);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(status, 0);
	return st;
}

/* A full disk (a file size limit in a child), text and binary, with flushes now and then:
 * `written` is exactly what a reader gets back from the file, and the text file ends with a
 * whole line. */
static void test_full_disk_counts(void **state)
{
	(void)state;
	char path[] = "/tmp/test_lib_sink.full.XXXXXX";
	int fd = mkstemp(path);
	const struct at_sink_options binary = { .format = AT_SINK_ATZ };
	struct at_sink_stats st;
	struct at_source src;
	struct at_event ev;
	size_t n;

	assert_true(fd >= 0);
	close(fd);
	/* text: 2.5 MB of lines against a 1.5 MB limit, flushed every 10,000 events or not */
	for (unsigned every = 0; every <= 10000; every += 10000) {
		st = write_limited(path, &text_raw, 100000, every, 1500000);
		fd = open(path, O_RDONLY);
		char *text = slurp(fd, &n);
		close(fd);
		uint64_t lines = 0;
		for (size_t i = 0; i < n; i++)
			lines += text[i] == '\n';
		assert_true(n > 1400000 && n <= 1500000);
		assert_int_equal(text[n - 1], '\n');
		assert_int_equal(st.written, lines);
		assert_int_equal(st.bytes, n);
		assert_int_equal(st.accepted, 100000);
		free(text);
	}
	/* binary: blocks of every size against a limit that falls inside one */
	for (unsigned every = 0; every <= 3000; every += 1000) {
		st = write_limited(path, &binary, 200000, every, 300000);
		assert_int_equal(at_source_open(&src, path), 0);
		uint64_t got = 0;
		int rc;
		while ((rc = at_source_next(&src, &ev)) > 0)
			got++;
		assert_int_equal(rc, -1);
		assert_int_equal(at_atz_reader_status(src.atz), AT_ATZ_ERR_TRUNCATED);
		at_source_close(&src);
		assert_true(got > 0 && got < 200000);
		assert_int_equal(st.written, got);
		assert_int_equal(st.bytes, 300000);
	}
	unlink(path);
}

/* More than a buffer of lines: each write ends with a whole line. */
static void test_whole_lines(void **state)
{
	(void)state;
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_stats st;
	struct at_event ev = events[2];
	uint64_t n = 0;

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &text_raw), 0);
	do { /* lines of varying length until the buffer went out once */
		ev.arg[1] = n * 7919;
		ev.result = 0x10000000 + n * 48;
		assert_int_equal(at_sink_put(&s, &ev), 0);
		n++;
		at_sink_stats(&s, &st);
	} while (st.bytes == 0);
	size_t len;
	char *got = slurp(fd, &len);
	assert_int_equal(len, st.bytes);
	assert_true(len > AT_OUTPUT_BUFSIZE - AT_LINE_MAX && len <= AT_OUTPUT_BUFSIZE);
	assert_int_equal(got[len - 1], '\n');
	uint64_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += got[i] == '\n';
	assert_int_equal(st.written, lines);
	assert_int_equal(st.accepted, n);
	assert_int_equal(at_sink_close(&s), 0);
	at_sink_stats(&s, &st);
	assert_int_equal(st.written, n);
	free(got);
	close(fd);
}

/* Log rotation: the path opened again, the counters going on, the caller's fd untouched. */
static void test_reopen(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_lib_sink.XXXXXX", path[64], moved[64];
	struct at_sink s;
	struct at_sink_stats st;
	size_t n;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(moved, sizeof(moved), "%s/log.1", dir);
	assert_int_equal(at_sink_open(&s, path, AT_SINK_APPEND), 0);
	assert_int_equal(at_sink_start(&s, &text_raw), 0);
	assert_int_equal(at_sink_put(&s, &events[0]), 0);
	assert_int_equal(at_sink_flush(&s), 0);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(at_sink_put(&s, &events[3]), 0);
	assert_int_equal(at_sink_reopen(&s, path), 0);
	assert_int_equal(at_sink_put(&s, &events[4]), 0);
	assert_int_equal(at_sink_close(&s), 0);
	assert_int_equal(at_sink_close(&s), 0); /* closing twice is harmless */
	at_sink_stats(&s, &st);
	assert_int_equal(st.accepted, 3);
	assert_int_equal(st.written, 3);

	int fd = open(moved, O_RDONLY);
	char *got = slurp(fd, &n);
	assert_string_equal(got, "10 11 malloc(32)=0x1000\n10 11 free(0x3000)\n");
	free(got);
	close(fd);
	fd = open(path, O_RDONLY);
	got = slurp(fd, &n);
	assert_string_equal(got, "10 10 jemalloc_stats()\n");
	free(got);
	close(fd);
	unlink(path);
	unlink(moved);
	rmdir(dir);
}

/* An output that cannot be opened: the error is the sink's, close says so. */
/* Writes many events (a rotating copy of events[] with addresses that differ), a lost record
 * every 1000 and a flush every 5000, with the writing thread (queue of 2^log2; 0: none), in
 * format; the file's bytes and the stats. */
static char *write_many(enum at_sink_format format, unsigned log2, unsigned encoders, size_t *n,
			struct at_sink_stats *st)
{
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_options opt = { .format = format };

	if (encoders) /* frames that go on from each other: a trace without stacks */
		opt.atz.flags = AT_ATZ_FLAG_NO_STACKS;
	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	if (log2)
		assert_int_equal(at_sink_thread_start(&s, log2, encoders), 0);
	for (unsigned i = 0; i < 20000; i++) {
		struct at_event ev = events[i % 4]; /* malloc, calloc, realloc, free */

		ev.arg[0] += (i / 4) * 64 * (ev.func == AT_FREE);
		ev.result += (i / 4) * 64;
		ev.stack = 0;
		assert_int_equal(at_sink_put(&s, &ev), 0);
		if (i % 1000 == 999)
			assert_int_equal(at_sink_lost(&s, 1), 0);
		if (i % 5000 == 4999)
			assert_int_equal(at_sink_flush(&s), 0);
		if (i % 300 == 0)
			at_sink_kick(&s);
	}
	assert_int_equal(at_sink_close(&s), 0);
	assert_null(s.thread);
	at_sink_stats(&s, st);
	char *got = slurp(fd, n);
	close(fd);
	return got;
}

/* A binary trace's events, each a line "func arg0 arg1 result lost-before". */
static char *decoded(const char *bytes, size_t n)
{
	int fd = memfd_create("decoded", 0);
	struct at_source src;
	struct at_event e;
	size_t cap = 64 * 30000, at = 0;
	char *out = malloc(cap);

	assert_int_equal(write(fd, bytes, n), (ssize_t)n);
	lseek(fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, fd, "mem"), 0);
	while (at_source_next(&src, &e) == 1 && at < cap - 128)
		at += (size_t)snprintf(out + at, cap - at, "%u %llx %llx %llx %llu\n", e.func,
				       (unsigned long long)e.arg[0], (unsigned long long)e.arg[1],
				       (unsigned long long)e.result,
				       (unsigned long long)at_atz_lost_before(src.atz));
	out[at] = 0;
	at_source_close(&src);
	close(fd);
	return out;
}

/* The writing thread writes what the caller's thread writes (text: the same bytes; binary: the
 * same events and losses, the header's time apart), records and flushes in their places among
 * the events, with a queue that fills (4 events) and one that does not. */
static void test_thread_same_bytes(void **state)
{
	(void)state;
	static const enum at_sink_format formats[] = { AT_SINK_TEXT, AT_SINK_ATZ };

	for (unsigned f = 0; f < 2; f++) {
		size_t n0, n;
		struct at_sink_stats st0, st;
		char *want = write_many(formats[f], 0, 0, &n0, &st0);

		for (unsigned log2 = 2; log2 <= 14; log2 += 12) {
			char *got = write_many(formats[f], log2, 0, &n, &st);

			assert_int_equal(n, n0);
			if (formats[f] == AT_SINK_TEXT) {
				assert_memory_equal(got, want, n);
			} else { /* the header holds the time of writing: the rest is the same */
				char *a = decoded(got, n), *b = decoded(want, n0);

				assert_string_equal(a, b);
				free(a);
				free(b);
			}
			assert_int_equal(st.accepted, 20000);
			assert_int_equal(st.written, st0.written);
			assert_int_equal(st.lost, 20);
			free(got);
		}
		free(want);
	}
}

/* A binary trace of every kind of record among 3,000 events, written through the writing
 * thread (queue of 2^log2 items; 0: none), with its host and start time fixed so that two
 * writings compare byte for byte; the file's bytes. Every record's strings and frames live on
 * the stack of this function and change after each put, so a record the thread wrote from the
 * caller's memory rather than its copy would differ. */
static char *write_records(unsigned log2, unsigned encoders, size_t *n)
{
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ,
				       .atz = { .host = "box", .start_ns = 99, .minor = 5 } };
	char path[64], function[32], file[32], exe[32], name[32];
	struct at_stack st = { .pid = 10, .count = 2, .flags = AT_STACK_KINDS,
			       .kinds = { AT_FRAME_NATIVE, AT_FRAME_PYTHON } };
	struct at_mapping map = { .pid = 10, .build_id_len = 2, .path = path };
	struct at_frame_name fn = { .pid = 10, .kind = AT_FRAME_PYTHON, .function = function,
				    .file = file };
	struct at_sink_record recs[] = {
		{ .kind = AT_SINK_MAPPING, .mapping = &map },
		{ .kind = AT_SINK_NAMES, .names = &fn },
		{ .kind = AT_SINK_STACK, .stack = &st },
		{ .kind = AT_SINK_RSS, .rss = { 10, 0, 0 } },
		{ .kind = AT_SINK_PROCESS_CHANGE,
		  .change = { .change = AT_ATZ_PROCESS_EXEC, .pid = 10, .exe = exe,
			      .args = "a\0bc\0", .args_len = 5 } },
		{ .kind = AT_SINK_PROCESS, .process = { 10, name } },
		{ .kind = AT_SINK_OBJECT, .object = { 10, 0x7f00, 0x8f00, 0x1000, path } },
		{ .kind = AT_SINK_THREAD_END, .thread = { 10, 12 } },
	};
	uint32_t ids = 0;

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	if (log2)
		assert_int_equal(at_sink_thread_start(&s, log2, encoders), 0);
	for (unsigned i = 0; i < 3000; i++) {
		struct at_event ev = events[i % 4];

		ev.arg[0] += (i / 4) * 64 * (ev.func == AT_FREE);
		ev.result += (i / 4) * 64;
		ev.time_ns += i * 1000;
		if (i % 30 == 0) { /* every kind of record, its contents new each time */
			snprintf(path, sizeof(path), "/lib/obj%u.so", i);
			snprintf(function, sizeof(function), "work%u", i);
			snprintf(file, sizeof(file), "w%u.py", i);
			snprintf(exe, sizeof(exe), "/bin/p%u", i);
			snprintf(name, sizeof(name), "p%u", i);
			map.start = 0x400000 + i * 0x10000;
			map.end = map.start + 0x2000;
			map.build_id[0] = (uint8_t)i;
			fn.value = 0x7f0000000000 + i * 64;
			fn.line = i;
			st.id = ++ids;
			st.pcs[0] = map.start + i;
			st.pcs[1] = fn.value;
			recs[3].rss.time_ns = ev.time_ns;
			recs[3].rss.bytes = i * 4096;
			recs[4].change.time_ns = ev.time_ns;
			recs[4].change.exe_len = strlen(exe);
			for (size_t k = 0; k < sizeof(recs) / sizeof(recs[0]); k++)
				assert_int_equal(at_sink_put_record(&s, &recs[k]), 0);
			memset(path, 'x', sizeof(path) - 1); /* the caller's memory, reused */
			memset(function, 'x', sizeof(function) - 1);
			memset(&st.pcs, 0xee, 2 * sizeof(st.pcs[0]));
		}
		ev.stack = ev.func == AT_FREE ? 0 : ids;
		assert_int_equal(at_sink_put(&s, &ev), 0);
		if (i % 700 == 0)
			assert_int_equal(at_sink_lost(&s, 3), 0);
		if (i % 1100 == 1099) /* a frame cut short by encoders */
			assert_int_equal(at_sink_flush(&s), 0);
	}
	assert_int_equal(at_sink_close(&s), 0);
	char *got = slurp(fd, n);
	close(fd);
	return got;
}

/* The events of a binary trace held in bytes (read to its clean end), its counters in *ast. */
static unsigned read_back(const char *bytes, size_t n, struct at_atz_stats *ast)
{
	int fd = memfd_create("read", 0);
	struct at_source src;
	struct at_event ev;
	unsigned events = 0;
	int rc;

	assert_int_equal(write(fd, bytes, n), (ssize_t)n);
	lseek(fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, fd, "mem"), 0);
	while ((rc = at_source_next(&src, &ev)) == 1)
		events++;
	assert_int_equal(rc, 0);
	at_atz_reader_stats(src.atz, ast);
	at_source_close(&src);
	close(fd);
	return events;
}

/* Records go through the writing thread's queue, copied: the same bytes as the caller's
 * thread writes, every record in its place among the events, with a queue that fills (4
 * items) and one that does not; and the trace reads back whole. */
static void test_thread_records_same_bytes(void **state)
{
	(void)state;
	size_t n0, n;
	char *want = write_records(0, 0, &n0);

	for (unsigned log2 = 2; log2 <= 14; log2 += 12) {
		char *got = write_records(log2, 0, &n);

		assert_int_equal(n, n0);
		assert_memory_equal(got, want, n);
		free(got);
	}
	struct at_atz_stats ast;

	assert_int_equal(read_back(want, n0, &ast), 3000);
	assert_int_equal(ast.stacks, 100);
	assert_int_equal(ast.mappings, 100);
	assert_int_equal(ast.names, 100);
	assert_int_equal(ast.rss, 100);
	assert_int_equal(ast.lost, 15);
	free(want);
}

/* A transcript of a trace, a line per record the reader reports (test_frames_same_trace). */
struct transcript {
	char *text;
	size_t at, cap;
};

static void say(struct transcript *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct transcript *t, const char *fmt, ...)
{
	va_list ap;

	if (t->cap - t->at < 512) {
		t->cap = t->cap * 2 + 4096;
		t->text = realloc(t->text, t->cap);
		assert_non_null(t->text);
	}
	va_start(ap, fmt);
	t->at += (size_t)vsnprintf(t->text + t->at, t->cap - t->at, fmt, ap);
	va_end(ap);
}

static void say_stack(void *arg, const struct at_stack *s)
{
	say(arg, "stack %u pid %u count %u flags %u pcs %llx %llx kinds %u %u\n", s->id, s->pid,
	    s->count, s->flags, (unsigned long long)s->pcs[0], (unsigned long long)s->pcs[1],
	    s->kinds[0], s->kinds[1]);
}

static void say_mapping(void *arg, const struct at_mapping *m)
{
	say(arg, "mapping %u %llx %llx %s %u\n", m->pid, (unsigned long long)m->start,
	    (unsigned long long)m->end, m->path, m->build_id[0]);
}

static void say_names(void *arg, const struct at_frame_name *f)
{
	say(arg, "names %u %u %llx %u %s %s\n", f->pid, f->kind, (unsigned long long)f->value,
	    f->line, f->function, f->file);
}

/* Every event (each field, the losses before it) and every stack, mapping and NAMES record of
 * the binary trace in bytes, in order, then the reader's counters; the frames it read in
 * *frames. */
static char *transcribe(const char *bytes, size_t n, unsigned *frames)
{
	int fd = memfd_create("read", 0);
	struct transcript t = { 0 };
	struct at_source src;
	struct at_event e;
	struct at_atz_stats st;
	int rc;

	assert_int_equal(write(fd, bytes, n), (ssize_t)n);
	lseek(fd, 0, SEEK_SET);
	assert_int_equal(at_source_open_fd(&src, fd, "mem"), 0);
	at_source_on_stack(&src, say_stack, &t);
	at_source_on_mapping(&src, say_mapping, &t);
	at_source_on_names(&src, say_names, &t);
	while ((rc = at_source_next(&src, &e)) == 1)
		say(&t, "%u %u %u %llx %llx %llx %llu stack %u lost %llu\n", e.pid, e.tid, e.func,
		    (unsigned long long)e.arg[0], (unsigned long long)e.arg[1],
		    (unsigned long long)e.result, (unsigned long long)e.time_ns, e.stack,
		    (unsigned long long)at_atz_lost_before(src.atz));
	assert_int_equal(rc, 0);
	at_atz_reader_stats(src.atz, &st);
	say(&t, "events %llu lost %llu stacks %llu mappings %llu names %llu rss %llu "
	    "processes %llu\n", (unsigned long long)st.events, (unsigned long long)st.lost,
	    (unsigned long long)st.stacks, (unsigned long long)st.mappings,
	    (unsigned long long)st.names, (unsigned long long)st.rss,
	    (unsigned long long)st.processes);
	at_source_close(&src);
	close(fd);
	*frames = 0;
	for (size_t i = 0; i + 4 <= n; i++) /* lz4 frames begin with 04 22 4d 18 */
		*frames += memcmp(bytes + i, "\x04\x22\x4d\x18", 4) == 0;
	return t.text;
}

/* Frames encoded apart hold the trace one writer writes: with 2 and 3 encoders and queues of
 * 4, 64 and 16,384 items (runs of 1, 8 and 2,048 items, and those a flush cuts short), every
 * event, stack, mapping and NAMES record comes back the same, in the same order, each event's
 * stack id naming the same stack; the counters agree. With a frame a run, the trace is in many
 * frames (the stacks of each going on from those before); with runs that go on in the frame
 * of the encoder that keeps up, in as many as the encoders' speed made (2 at least: the
 * sink's own, then the encoders'). */
static void test_frames_same_trace(void **state)
{
	(void)state;
	size_t n0, n;
	unsigned frames;
	char *want = write_records(0, 0, &n0);
	char *a = transcribe(want, n0, &frames);

	assert_int_equal(frames, 1);
	assert_non_null(strstr(a, "events 3000 lost 15 stacks 100 mappings 100 names 100 rss 100 "
				  "processes 100\n"));
	for (unsigned each = 0; each <= AT_SINK_FRAME_EACH_RUN; each += AT_SINK_FRAME_EACH_RUN) {
		for (unsigned encoders = 2; encoders <= 3; encoders++) {
			for (unsigned log2 = 2; log2 <= 14; log2 += log2 == 2 ? 4 : 8) {
				char *got = write_records(log2, encoders | each, &n);
				char *b = transcribe(got, n, &frames);

				assert_string_equal(b, a);
				/* a frame a run: one per 1 / (2 x encoders) of the queue at
				 * least, and one per flush */
				unsigned chunk = (1u << log2) / (2 * encoders);

				assert_true(frames >= (each ? 3000 / (chunk ? chunk : 1) : 2));
				free(b);
				free(got);
			}
		}
	}
	free(a);
	free(want);
}

/* Runs that one encoder keeps up with go on in its frame: 20 runs of 170 events (a queue of
 * 1,024 items, 3 encoders), each written before the next is put (a flush), make one frame
 * after the sink's own; with a frame a run, 20. Either way the events are one writer's, and
 * the file reads to its clean end (the frame left open was ended at the close). The same
 * across a reopen: each file a whole trace, its last frame ended in it. */
static void test_frames_go_on(void **state)
{
	(void)state;
	static const unsigned expect[2] = { 2, 21 };

	for (unsigned each = 0; each < 2; each++) {
		int fd = memfd_create("sink", 0), fd0 = memfd_create("one", 0);
		struct at_sink s, s0;
		struct at_sink_options opt = { .format = AT_SINK_ATZ,
					       .atz = { .flags = AT_ATZ_FLAG_NO_STACKS,
							.host = "box", .start_ns = 9 } };
		size_t n, n0;
		unsigned frames, frames0;

		assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
		assert_int_equal(at_sink_open_fd(&s0, fd0, "one"), 0);
		assert_int_equal(at_sink_start(&s, &opt), 0);
		assert_int_equal(at_sink_start(&s0, &opt), 0);
		assert_int_equal(at_sink_thread_start(&s, 10, 3 | (each ? AT_SINK_FRAME_EACH_RUN : 0)),
				 0);
		for (unsigned i = 0; i < 20 * 170; i++) {
			struct at_event ev = events[i % 4];

			ev.arg[0] += (i / 4) * 64 * (ev.func == AT_FREE);
			ev.result += (i / 4) * 64;
			ev.stack = 0;
			assert_int_equal(at_sink_put(&s, &ev), 0);
			assert_int_equal(at_sink_put(&s0, &ev), 0);
			if (i % 170 == 169)
				assert_int_equal(at_sink_flush(&s), 0);
		}
		assert_int_equal(at_sink_close(&s), 0);
		assert_int_equal(at_sink_close(&s0), 0);
		char *got = slurp(fd, &n), *want = slurp(fd0, &n0);
		char *b = transcribe(got, n, &frames), *a = transcribe(want, n0, &frames0);

		assert_int_equal(frames0, 1);
		assert_int_equal(frames, expect[each]);
		assert_string_equal(b, a);
		free(a);
		free(b);
		free(got);
		free(want);
		close(fd);
		close(fd0);
	}

	char dir[] = "/tmp/test_lib_sink.XXXXXX", path[64], moved[64];
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ,
				       .atz = { .flags = AT_ATZ_FLAG_NO_STACKS } };

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/log", dir);
	snprintf(moved, sizeof(moved), "%s/log.1", dir);
	assert_int_equal(at_sink_open(&s, path, AT_SINK_TRUNCATE), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_thread_start(&s, 10, 2), 0);
	for (unsigned i = 0; i < 1000; i++)
		assert_int_equal(at_sink_put(&s, &events[i % 4]), 0);
	assert_int_equal(at_sink_flush(&s), 0);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(at_sink_reopen(&s, path), 0);
	for (unsigned i = 0; i < 700; i++)
		assert_int_equal(at_sink_put(&s, &events[i % 4]), 0);
	assert_int_equal(at_sink_close(&s), 0);
	for (int k = 0; k < 2; k++) {
		int fd = open(k ? path : moved, O_RDONLY);
		size_t n;
		char *got = slurp(fd, &n);
		struct at_atz_stats ast;

		assert_int_equal(read_back(got, n, &ast), k ? 700 : 1000);
		free(got);
		close(fd);
	}
	unlink(path);
	unlink(moved);
	rmdir(dir);
}

/* Encoders write what one writer writes, counted alike: the events and losses of a trace
 * without stacks (flushed every 5,000 events), and the sink's counters. */
static void test_frames_counts(void **state)
{
	(void)state;
	size_t n0, n;
	struct at_sink_stats st0, st;
	char *want = write_many(AT_SINK_ATZ, 0, 0, &n0, &st0);
	char *a = decoded(want, n0);

	for (unsigned log2 = 2; log2 <= 14; log2 += 12) {
		char *got = write_many(AT_SINK_ATZ, log2, 3, &n, &st);
		char *b = decoded(got, n);

		assert_string_equal(b, a);
		assert_int_equal(st.accepted, 20000);
		assert_int_equal(st.written, 20000);
		assert_int_equal(st.lost, 20);
		assert_int_equal(st.bytes, n);
		assert_true(st.content_bytes >= st0.content_bytes);
		free(b);
		free(got);
	}
	free(a);
	free(want);
}

/* Encoders writing to a pipe whose reader closed: the first frame's copy fails with EPIPE, the
 * sink's error from then on (the flush, the close say it), and no event counts as written. */
static void test_frames_closed_pipe(void **state)
{
	(void)state;
	int p[2];
	struct at_sink s;
	struct at_sink_stats st;
	struct at_sink_options opt = { .format = AT_SINK_ATZ,
				       .atz = { .flags = AT_ATZ_FLAG_NO_STACKS } };

	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(at_sink_open_fd(&s, p[1], "pipe"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_thread_start(&s, 8, 2), 0);
	assert_true(at_sink_thread_frames(s.thread));
	close(p[0]);
	for (unsigned i = 0; i < 1000; i++)
		assert_int_equal(at_sink_put(&s, &events[i % 4]), 0);
	assert_int_equal(at_sink_flush(&s), -1);
	assert_int_equal(at_sink_error(&s), EPIPE);
	assert_int_equal(at_sink_close(&s), -1);
	at_sink_stats(&s, &st);
	assert_int_equal(st.accepted, 1000);
	assert_int_equal(st.written, 0);
	close(p[1]);
}

/* A record copy that fails (this driver is linked with --wrap=at_sink_record_copy): every
 * copy_fail_every-th copy from copy_fail_after on (0: none), the failures counted. */
static unsigned copy_fail_every, copy_fail_after, copies, copies_failed;

struct at_sink_record *__real_at_sink_record_copy(const struct at_sink_record *r, size_t *bytes);
struct at_sink_record *__wrap_at_sink_record_copy(const struct at_sink_record *r, size_t *bytes);
struct at_sink_record *__wrap_at_sink_record_copy(const struct at_sink_record *r, size_t *bytes)
{
	if (copy_fail_every && ++copies > copy_fail_after && copies % copy_fail_every == 0) {
		copies_failed++;
		errno = ENOMEM;
		return NULL;
	}
	return __real_at_sink_record_copy(r, bytes);
}

/* A record the writing thread cannot take a copy of: one writer writes it in its place from
 * the caller's thread, after the queue (the same bytes as without the thread); encoders, which
 * would need it in a chunk, make it the sink's error (ENOMEM): nothing from it on is written. */
static void test_record_copy_fails(void **state)
{
	(void)state;
	size_t n0, n;
	char *want = write_records(0, 0, &n0);

	copy_fail_every = 3;
	copy_fail_after = copies = copies_failed = 0;
	char *got = write_records(10, 0, &n);

	copy_fail_every = 0;
	assert_true(copies_failed > 100);
	assert_int_equal(n, n0);
	assert_memory_equal(got, want, n);
	free(got);
	free(want);

	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_stats st;
	struct at_sink_options opt = { .format = AT_SINK_ATZ, .atz = { .minor = 5 } };
	struct at_mapping map = { .pid = 10, .start = 0x1000, .end = 0x2000, .path = "/lib/x.so" };
	struct at_sink_record rec = { .kind = AT_SINK_MAPPING, .mapping = &map };

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_thread_start(&s, 6, 2), 0);
	assert_true(at_sink_thread_frames(s.thread));
	for (unsigned i = 0; i < 200; i++)
		assert_int_equal(at_sink_put(&s, &events[i % 4]), 0);
	assert_int_equal(at_sink_put_record(&s, &rec), 0);
	copy_fail_every = 1;
	copy_fail_after = copies = copies_failed = 0;
	assert_int_equal(at_sink_put_record(&s, &rec), -1);
	copy_fail_every = 0;
	assert_int_equal(copies_failed, 1);
	assert_int_equal(at_sink_error(&s), ENOMEM);
	assert_int_equal(at_sink_put(&s, &events[0]), 0); /* queued, as ever, never written */
	assert_int_equal(at_sink_flush(&s), -1);
	assert_int_equal(at_sink_error(&s), ENOMEM);
	assert_int_equal(at_sink_close(&s), -1);
	at_sink_stats(&s, &st);
	assert_int_equal(st.accepted, 201);
	assert_true(st.written <= 200);
	close(fd);
}

/* A text sink, or a 2.x trace with stacks but not 2.5 (whose frames could not go on from each
 * other), is written by one thread whatever the encoders asked: the same bytes as without. */
static void test_frames_not_possible(void **state)
{
	(void)state;
	size_t n0, n;
	struct at_sink_stats st0, st;
	char *want = write_many(AT_SINK_TEXT, 0, 0, &n0, &st0);
	char *got = write_many(AT_SINK_TEXT, 10, 3, &n, &st);

	assert_int_equal(n, n0);
	assert_memory_equal(got, want, n);
	free(got);
	free(want);

	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ, .atz = { .minor = 3 } };

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_thread_start(&s, 10, 3), 0);
	assert_false(at_sink_thread_frames(s.thread));
	assert_int_equal(at_sink_close(&s), 0);
	close(fd);
}

/* The pipe the blocked writer writes to, and whether the caller had put everything before it
 * was read (test_thread_records_do_not_wait). */
struct pipe_reader {
	int fd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int put_all, put_before_read;
	char *bytes;
	size_t n, cap;
};

static void *read_pipe(void *arg)
{
	struct pipe_reader *p = arg;
	struct timespec until;
	ssize_t got;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10; /* the caller blocked: read anyway, and the test fails */
	pthread_mutex_lock(&p->lock);
	while (!p->put_all && pthread_cond_timedwait(&p->cond, &p->lock, &until) == 0)
		;
	p->put_before_read = p->put_all;
	pthread_mutex_unlock(&p->lock);
	while ((got = read(p->fd, p->bytes + p->n, p->cap - p->n)) > 0)
		p->n += (size_t)got;
	return NULL;
}

/* A record does not wait for the writer: with the writer stuck in a write() to a full pipe,
 * 30,000 events and 100 stacks go in without waiting, and the trace, once the pipe is read,
 * holds them all. */
static void test_thread_records_do_not_wait(void **state)
{
	(void)state;
	int fds[2];
	pthread_t reader;
	struct pipe_reader p = { .lock = PTHREAD_MUTEX_INITIALIZER,
				 .cond = PTHREAD_COND_INITIALIZER, .cap = 8u << 20 };
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_ATZ };
	struct at_stack st = { .pid = 10, .count = 1 };
	struct at_sink_record rec = { .kind = AT_SINK_STACK, .stack = &st };

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	fcntl(fds[1], F_SETPIPE_SZ, 4096);
	p.fd = fds[0];
	p.bytes = malloc(p.cap);
	assert_int_equal(at_sink_open_fd(&s, fds[1], "pipe"), 0);
	assert_int_equal(pthread_create(&reader, NULL, read_pipe, &p), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_thread_start(&s, 16, 0), 0);
	uint64_t x = 88172645463325252ull;

	for (unsigned i = 0; i < 30000; i++) {
		/* sizes and addresses at random, so that the trace outgrows the pipe */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		struct at_event ev = { 10, 11, AT_MALLOC, 1, { x & 0xffff, 0 },
				       (x >> 16) & 0xfffffffff0, 1000 + i * 997ull, 0 };

		if (i % 300 == 0) {
			st.id = i / 300 + 1;
			st.pcs[0] = 0x400000 + i;
			assert_int_equal(at_sink_put_record(&s, &rec), 0);
		}
		ev.stack = st.id;
		assert_int_equal(at_sink_put(&s, &ev), 0);
	}
	pthread_mutex_lock(&p.lock);
	p.put_all = 1;
	pthread_cond_signal(&p.cond);
	pthread_mutex_unlock(&p.lock);
	assert_int_equal(at_sink_close(&s), 0);
	close(fds[1]);
	pthread_join(reader, NULL);
	close(fds[0]);
	assert_true(p.put_before_read);

	struct at_atz_stats ast;

	assert_true(p.n > 4096); /* more than the pipe held: the writer did wait for the reader */
	assert_int_equal(read_back(p.bytes, p.n, &ast), 30000);
	assert_int_equal(ast.stacks, 100);
	free(p.bytes);
}

/* The writing thread blocks every signal, so that a signal for the process reaches the thread
 * that waits for it (the daemon's loop in ppoll): its SigBlk in /proc has SIGINT, SIGCHLD and
 * SIGUSR1, while the caller's mask is as it was. */
static void test_thread_blocks_signals(void **state)
{
	(void)state;
	int fd = memfd_create("sink", 0);
	struct at_sink s;
	struct at_sink_options opt = { .format = AT_SINK_TEXT };
	sigset_t mine;
	char path[64], line[256];
	unsigned long long blocked = 0;
	int found = 0;

	assert_int_equal(at_sink_open_fd(&s, fd, "mem"), 0);
	assert_int_equal(at_sink_start(&s, &opt), 0);
	assert_int_equal(at_sink_thread_start(&s, 4, 0), 0);
	/* the thread has run (a new thread starts with every signal blocked until it sets its
	 * own mask): it wrote an event */
	assert_int_equal(at_sink_put(&s, &events[0]), 0);
	assert_int_equal(at_sink_flush(&s), 0);
	for (pid_t tid = getpid() + 1; tid < getpid() + 100000 && !found; tid++) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
		FILE *f = fopen(path, "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "SigBlk: %llx", &blocked) == 1)
				found = 1;
		fclose(f);
	}
	assert_true(found);
	assert_true(blocked & (1ull << (SIGINT - 1)));
	assert_true(blocked & (1ull << (SIGCHLD - 1)));
	assert_true(blocked & (1ull << (SIGUSR1 - 1)));
	assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &mine), 0);
	assert_false(sigismember(&mine, SIGINT));
	assert_int_equal(at_sink_close(&s), 0);
	close(fd);
}

static void test_open_failure(void **state)
{
	(void)state;
	struct at_sink s;

	assert_int_equal(at_sink_open(&s, "/nonexistent/dir/log", AT_SINK_APPEND), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(at_sink_error(&s), ENOENT);
	assert_string_equal(at_sink_name(&s), "/nonexistent/dir/log");
	assert_int_equal(at_sink_start(&s, &text_raw), -1);
	assert_int_equal(at_sink_put(&s, &events[0]), -1);
	assert_int_equal(at_sink_close(&s), -1);
	assert_int_equal(at_sink_error(&s), ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_bytes),
		cmocka_unit_test(test_thread_same_bytes),
		cmocka_unit_test(test_thread_records_same_bytes),
		cmocka_unit_test(test_thread_records_do_not_wait),
		cmocka_unit_test(test_frames_same_trace),
		cmocka_unit_test(test_frames_counts),
		cmocka_unit_test(test_frames_go_on),
		cmocka_unit_test(test_frames_not_possible),
		cmocka_unit_test(test_frames_closed_pipe),
		cmocka_unit_test(test_record_copy_fails),
		cmocka_unit_test(test_thread_blocks_signals),
		cmocka_unit_test(test_text_switch_and_records),
		cmocka_unit_test(test_bad_event),
		cmocka_unit_test(test_atz_roundtrip),
		cmocka_unit_test(test_atz_thread_end),
		cmocka_unit_test(test_atz_v1_drops_stacks),
		cmocka_unit_test(test_atz_refused_record),
		cmocka_unit_test(test_atz_flush_ends_block),
		cmocka_unit_test(test_dev_full_text),
		cmocka_unit_test(test_dev_full_atz),
		cmocka_unit_test(test_closed_pipe),
		cmocka_unit_test(test_short_write_counts_whole_lines),
		cmocka_unit_test(test_full_disk_counts),
		cmocka_unit_test(test_whole_lines),
		cmocka_unit_test(test_reopen),
		cmocka_unit_test(test_open_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
