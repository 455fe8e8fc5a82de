/* test_daemon_dest.c: unit tests of daemon/trace/dest.c's outputs: a path appended to (text) or
 * truncated (binary), descriptors that are closed or read-only, SIGHUP's reopen after a
 * rotation, without one (flushed only: one lz4 frame), when the path cannot be opened (the old
 * file goes on) or is a planted link, the write-error message, and the parsing of DEST. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/trace/dest.h"
#include "display.h"
#include "source.h"

static const struct at_sink_options text = { .format = AT_SINK_TEXT };
static const struct at_sink_options binary = { .format = AT_SINK_ATZ };
static const struct at_event marker = { 7, 7, AT_JEMALLOC_STATS, 0, { 0, 0 }, 0, 0, 0 };

static char dir[] = "/tmp/test_daemon_dest.XXXXXX";

static int make_dir(void **state)
{
	(void)state;
	at_display_level = 0; /* the error messages are expected */
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	(void)state;
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void file_path(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *read_file(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = 0;
	close(fd);
	return buf;
}

/* Text: a path is appended to (MALLOC_LOG's rule). */
static void test_dest(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int rc, fd;
		const char *path;
	} cases[] = {
		{ "3", 0, 3, NULL },       { "0", 0, 0, NULL },      { "9999", 0, 9999, NULL },
		{ "09999", 0, 9999, NULL }, { "10000", 0, -1, "10000" }, { "-", 0, 1, NULL },
		{ "12abc", 0, -1, "12abc" }, { "/tmp/log", 0, -1, "/tmp/log" },
		{ "-3", 0, -1, "-3" },     { " 3", 0, -1, " 3" },    { "", -1, -1, NULL },
		{ "000000000003", 0, -1, "000000000003" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_dest d;
		int rc = at_dest_parse(cases[i].s, &d);
		if (rc != cases[i].rc || d.fd != cases[i].fd)
			fail_msg("'%s': rc %d fd %d", cases[i].s, rc, d.fd);
		if (cases[i].path)
			assert_string_equal(d.path, cases[i].path);
		else
			assert_null(d.path);
	}
	assert_int_equal(at_dest_parse(NULL, &(struct at_dest){ 0, NULL }), -1);
}

static void test_text_appends(void **state)
{
	(void)state;
	char path[128];
	struct at_dest d;
	struct at_sink s;

	file_path(path, sizeof(path), "text.log");
	write_file(path, "1 1 jemalloc_stats()\n");
	assert_int_equal(at_dest_parse(path, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_close(&s), 0);
	assert_string_equal(read_file(path), "1 1 jemalloc_stats()\n7 7 jemalloc_stats()\n");
}

/* Binary: a path is truncated, so the file is one lz4 frame. */
static void test_binary_truncates(void **state)
{
	(void)state;
	char path[128];
	struct at_dest d;
	struct at_sink s;
	struct at_source src;
	struct at_event ev;

	file_path(path, sizeof(path), "trace.atz");
	write_file(path, "old content that is not a trace\n");
	assert_int_equal(at_dest_parse(path, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &binary), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_close(&s), 0);
	assert_int_equal(at_source_open(&src, path), 0);
	assert_int_equal(src.kind, AT_SOURCE_BINARY);
	assert_int_equal(at_source_next(&src, &ev), 1);
	assert_int_equal(ev.func, AT_JEMALLOC_STATS);
	assert_int_equal(at_source_next(&src, &ev), 0);
	at_source_close(&src);
}

/* A descriptor must be open for writing. */
static void test_descriptors(void **state)
{
	(void)state;
	char path[128];
	struct at_dest d;
	struct at_sink s;

	assert_int_equal(at_dest_parse("77", &d), 0);
	close(77);
	assert_int_equal(at_dest_open(&d, &s, &text), -1);

	file_path(path, sizeof(path), "ro");
	write_file(path, "");
	int fd = open(path, O_RDONLY);
	char arg[16];
	snprintf(arg, sizeof(arg), "%d", fd);
	assert_int_equal(at_dest_parse(arg, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), -1);
	close(fd);

	fd = open(path, O_WRONLY | O_APPEND);
	snprintf(arg, sizeof(arg), "%d", fd);
	assert_int_equal(at_dest_parse(arg, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_dest_reopen(&d, &s), 0); /* a descriptor: flushed */
	assert_string_equal(read_file(path), "7 7 jemalloc_stats()\n");
	assert_int_equal(at_sink_close(&s), 0);
	assert_true(fcntl(fd, F_GETFD) >= 0); /* the daemon's caller owns it */
	close(fd);
}

/* SIGHUP after a rotation: the next events go to a new file at the path, the counters go on. */
static void test_reopen_after_rotation(void **state)
{
	(void)state;
	char path[128], moved[128];
	struct at_dest d;
	struct at_sink s;
	struct at_sink_stats st;

	file_path(path, sizeof(path), "rot.log");
	file_path(moved, sizeof(moved), "rot.log.1");
	assert_int_equal(at_dest_parse(path, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(at_dest_reopen(&d, &s), 1); /* a new file */
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_close(&s), 0);
	assert_string_equal(read_file(moved), "7 7 jemalloc_stats()\n");
	assert_string_equal(read_file(path), "7 7 jemalloc_stats()\n");
	at_sink_stats(&s, &st);
	assert_int_equal(st.written, 2);

	/* the directory replaced by a file: the reopen cannot open the path, and the trace goes
	 * on in the file opened before (now unlinked), nothing dropped */
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf %s && touch %s", dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(at_dest_reopen(&d, &s), 0);
	assert_int_equal(at_sink_error(&s), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_close(&s), 0);
	at_sink_stats(&s, &st);
	assert_int_equal(st.written, 1);
	snprintf(cmd, sizeof(cmd), "rm -f %s && mkdir %s", dir, dir);
	assert_int_equal(system(cmd), 0);
}

/* Runs at_dest_reopen with stderr captured: its return value, the message in msg. */
static int reopen_capturing(const struct at_dest *d, struct at_sink *s, char *msg, size_t cap)
{
	int err[2], saved = dup(2);

	assert_int_equal(pipe(err), 0);
	dup2(err[1], 2);
	at_display_level = 2;
	at_program_name = "alloctapd";
	int rc = at_dest_reopen(d, s);
	dup2(saved, 2);
	close(saved);
	close(err[1]);
	at_display_level = 0;
	ssize_t n = read(err[0], msg, cap - 1);
	msg[n > 0 ? n : 0] = 0;
	close(err[0]);
	return rc;
}

/* SIGHUP when the path cannot be opened again (its folder moved away): the trace goes on in
 * the old file, complete, after one message; a later SIGHUP once the path is back reopens. */
static void test_reopen_folder_moved(void **state)
{
	(void)state;
	char sub[128], moved[128], path[160], msg[512], want[512];
	struct at_dest d;
	struct at_sink s;
	struct at_sink_stats st;

	file_path(sub, sizeof(sub), "logs");
	file_path(moved, sizeof(moved), "logs.old");
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(path, sizeof(path), "%s/x.log", sub);
	assert_int_equal(at_dest_parse(path, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(rename(sub, moved), 0);
	assert_int_equal(reopen_capturing(&d, &s, msg, sizeof(msg)), 0);
	snprintf(want, sizeof(want), "alloctapd: cannot reopen output %s: No such file or "
		 "directory; still writing to the file opened before\n", path);
	assert_string_equal(msg, want);
	assert_int_equal(at_sink_error(&s), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_flush(&s), 0);
	char old[160];
	snprintf(old, sizeof(old), "%s/x.log", moved);
	assert_string_equal(read_file(old), "7 7 jemalloc_stats()\n7 7 jemalloc_stats()\n");

	/* the folder is back, empty: the next SIGHUP opens a new file there */
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(reopen_capturing(&d, &s, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "");
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_close(&s), 0);
	assert_string_equal(read_file(d.path), "7 7 jemalloc_stats()\n");
	at_sink_stats(&s, &st);
	assert_int_equal(st.accepted, 3);
	assert_int_equal(st.written, 3);
}

/* Where the lz4 frame magic occurs in the n bytes at p after the first four: -1 if nowhere. */
static long second_magic(const char *p, size_t n)
{
	static const unsigned char magic[4] = { 0x04, 0x22, 0x4d, 0x18 };
	const char *q = n > 4 ? memmem(p + 4, n - 4, magic, 4) : NULL;

	return q ? (long)(q - p) : -1;
}

/* SIGHUP without rotation: the path still names the file being written, so the output is
 * only flushed; a binary trace stays one lz4 frame, and every event is in it. After a real
 * rotation the new file starts a frame of its own. */
static void test_reopen_same_file(void **state)
{
	(void)state;
	char path[128], moved[128];
	struct at_dest d;
	struct at_sink s;
	struct at_sink_stats st;
	struct at_source src;
	struct at_event ev;
	struct stat before, after;

	file_path(path, sizeof(path), "same.atz");
	file_path(moved, sizeof(moved), "same.atz.1");
	assert_int_equal(at_dest_parse(path, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &binary), 0);
	assert_int_equal(stat(path, &before), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(at_sink_put(&s, &marker), 0);
		assert_int_equal(at_dest_reopen(&d, &s), 0);
	}
	at_sink_stats(&s, &st);
	assert_int_equal(st.written, 3); /* flushed each time */
	assert_int_equal(at_sink_close(&s), 0);
	assert_int_equal(stat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	char *bytes = read_file(path);
	assert_int_equal(second_magic(bytes, (size_t)after.st_size), -1);
	assert_int_equal(at_source_open(&src, path), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(at_source_next(&src, &ev), 1);
	assert_int_equal(at_source_next(&src, &ev), 0);
	at_source_close(&src);

	/* text: flushed only as well, nothing written twice */
	file_path(path, sizeof(path), "same.log");
	assert_int_equal(at_dest_parse(path, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_dest_reopen(&d, &s), 0);
	assert_string_equal(read_file(path), "7 7 jemalloc_stats()\n");
	assert_int_equal(at_sink_close(&s), 0);

	/* a rotation: the new file is a trace of its own */
	file_path(path, sizeof(path), "rot.atz");
	assert_int_equal(at_dest_parse(path, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &binary), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(at_dest_reopen(&d, &s), 1);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_close(&s), 0);
	const char *files[] = { moved, path };
	for (int f = 0; f < 2; f++) {
		assert_int_equal(at_source_open(&src, files[f]), 0);
		assert_int_equal(at_source_next(&src, &ev), 1);
		assert_int_equal(at_source_next(&src, &ev), 0);
		at_source_close(&src);
	}
}

/* A link planted at the path after a rotation is not followed: the trace goes on in the old
 * file, and the link's target is untouched. */
static void test_reopen_refuses_link(void **state)
{
	(void)state;
	char path[128], moved[128], victim[128], msg[512];
	struct at_dest d;
	struct at_sink s;

	file_path(path, sizeof(path), "linked.log");
	file_path(moved, sizeof(moved), "linked.log.1");
	file_path(victim, sizeof(victim), "victim");
	write_file(victim, "precious\n");
	assert_int_equal(at_dest_parse(path, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(reopen_capturing(&d, &s, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "a symbolic link (outputs are not opened through links)"));
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_close(&s), 0);
	assert_string_equal(read_file(victim), "precious\n");
	assert_string_equal(read_file(moved), "7 7 jemalloc_stats()\n7 7 jemalloc_stats()\n");
}

/* The message names the output and, for a closed pipe, says so. */
/* What at_dest_report says of the sink s at level: its bytes (NUL-ended) into msg. */
static void report_at(const struct at_sink *s, int level, char *msg, size_t size)
{
	int err[2];

	assert_int_equal(pipe(err), 0);
	int saved = dup(2);
	dup2(err[1], 2);
	at_display_level = level;
	at_program_name = "alloctapd";
	at_dest_report(s);
	dup2(saved, 2);
	close(saved);
	close(err[1]);
	at_display_level = 0;
	ssize_t n = read(err[0], msg, size - 1);
	msg[n > 0 ? n : 0] = 0;
	close(err[0]);
}

/* A failed write is said as every program says it; a reader gone (a closed pipe) is said only
 * at -v, and remembered for the exit (lib/display.h). */
static void test_report(void **state)
{
	(void)state;
	int p[2], full;
	struct at_dest d;
	struct at_sink s;
	char arg[16], msg[256], want[128];

	full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	assert_true(full >= 0);
	snprintf(arg, sizeof(arg), "%d", full);
	assert_int_equal(at_dest_parse(arg, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_flush(&s), -1);
	report_at(&s, 2, msg, sizeof(msg));
	snprintf(want, sizeof(want), "alloctapd: fd %d: write error: No space left on device\n",
		 full);
	assert_string_equal(msg, want);
	assert_int_equal(at_reader_gone(), 0);
	at_sink_close(&s);
	close(full);

	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	snprintf(arg, sizeof(arg), "%d", p[1]);
	assert_int_equal(at_dest_parse(arg, &d), 0);
	assert_int_equal(at_dest_open(&d, &s, &text), 0);
	assert_int_equal(at_sink_put(&s, &marker), 0);
	assert_int_equal(at_sink_flush(&s), -1);
	report_at(&s, 3, msg, sizeof(msg));
	snprintf(want, sizeof(want), "alloctapd: fd %d: the reader went away; output stopped\n",
		 p[1]);
	assert_string_equal(msg, want);
	report_at(&s, 2, msg, sizeof(msg));
	assert_string_equal(msg, "");
	assert_int_equal(at_reader_gone(), 1);
	report_at(&s, 3, msg, sizeof(msg)); /* -v: said once, the first time */
	assert_string_equal(msg, "");
	at_sink_close(&s);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dest),
		cmocka_unit_test(test_text_appends),
		cmocka_unit_test(test_binary_truncates),
		cmocka_unit_test(test_descriptors),
		cmocka_unit_test(test_reopen_after_rotation),
		cmocka_unit_test(test_reopen_folder_moved),
		cmocka_unit_test(test_reopen_same_file),
		cmocka_unit_test(test_reopen_refuses_link),
		cmocka_unit_test(test_report),
	};
	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
