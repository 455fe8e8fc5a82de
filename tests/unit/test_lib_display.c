/* test_lib_display: the exact bytes every message function writes, at every level. */
#include <errno.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "display.h"

/* stderr goes to a temporary file for the whole test; captured() returns what was written
 * since the last call. */
static FILE *capture;
static int saved_stderr = -1;

static int setup(void **state)
{
	(void)state;
	capture = tmpfile();
	if (!capture)
		return -1;
	saved_stderr = dup(STDERR_FILENO);
	dup2(fileno(capture), STDERR_FILENO);
	at_program_name = "prog";
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	fclose(capture);
	return 0;
}

static const char *captured(void)
{
	static char buf[3 * AT_DISPLAY_MAX];
	long end = lseek(fileno(capture), 0, SEEK_CUR);
	size_t n;

	lseek(fileno(capture), 0, SEEK_SET);
	n = (size_t)read(fileno(capture), buf, sizeof(buf) - 1);
	buf[n] = 0;
	assert_int_equal((long)n, end);
	if (ftruncate(fileno(capture), 0) != 0)
		fail();
	lseek(fileno(capture), 0, SEEK_SET);
	return buf;
}

static void test_formats(void **state)
{
	(void)state;
	at_display_level = 2;
	at_error("cannot open %s: %s", "f", "No such file");
	assert_string_equal(captured(), "prog: cannot open f: No such file\n");
	at_error_at("in.log", 12, "bad %s", "line");
	assert_string_equal(captured(), "prog: in.log:12: bad line\n");
	at_warn("w%d", 1);
	assert_string_equal(captured(), "prog: w1\n");
	DISPLAYLEVEL(2, "%s: raw %d", "p", 3);
	DISPLAYLEVEL(2, " more\n");
	assert_string_equal(captured(), "p: raw 3 more\n");
	assert_int_equal(at_usage_error("bad option '%s'", "-x"), AT_EXIT_USAGE);
	assert_string_equal(captured(), "prog: bad option '-x'\nTry 'prog --help'.\n");
}

/* Which functions print at which level: a table of level -> expected output. */
static void test_levels(void **state)
{
	static const struct {
		int level;
		const char *want;
	} cases[] = {
		{ 0, "" },
		{ 1, "prog: e\n" },
		{ 2, "prog: e\nprog: w\n" },
		{ 3, "prog: e\nprog: w\nprog: v\n" },
		{ 4, "prog: e\nprog: w\nprog: v\nd4\n" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		at_display_level = cases[i].level;
		at_error("e");
		at_warn("w");
		at_verbose("v");
		DISPLAYLEVEL(4, "d4\n");
		assert_string_equal(captured(), cases[i].want);
	}
	at_display_level = 2;
}

static void test_steps(void **state)
{
	(void)state;
	at_display_level = 2;
	at_display_step(-1);
	assert_int_equal(at_display_level, 1);
	at_display_step(-1);
	at_display_step(-1);
	assert_int_equal(at_display_level, 0);
	for (int i = 0; i < 9; i++)
		at_display_step(+1);
	assert_int_equal(at_display_level, 4);
	at_display_level = 2;
}

/* A message longer than the buffer is cut with "..." and still ends its line. */
static void test_long_message(void **state)
{
	static char big[2 * AT_DISPLAY_MAX];
	const char *out;
	size_t n;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	at_error("%s", big);
	out = captured();
	n = strlen(out);
	assert_int_equal(n, AT_DISPLAY_MAX);
	assert_memory_equal(out, "prog: aaa", 9);
	assert_memory_equal(out + n - 4, "...\n", 4);
	DISPLAYLEVEL(1, "%s\n", big);
	out = captured();
	n = strlen(out);
	assert_int_equal(n, AT_DISPLAY_MAX);
	assert_memory_equal(out + n - 4, "...\n", 4);
}

static void test_message_parts(void **state)
{
	struct at_message m = { .len = 0 };

	(void)state;
	at_display_level = 2;
	at_message_append(&m, "a=%d", 1);
	at_message_append(&m, " b=%s\n", "x");
	at_message_emit(3, &m);
	assert_string_equal(captured(), "");
	at_message_emit(2, &m);
	assert_string_equal(captured(), "a=1 b=x\n");
}

/* Callers print strerror(errno) after a message: the message must not change errno. */
static void test_errno_kept(void **state)
{
	(void)state;
	at_display_level = 2;
	errno = ENOSPC;
	at_error("x");
	assert_int_equal(errno, ENOSPC);
	captured();
}

/* Control characters in a message (a path holding a terminal escape) are written as \xHH:
 * one table of what each function writes for text holding them. */
static void test_controls_escaped(void **state)
{
	static const char esc_path[] = "/tmp/lib\033]0;owned\007\033[2J.so";
	struct at_message m = { .len = 0 };

	(void)state;
	at_display_level = 2;
	at_warn("%s: not an ELF object", esc_path);
	assert_string_equal(captured(), "prog: /tmp/lib\\x1b]0;owned\\x07\\x1b[2J.so: not an ELF object\n");
	/* a newline inside an at_say message would forge a line of its own */
	at_error_at("a\nprog: b", 3, "x%sy", "\n\r");
	assert_string_equal(captured(), "prog: a\nprog: b:3: x\\x0a\\x0dy\n");
	/* text written as it is keeps its newlines and tabs */
	DISPLAYLEVEL(2, "%s\t%s\n", esc_path, "ok");
	assert_string_equal(captured(), "/tmp/lib\\x1b]0;owned\\x07\\x1b[2J.so\tok\n");
	/* C1 controls (U+009B, CSI) both bytes escaped; other UTF-8 as it is; DEL escaped */
	at_warn("\xc2\x9b" "31m \xc3\xa9\xc2\xa0 \x7f");
	assert_string_equal(captured(), "prog: \\xc2\\x9b31m \xc3\xa9\xc2\xa0 \\x7f\n");
	at_message_append(&m, "%s\n", esc_path);
	at_message_emit(2, &m);
	assert_string_equal(captured(), "/tmp/lib\\x1b]0;owned\\x07\\x1b[2J.so\n");
}

/* A message of escapes longer than the buffer: cut with "..." at the same length as any, no
 * escape cut raw. */
static void test_long_escaped(void **state)
{
	static char big[AT_DISPLAY_MAX];
	const char *out;
	size_t n;

	(void)state;
	at_display_level = 2;
	memset(big, '\033', sizeof(big) - 1);
	at_error("%s", big);
	out = captured();
	n = strlen(out);
	assert_int_equal(n, AT_DISPLAY_MAX);
	assert_memory_equal(out, "prog: \\x1b\\x1b", 14);
	assert_memory_equal(out + n - 4, "...\n", 4);
	assert_null(memchr(out, '\033', n));
}

/* A progress line: a carriage return, the text escaped, no newline; the next message erases
 * it first. */
static void test_progress_line(void **state)
{
	(void)state;
	at_display_level = 2;
	at_display_progress("%s: 1.0 M lines ", "in\033[1mx");
	assert_string_equal(captured(), "\rin\\x1b[1mx: 1.0 M lines ");
	assert_int_equal(at_display_line_open, 1);
	at_warn("done");
	assert_string_equal(captured(), "\r\033[Kprog: done\n");
	assert_int_equal(at_display_line_open, 0);
}

/* A failed write, said the one way every program says it: a table of errno -> message; none
 * is a reader gone, so the exit status is the program's own. */
static void test_write_errors(void **state)
{
	static const struct {
		int err;
		const char *want;
	} cases[] = {
		{ ENOSPC, "prog: out.log: write error: No space left on device\n" },
		{ EIO, "prog: out.log: write error: Input/output error\n" },
		{ 0, "prog: out.log: write error: Input/output error\n" }, /* no errno: EIO */
		{ EFBIG, "prog: out.log: write error: File too large\n" },
	};

	(void)state;
	at_display_level = 2;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(at_write_error("out.log", cases[i].err), 0);
		assert_string_equal(captured(), cases[i].want);
	}
	at_display_level = 1;
	at_write_error("out.log", ENOSPC);
	assert_string_equal(captured(), "prog: out.log: write error: No space left on device\n");
	at_display_level = 0;
	at_write_error("out.log", ENOSPC);
	assert_string_equal(captured(), "");
	at_display_level = 2;
	assert_int_equal(at_reader_gone(), 0);
	assert_int_equal(at_exit_status(3), 3);
	assert_int_equal(at_exit_status(0), 0);
}

/* In a child at level (SIGPIPE ignored, and blocked when block is set, as a program may
 * inherit it): the reader goes (EPIPE twice), then at_exit_status(status). Returns the
 * child's wait status. */
static int child_reader_gone(int level, int block, int status)
{
	pid_t pid = fork();

	if (pid == 0) {
		sigset_t set;

		signal(SIGPIPE, SIG_IGN);
		sigemptyset(&set);
		sigaddset(&set, SIGPIPE);
		if (block)
			sigprocmask(SIG_BLOCK, &set, NULL);
		at_display_level = level;
		if (at_write_error("<stdout>", EPIPE) != 1 || at_write_error("<stdout>", EPIPE) != 1)
			_exit(90);
		if (!at_reader_gone())
			_exit(91);
		at_exit_status(status);
		_exit(92); /* not reached: killed by SIGPIPE */
	}
	int ws = -1;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	return ws;
}

/* A reader gone: nothing said (one line at -v, once), the program killed by SIGPIPE as cat
 * is, whatever its status, its disposition or its mask. */
static void test_reader_gone(void **state)
{
	static const struct {
		int level, block, status;
		const char *want;
	} cases[] = {
		{ 2, 0, 0, "" },
		{ 2, 0, 1, "" },
		{ 1, 1, 3, "" },
		{ 3, 0, 1, "prog: <stdout>: the reader went away; output stopped\n" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case %zu\n", i);
		int ws = child_reader_gone(cases[i].level, cases[i].block, cases[i].status);
		assert_true(WIFSIGNALED(ws));
		assert_int_equal(WTERMSIG(ws), SIGPIPE);
		assert_string_equal(captured(), cases[i].want);
	}
	assert_int_equal(at_reader_gone(), 0); /* the parent's own state is untouched */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),     cmocka_unit_test(test_levels),
		cmocka_unit_test(test_steps),       cmocka_unit_test(test_long_message),
		cmocka_unit_test(test_message_parts), cmocka_unit_test(test_errno_kept),
		cmocka_unit_test(test_controls_escaped), cmocka_unit_test(test_long_escaped),
		cmocka_unit_test(test_progress_line), cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_reader_gone),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
