/* test_daemon_pysplice.c: unit tests of daemon/python/pysplice.c.
 *
 * Table-driven cases of the splice (runs in place of the loop's frames, a loop frame with no run
 * left, runs left over, return addresses at the loop's end, a full output) and of the values;
 * then live stacks against gdb, an oracle of its own: tests/fixtures/py_stacks.py stopped
 * under Debian's 3.11 and pyenv's 3.11, 3.12 and 3.13, gdb's backtrace of the stopped thread
 * gives the native frames, and the reader's Python frames are spliced into them. Every frame
 * gdb names _PyEval_EvalFrameDefault, and no other, must lie in the loop the reader found, and
 * each must get exactly one run, none left over. Without gdb or an interpreter: skipped, said
 * in a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "py_fixture.h"

#include "../../daemon/python/pysplice.h"

#define N(a) (sizeof(a) / sizeof(a[0]))
#define EVAL 0x5000
#define PY(i) (0x100000 + 0x100 * (i))

static const struct at_py_eval eval[] = { { EVAL, EVAL + 0x1000 } };

/* The value of Python frame i of the cases below (offset i). */
static uint64_t pyv(int i)
{
	struct at_py_frame f = { PY(i), (uint32_t)i, 0, 0 };

	return at_py_value(&f);
}

/* Table-driven splices. */
static void test_splice(void **state)
{
	/* runs: [0, 1] [2] [3, 4] */
	static const struct at_py_frame py[] = {
		{ PY(0), 0, 0, 0 }, { PY(1), 1, 1, 0 }, { PY(2), 2, 1, 0 }, { PY(3), 3, 0, 0 }, { PY(4), 4, 1, 0 },
	};
	static const struct {
		const char *what;
		uint64_t pcs[8];
		int npcs, npy, max;
		int want[12];    /* a native pc, or -1 - i for Python frame i */
		int count, runs, mismatch, left;
	} cases[] = {
		{ "three loop frames, three runs",
		  { 0x10, 0x20, EVAL + 5, 0x30, EVAL + 9, EVAL + 1, 0x40 }, 7, 5, 12,
		  { 0x10, 0x20, -1, -2, 0x30, -3, -4, -5, 0x40 }, 9, 3, 0, 0 },
		{ "a loop frame without a run: native from there",
		  { 0x10, EVAL + 5, EVAL + 6, 0x40 }, 4, 2, 12,
		  { 0x10, -1, -2, EVAL + 6, 0x40 }, 5, 1, 1, 0 },
		{ "runs left over",
		  { 0x10, EVAL + 5, 0x40 }, 3, 5, 12,
		  { 0x10, -1, -2, 0x40 }, 4, 1, 0, 3 },
		{ "a return address just past the loop is the loop's; the entry pc is not",
		  { EVAL + 0x1000, EVAL + 0x1000, 0x40 }, 3, 2, 12,
		  { EVAL + 0x1000, -1, -2, 0x40 }, 4, 1, 0, 0 },
		{ "a return address at the loop's start is not the loop's",
		  { 0x10, EVAL, 0x40 }, 3, 2, 12,
		  { 0x10, EVAL, 0x40 }, 3, 0, 0, 2 },
		{ "a full output keeps the innermost frames",
		  { 0x10, EVAL + 5, 0x40 }, 3, 2, 2,
		  { 0x10, -1 }, 2, 1, 0, 0 },
		{ "no Python frames", { 0x10, 0x40 }, 2, 0, 12, { 0x10, 0x40 }, 2, 0, 0, 0 },
	};

	(void)state;
	for (size_t c = 0; c < N(cases); c++) {
		uint64_t out[12];
		uint8_t is_python[12];
		struct at_py_spliced s = at_py_splice(cases[c].pcs, cases[c].npcs, eval, N(eval), py,
						      cases[c].npy, out, is_python, cases[c].max);

		print_message("%s\n", cases[c].what);
		assert_int_equal(s.count, cases[c].count);
		assert_int_equal(s.runs, cases[c].runs);
		assert_int_equal(s.mismatch, cases[c].mismatch);
		assert_int_equal(s.left, cases[c].left);
		for (int i = 0; i < s.count; i++) {
			int w = cases[c].want[i];

			assert_int_equal(is_python[i], w < 0);
			assert_int_equal(out[i], w < 0 ? pyv(-1 - w) : (uint64_t)w);
		}
	}
}

/* Values: the code's address and the offset come back; what does not fit is said. */
static void test_values(void **state)
{
	static const struct {
		uint64_t code;
		uint32_t offset, back;
	} cases[] = {
		{ 0x7f0012345678, 0, 0 },
		{ 0x7f0012345678, 0xFFFD, 0xFFFD },
		{ 0x7f0012345678, 0xFFFE, AT_PY_VALUE_UNKNOWN },
		{ 0x7f0012345678, 1u << 20, AT_PY_VALUE_UNKNOWN },
		{ 0x7f0012345678, AT_PY_OFFSET_START, AT_PY_OFFSET_START },
		{ 0xffff7f0012345678, 7, 7 },     /* no address has bits above 48: dropped */
	};

	(void)state;
	for (size_t c = 0; c < N(cases); c++) {
		struct at_py_frame f = { cases[c].code, cases[c].offset, 0, 0 };
		uint64_t v = at_py_value(&f);

		assert_int_equal(at_py_value_code(v), cases[c].code & 0xFFFFFFFFFFFFull);
		assert_int_equal(at_py_value_offset(v), cases[c].back);
	}
}

/* A native frame of gdb's backtrace. */
struct native {
	uint64_t pc;
	char name[128];
};

/* Run by gdb: the stopped thread's physical frames (an inlined function's frame shares its
 * caller's, and is named by the function it was inlined into), one "pc name" line each. */
static const char gdb_script[] =
	"import gdb\n"
	"for t in gdb.selected_inferior().threads():\n"
	"    if t.ptid[1] == TID:\n"
	"        t.switch()\n"
	"f = gdb.newest_frame()\n"
	"while f is not None:\n"
	"    if f.type() != gdb.INLINE_FRAME:\n"
	"        print('frame %x %s' % (f.pc(), f.name()))\n"
	"    f = f.older()\n";

/* gdb's backtrace of thread tid of pid into f: the number of frames, or -1 when gdb cannot be
 * run. */
static int gdb_stack(pid_t pid, pid_t tid, struct native *f, int max)
{
	char script[] = "/tmp/test_daemon_pysplice.XXXXXX.py", cmd[512], line[4096], tids[32];
	int n = 0, fd = mkstemps(script, 3);
	const char *at = strstr(gdb_script, "TID");
	FILE *p;

	assert_true(fd >= 0);
	snprintf(tids, sizeof(tids), "%d", (int)tid);
	assert_true(write(fd, gdb_script, (size_t)(at - gdb_script)) > 0);
	assert_true(write(fd, tids, strlen(tids)) > 0);
	assert_true(write(fd, at + 3, strlen(at + 3)) > 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "gdb -batch -nx -p %d -ex 'set debuginfod enabled off' "
		 "-ex 'source %s' 2>/dev/null", (int)pid, script);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long pc;
		char name[128];

		if (n < max && sscanf(line, "frame %llx %127s", &pc, name) == 2) {
			f[n].pc = pc;
			snprintf(f[n].name, sizeof(f[n].name), "%s", name);
			n++;
		}
	}
	unlink(script);
	return pclose(p) == 0 ? n : -1;
}

/* Splices one stopped thread's frames into gdb's native stack. */
static void splice_live(const char *python, const char *scenario)
{
	char out[] = "/tmp/test_daemon_pysplice.out", why[512];
	struct native nat[128];
	struct at_py_frame py[128];
	struct at_py_proc p;
	struct at_py_eval ev;
	uint64_t pcs[128], spliced[256];
	uint8_t is_python[256];
	pid_t tid, pid = py_fixture_start(python, scenario, out, &tid);
	int n, npy, loops = 0;

	assert_int_equal(at_py_open(&p, pid, why, sizeof(why)), AT_PY_KNOWN);
	npy = at_py_thread_frames(&p, tid, py, 128);
	n = gdb_stack(pid, tid, nat, 128);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(out);
	assert_true(npy > 0);
	assert_true(n > 0);
	ev.start = p.eval_start;
	ev.end = p.eval_end;
	assert_true(ev.start < ev.end);
	for (int i = 0; i < n; i++) {
		uint64_t at = i ? nat[i].pc - 1 : nat[i].pc;
		int named = strcmp(nat[i].name, "_PyEval_EvalFrameDefault") == 0;

		pcs[i] = nat[i].pc;
		loops += named;
		if (named != (at >= ev.start && at < ev.end))
			print_message("frame %d: %s at %#llx, the loop at %#llx-%#llx\n", i,
				      nat[i].name, (unsigned long long)nat[i].pc,
				      (unsigned long long)ev.start, (unsigned long long)ev.end);
		assert_int_equal(named, at >= ev.start && at < ev.end);
	}
	struct at_py_spliced s = at_py_splice(pcs, n, &ev, 1, py, npy, spliced, is_python, 256);

	print_message("%s %s: %d native frames, %d loop frames, %d Python frames\n", python,
		      scenario, n, loops, npy);
	assert_true(loops > 0);
	assert_int_equal(s.runs, loops);
	assert_int_equal(s.mismatch, 0);
	assert_int_equal(s.left, 0);
	assert_int_equal(s.count, n - loops + npy);
	at_py_close(&p);
}

/* One interpreter, two scenarios with runs of several sizes. */
static void splice_of(const char *python)
{
	splice_live(python, "coroutine");
	splice_live(python, "callback");
}

/* gdb is the oracle: without it the test fails, saying so (make deps installs it). */
static void test_splice_live(void **state)
{
	(void)state;
	if (system("gdb --version >/dev/null 2>&1") != 0)
		fail_msg("gdb, the oracle, is not installed (make deps installs it)");
	assert_true(py_each_interpreter(splice_of) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splice),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_splice_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
