/* test_daemon_pyframes.c: unit tests of daemon/python/pyframes.c and pylinetable.c.
 *
 * The oracle is CPython itself: tests/fixtures/py_stacks.py stops at a known point (a plain
 * call chain, a generator, a C function calling back into Python, a coroutine under asyncio,
 * an exception unwinding, a thread) after writing the stopped thread's frames as its own
 * traceback module gives them; the reader's frames of that thread must be the same, function,
 * qualified name, file and line, frame by frame, for Debian's 3.11 and pyenv's 3.11, 3.12 and
 * 3.13. An interpreter not installed here is skipped, said in a message. 3.10 and 2.7 must be
 * named unknown, and a process that is no Python not Python. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/python/pyframes.h"
#include "../../daemon/python/pylinetable.h"

#define PYENV "/root/.pyenv/versions/"

static char dir[] = "/tmp/test_daemon_pyframes.XXXXXX";
static char script[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	if (!realpath("tests/fixtures/py_stacks.py", script))
		return -1;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* Starts argv; returns its pid. */
static pid_t start(char *const argv[])
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Kills and reaps pid. */
static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Waits up to 20 s for path to exist (the fixture renames it into place whole). */
static void wait_for(const char *path, pid_t pid)
{
	for (int i = 0; i < 2000; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		if (access(path, R_OK) == 0)
			return;
		assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
		nanosleep(&ts, NULL);
	}
	fail_msg("%s never appeared", path);
}

/* One frame as the fixture's traceback gives it. */
struct want {
	char name[256], qualname[1024], file[1024];
	int line;
};

/* Reads the fixture's file: the stopped thread's id and up to max frames; their number. */
static int read_want(const char *path, pid_t *tid, struct want *w, int max)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0, t;

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_int_equal(sscanf(line, "tid %d", &t), 1);
	*tid = t;
	while (n < max && fgets(line, sizeof(line), f)) {
		assert_int_equal(sscanf(line, "%255[^\t]\t%1023[^\t]\t%1023[^\t]\t%d", w[n].name,
					w[n].qualname, w[n].file, &w[n].line), 4);
		n++;
	}
	fclose(f);
	return n;
}

/* Runs scenario under python and compares the reader's frames of the stopped thread with the
 * fixture's. The qualified names of the frames marked entry, innermost first, joined by ','
 * go to entries. */
static void compare(const char *python, const char *scenario, char *entries, size_t elen)
{
	char out[PATH_MAX], why[512];
	char *argv[] = { (char *)python, script, (char *)scenario, out, NULL };
	struct want w[64];
	struct at_py_frame f[64];
	struct at_py_proc p;
	pid_t pid, tid;
	int n, got;

	if (access(python, X_OK) != 0) {
		print_message("%s not installed\n", python);
		skip();
	}
	snprintf(out, sizeof(out), "%s/%s", dir, scenario);
	unlink(out);
	pid = start(argv);
	wait_for(out, pid);
	n = read_want(out, &tid, w, 64);
	assert_int_equal(at_py_open(&p, pid, why, sizeof(why)), AT_PY_KNOWN);
	got = at_py_thread_frames(&p, tid, f, 64);
	if (got != n)
		print_message("%s %s: %d frames, traceback says %d\n", python, scenario, got, n);
	assert_int_equal(got, n);
	entries[0] = 0;
	for (int i = 0; i < n; i++) {
		struct at_py_code c;

		assert_int_equal(at_py_code_read(&p, f[i].code, &c), 0);
		if (strcmp(c.name, w[i].name) || strcmp(c.file, w[i].file) ||
		    at_py_code_line(&c, f[i].offset) != w[i].line)
			print_message("%s %s frame %d: %s %s:%d, traceback says %s %s:%d\n", python,
				      scenario, i, c.name, c.file, at_py_code_line(&c, f[i].offset),
				      w[i].name, w[i].file, w[i].line);
		assert_string_equal(c.name, w[i].name);
		assert_string_equal(c.qualname, w[i].qualname);
		assert_string_equal(c.file, w[i].file);
		assert_int_equal(at_py_code_line(&c, f[i].offset), w[i].line);
		if (f[i].entry)
			snprintf(entries + strlen(entries), elen - strlen(entries), "%s%s",
				 entries[0] ? "," : "", c.qualname);
		free(c.linetable);
	}
	at_py_close(&p);
	stop(pid);
}

/* The interpreters with frames to read. */
static const char *const pythons[] = {
	"/usr/bin/python3.11",
	PYENV "3.11.7/bin/python3.11",
	PYENV "3.12.1/bin/python3.12",
	PYENV "3.13.0/bin/python3.13",
};

/* Each scenario, and the frames that begin a run of the evaluation loop (a frame called from
 * C), 3.11's and 3.12's (3.13 as 3.12). 3.12 runs a generator's frames (FOR_ITER_GEN,
 * SEND_GEN) and a call with *args (Thread.run's target) in the caller's run, where 3.11 enters
 * the loop again. Each run is one _PyEval_EvalFrameDefault frame: the counts here are those of
 * gdb's backtraces of the same stops. */
static const struct {
	const char *scenario;
	const char *entries311, *entries312;
} scenarios[] = {
	{ "plain", "<module>", "<module>" },
	{ "callback", "callback.<locals>.<lambda>,<module>", "callback.<locals>.<lambda>,<module>" },
	{ "exception", "<module>", "<module>" },
	{ "thread", "plain,Thread._bootstrap", "Thread._bootstrap" },
	{ "generator", "generator.<locals>.numbers,<module>", "<module>" },
	{ "coroutine", "coroutine.<locals>.inner,coroutine.<locals>.outer,<module>",
	  "coroutine.<locals>.outer,<module>" },
};

/* Every scenario under each interpreter: the same frames as its traceback module. */
static void test_frames_equal_traceback(void **state)
{
	char entries[4096];

	(void)state;
	for (size_t i = 0; i < sizeof(pythons) / sizeof(pythons[0]); i++)
		for (size_t k = 0; k < sizeof(scenarios) / sizeof(scenarios[0]); k++) {
			compare(pythons[i], scenarios[k].scenario, entries, sizeof(entries));
			assert_string_equal(entries, strstr(pythons[i], "3.11") ?
					    scenarios[k].entries311 : scenarios[k].entries312);
		}
}

/* Runs python -c code, waits for it to be started, and returns what at_py_open() says. */
static enum at_py_found open_of(const char *python, const char *code, char *why, size_t wl)
{
	char *argv[] = { (char *)python, "-c", (char *)code, NULL };
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	struct at_py_proc p;
	enum at_py_found found;
	pid_t pid;

	pid = start(argv);
	nanosleep(&ts, NULL);
	found = at_py_open(&p, pid, why, wl);
	if (found == AT_PY_KNOWN)
		at_py_close(&p);
	stop(pid);
	return found;
}

/* 3.10 and 2.7 are CPythons the reader does not know: one message naming the object. */
static void test_unknown_versions(void **state)
{
	static const struct { const char *python, *object; } cases[] = {
		{ PYENV "3.10.13/bin/python3.10", "libpython3.10.so.1.0" },
		{ PYENV "2.7.18/bin/python2.7", "libpython2.7.so.1.0" },
	};
	char why[512], want[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (access(cases[i].python, X_OK) != 0) {
			print_message("%s not installed\n", cases[i].python);
			continue;
		}
		assert_int_equal(open_of(cases[i].python, "import time; time.sleep(60)", why,
					 sizeof(why)), AT_PY_UNKNOWN);
		snprintf(want, sizeof(want), "%s is a Python before 3.11: Python frames are read "
			 "for 3.11 to 3.13 only", cases[i].object);
		assert_string_equal(why, want);
	}
}

/* A process that runs no Python, and one that is gone. */
static void test_not_python(void **state)
{
	char *argv[] = { "/bin/sleep", "60", NULL };
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	struct at_py_proc p;
	char why[512];
	pid_t pid = start(argv);

	(void)state;
	nanosleep(&ts, NULL);
	assert_int_equal(at_py_open(&p, pid, why, sizeof(why)), AT_PY_NOT_PYTHON);
	stop(pid);
	assert_int_equal(at_py_open(&p, pid, why, sizeof(why)), AT_PY_ERROR);
	assert_non_null(strstr(why, "/maps: No such file or directory"));
}

/* A thread of a Python process that has no Python state (here: a pid that is no thread of it)
 * has no frames. */
static void test_thread_without_state(void **state)
{
	char out[PATH_MAX], why[512];
	char *argv[] = { (char *)pythons[3], script, "plain", out, NULL };
	struct at_py_frame f[4];
	struct at_py_proc p;
	pid_t pid;

	(void)state;
	if (access(pythons[3], X_OK) != 0)
		skip();
	snprintf(out, sizeof(out), "%s/nostate", dir);
	pid = start(argv);
	wait_for(out, pid);
	assert_int_equal(at_py_open(&p, pid, why, sizeof(why)), AT_PY_KNOWN);
	assert_int_equal(at_py_thread_frames(&p, getpid(), f, 4), 0);
	assert_int_equal(at_py_thread_frames(&p, pid, f, 4), 4); /* the first 4 of 7 */
	at_py_close(&p);
	stop(pid);
}

/* Stores the 64-bit word v at addr of an image. */
static void put64(uint8_t *img, uint64_t addr, uint64_t v)
{
	memcpy(img + addr, &v, sizeof(v));
}

/* Circular lists in a hostile process's memory (a 3.12-shaped image read in place of
 * /proc/PID/mem): the search and the walk end at their bounds. */
static void test_circular_lists(void **state)
{
	static uint8_t img[0x2000];
	struct at_py_proc p = { .pid = 1, .runtime = 64,
				.mem_fd = memfd_create("pyframes", MFD_CLOEXEC) };
	struct at_py_frame f[8];
	const struct at_py_offsets *o = at_py_offsets_table(0x030c01f0);

	(void)state;
	assert_true(p.mem_fd >= 0);
	p.off = *o;
	put64(img, 64 + o->runtime_interpreters_head, 0x200);
	put64(img, 0x200 + o->interp_threads_head, 0x400);
	put64(img, 0x400 + o->tstate_next, 0x400);                /* a thread state, its own next */
	put64(img, 0x400 + o->tstate_native_thread_id, 5);
	put64(img, 0x400 + o->tstate_cframe, 0x600);
	put64(img, 0x600 + o->cframe_current_frame, 0x800);
	put64(img, 0x800 + o->frame_previous, 0x800);             /* a frame, its own previous */
	put64(img, 0x800 + o->frame_code, 0x1000);
	put64(img, 0x800 + o->frame_instr, 0x1000 + o->code_code_adaptive + 6);
	assert_int_equal(pwrite(p.mem_fd, img, sizeof(img), 0), (ssize_t)sizeof(img));
	assert_int_equal(at_py_thread_frames(&p, 7, f, 8), 0);    /* thread 7: none */
	assert_int_equal(at_py_thread_frames(&p, 5, f, 8), 8);    /* the same frame, 8 times */
	for (int i = 0; i < 8; i++) {
		assert_int_equal(f[i].code, 0x1000);
		assert_int_equal(f[i].offset, 3);
		assert_int_equal(f[i].entry, 0);
	}
	/* a frame whose code is null makes no sense */
	put64(img, 0x800 + o->frame_code, 0);
	assert_int_equal(pwrite(p.mem_fd, img, sizeof(img), 0), (ssize_t)sizeof(img));
	assert_int_equal(at_py_thread_frames(&p, 5, f, 8), -1);
	close(p.mem_fd);
}

/* A str's characters of each kind, as UTF-8, cut at a character boundary. */
static void test_str_utf8(void **state)
{
	static const uint8_t latin1[] = { 'C', 'a', 'f', 0xe9 };
	static const uint16_t ucs2[] = { 0x3a9, 0x20ac, 'x' };
	static const uint32_t ucs4[] = { 0x1f40d, 'a' };
	static const uint32_t bad[] = { 0x110000 };
	static const uint16_t nul_surrogate[] = { 'a', 0, 0xd800 };
	char out[16];

	(void)state;
	assert_int_equal(at_py_str_utf8(1, latin1, 4, out, sizeof(out)), 5);
	assert_string_equal(out, "Caf\xc3\xa9");
	assert_int_equal(at_py_str_utf8(2, (const uint8_t *)ucs2, 3, out, sizeof(out)), 6);
	assert_string_equal(out, "\xce\xa9\xe2\x82\xacx");
	assert_int_equal(at_py_str_utf8(4, (const uint8_t *)ucs4, 2, out, sizeof(out)), 5);
	assert_string_equal(out, "\xf0\x9f\x90\x8d" "a");
	/* 5 bytes of room: "Caf" and a NUL, not half of the e acute */
	assert_int_equal(at_py_str_utf8(1, latin1, 4, out, 5), 3);
	assert_string_equal(out, "Caf");
	assert_int_equal(at_py_str_utf8(4, (const uint8_t *)bad, 1, out, sizeof(out)), -1);
	/* a NUL and a lone surrogate: the replacement character */
	assert_int_equal(at_py_str_utf8(2, (const uint8_t *)nul_surrogate, 3, out, sizeof(out)),
			 7);
	assert_string_equal(out, "a\xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(at_py_str_utf8(3, latin1, 1, out, sizeof(out)), -1);
	assert_int_equal(at_py_str_utf8(1, latin1, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_equal_traceback),
		cmocka_unit_test(test_unknown_versions),
		cmocka_unit_test(test_not_python),
		cmocka_unit_test(test_thread_without_state),
		cmocka_unit_test(test_str_utf8),
		cmocka_unit_test(test_circular_lists),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
