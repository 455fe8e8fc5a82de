/* test_daemon_pytrace.c: unit tests of daemon/python/pytrace.c, live.
 *
 * tests/fixtures/py_stacks.py stopped under Debian's 3.11 and pyenv's 3.11, 3.12 and 3.13: the
 * scan finds its interpreter once; a stack as the BPF program takes it (native frames, then the
 * thread's Python frames as the daemon's reader walks them, each run's first marked) is spliced
 * into one stack, each run in place of its loop frame, the native frames keeping their mapping
 * serials; its frames are named once per file, as the traceback module names them, from the
 * names taken when the stack was announced; a stack whose Python frames filled it ends at the
 * first loop frame left without its run, and one whose runs do not match its loop frames is
 * incomplete. */
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

#include "../../bpf/alloctap.h"
#include "../../daemon/python/pysplice.h"
#include "../../daemon/python/pytrace.h"

/* One frame as the fixture's traceback gives it. */
struct want {
	char qualname[1024], file[1024];
	int line;
};

/* The NAMES records put, copied. */
struct names_seen {
	int n;
	uint64_t value[64];
	char function[64][1024], file[64][1024];
	uint32_t line[64];
};

static void put_name(void *arg, const struct at_frame_name *n)
{
	struct names_seen *s = arg;

	assert_true(s->n < 64);
	assert_int_equal(n->kind, AT_FRAME_PYTHON);
	s->value[s->n] = n->value;
	snprintf(s->function[s->n], sizeof(s->function[0]), "%s", n->function);
	snprintf(s->file[s->n], sizeof(s->file[0]), "%s", n->file);
	s->line[s->n++] = n->line;
}

/* The fixture under python stopped in scenario: its pid, thread, frames (traceback's) in w. */
static pid_t start_fixture(const char *python, const char *scenario, pid_t *tid,
			   struct want *w, int *nw)
{
	char out[] = "/tmp/test_daemon_pytrace.out", line[4096], name[256];
	pid_t pid = py_fixture_start(python, scenario, out, tid);
	FILE *f = fopen(out, "r");

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f)); /* "tid N" */
	*nw = 0;
	while (*nw < 32 && fgets(line, sizeof(line), f)) {
		struct want *x = &w[*nw];

		assert_int_equal(sscanf(line, "%255[^\t]\t%1023[^\t]\t%1023[^\t]\t%d", name,
					x->qualname, x->file, &x->line), 4);
		(*nw)++;
	}
	fclose(f);
	unlink(out);
	return pid;
}

/* A stack as the BPF program stores it. */
struct raw {
	uint32_t count;
	uint64_t pcs[AT_BPF_STACK_FRAMES];
	uint8_t kinds[AT_BPF_STACK_FRAMES];
	uint32_t serials[AT_BPF_STACK_FRAMES];
};

/* A stack as the BPF program takes it: malloc's entry, then per run an extension's frame and
 * the loop's (a return address into it), then extra native frames, then the outermost frame;
 * then the Python frames f (n of them). Returns the native frames' count; *runs the runs. */
static uint32_t raw_stack(struct raw *st, const struct at_py_proc *p,
			  const struct at_py_frame *f, int n, int extra, int *runs)
{
	uint8_t *kinds = st->kinds;
	uint32_t *serials = st->serials;
	uint32_t c = 0;

	*runs = 0;
	for (int i = 0; i < n; i++)
		*runs += f[i].entry != 0;
	st->pcs[c] = 0x1000;
	serials[c++] = 7;
	for (int r = 0; r < *runs; r++) {
		st->pcs[c] = 0x3000 + (uint64_t)r;
		serials[c++] = 8;
		st->pcs[c] = p->eval_start + 1; /* a return address: its pc less one is the loop's */
		serials[c++] = 9;
	}
	for (int e = 0; e < extra; e++) {
		st->pcs[c] = 0x5000 + (uint64_t)e;
		serials[c++] = 11;
	}
	st->pcs[c] = 0x4000;
	serials[c++] = 10;
	uint32_t natives = c;
	memset(kinds, AT_FRAME_NATIVE, natives);
	for (int i = 0; i < n; i++, c++) {
		st->pcs[c] = at_py_value(&f[i]);
		kinds[c] = f[i].entry ? AT_BPF_FRAME_PYTHON_ENTRY : AT_FRAME_PYTHON;
		serials[c] = 0x5eed; /* the frame's globals, folded */
	}
	st->count = c;
	return natives;
}

/* Splices raw into st, of process pid, with flags. */
static void splice(struct at_pytrace *t, const struct raw *raw, pid_t pid, uint16_t flags,
		   struct at_stack *st, uint32_t *serials)
{
	st->pid = (uint32_t)pid;
	st->flags = flags;
	at_pytrace_splice(t, raw->pcs, raw->kinds, raw->serials, raw->count, st, serials);
}

/* Splices and names the stopped thread's stack in scenario; checks both against traceback's
 * frames. */
static void splice_scenario(const char *python, const char *scenario)
{
	struct want w[32];
	struct at_py_frame f[32];
	struct at_py_proc p;
	struct at_pytrace t;
	struct at_bpf_py_proc bp;
	static struct at_stack st;
	static struct raw raw;
	static struct names_seen seen;
	uint32_t serials[AT_STACK_MAX_FRAMES];
	char why[512];
	pid_t tid, pid;
	int nw, n, runs;

	pid = start_fixture(python, scenario, &tid, w, &nw);
	assert_int_equal(at_py_open(&p, pid, why, sizeof(why)), AT_PY_KNOWN);
	assert_true(p.eval_end > p.eval_start);
	n = at_py_thread_frames(&p, tid, f, 32);
	assert_int_equal(n, nw);
	at_pytrace_init(&t);
	assert_int_equal(at_pytrace_scan(&t, pid, &bp), 1);
	assert_int_equal(bp.runtime, p.runtime);
	assert_memory_equal(&bp.off, &p.off, sizeof(bp.off));
	assert_int_equal(at_pytrace_scan(&t, pid, &bp), 0); /* decided */

	uint32_t natives = raw_stack(&raw, &p, f, n, 0, &runs);
	assert_true(runs >= 1);
	assert_int_equal(at_pytrace_has_python(raw.kinds, raw.count), 1);
	assert_int_equal(at_pytrace_has_python(raw.kinds, natives), 0);
	at_pytrace_capture(&t, pid, 0xabc, raw.pcs, raw.kinds, raw.serials, raw.count);
	at_pytrace_bind(&t, 0xabc, 1);
	splice(&t, &raw, pid, 0, &st, serials);
	assert_int_equal(st.count, natives - (uint32_t)runs + (uint32_t)n);
	assert_int_equal(st.flags, AT_STACK_KINDS);
	/* malloc; per run the extension's frame, then the run's Python frames; the outermost */
	uint32_t k = 0;
	int j = 0;
	assert_int_equal(st.pcs[k], 0x1000);
	assert_int_equal(serials[k++], 7);
	for (int r = 0; r < runs; r++) {
		assert_int_equal(st.pcs[k], 0x3000 + (uint64_t)r);
		assert_int_equal(st.kinds[k], AT_FRAME_NATIVE);
		assert_int_equal(serials[k++], 8);
		for (int entry = 0; !entry; j++, k++) {
			entry = f[j].entry;
			assert_int_equal(st.pcs[k], at_py_value(&f[j]));
			assert_int_equal(st.kinds[k], AT_FRAME_PYTHON);
			assert_int_equal(serials[k], 0);
		}
	}
	assert_int_equal(j, n);
	assert_int_equal(st.pcs[k], 0x4000);
	assert_int_equal(serials[k], 10);

	/* named once per file, in the stack's order, as traceback names them */
	memset(&seen, 0, sizeof(seen));
	at_pytrace_names(&t, &st, 1, put_name, &seen);
	int distinct = 0;
	for (int i = 0; i < n; i++) {
		int dup = 0;
		for (int m = 0; m < i; m++)
			dup |= at_py_value(&f[m]) == at_py_value(&f[i]);
		if (dup)
			continue;
		assert_int_equal(seen.value[distinct], at_py_value(&f[i]));
		assert_string_equal(seen.function[distinct], w[i].qualname);
		assert_string_equal(seen.file[distinct], w[i].file);
		assert_int_equal(seen.line[distinct], w[i].line);
		distinct++;
	}
	assert_int_equal(seen.n, distinct);
	seen.n = 0;
	at_pytrace_names(&t, &st, 1, put_name, &seen);
	assert_int_equal(seen.n, 0);
	at_pytrace_new_file(&t);
	at_pytrace_names(&t, &st, 1, put_name, &seen);
	assert_int_equal(seen.n, distinct);

	/* 128 native frames and the Python frames after them: more than a stack holds once
	 * spliced, cut at 128, truncated */
	natives = raw_stack(&raw, &p, f, n, 126 - 2 * runs, &runs);
	assert_int_equal(natives, AT_STACK_MAX_FRAMES);
	splice(&t, &raw, pid, 0, &st, serials);
	assert_true(natives - (uint32_t)runs + (uint32_t)n > AT_STACK_MAX_FRAMES);
	assert_int_equal(st.count, AT_STACK_MAX_FRAMES);
	assert_int_equal(st.flags, AT_STACK_TRUNCATED | AT_STACK_KINDS);
	assert_int_equal(st.pcs[AT_STACK_MAX_FRAMES - 1], 0x5000 + (uint64_t)(126 - runs - n));
	assert_int_equal(serials[AT_STACK_MAX_FRAMES - 1], 11);

	/* the Python frames filled the stack (the outermost run's lost): it ends at its loop
	 * frame, truncated, not incomplete */
	int kept = 0; /* the Python frames before the outermost run */
	for (int i = 0; i < n - 1; i++)
		if (f[i].entry)
			kept = i + 1;
	if (kept > 0) {
		raw_stack(&raw, &p, f, n, 0, &runs);
		raw.count -= (uint32_t)(n - kept);
		splice(&t, &raw, pid, AT_STACK_TRUNCATED, &st, serials);
		assert_int_equal(st.flags, AT_STACK_TRUNCATED | AT_STACK_KINDS);
		/* malloc, each run kept after its extension's frame, the last extension's */
		assert_int_equal(st.count, (uint32_t)runs + (uint32_t)kept + 1);
		assert_int_equal(st.pcs[st.count - 1], 0x3000 + (uint64_t)(runs - 1));
		assert_int_equal(serials[st.count - 1], 8);

		/* the same not truncated: the loop frame and the outermost stay, incomplete */
		splice(&t, &raw, pid, 0, &st, serials);
		assert_int_equal(st.flags, AT_STACK_INCOMPLETE | AT_STACK_KINDS);
		assert_int_equal(st.count, (uint32_t)runs + (uint32_t)kept + 3);
		assert_int_equal(st.pcs[st.count - 1], 0x4000);
		assert_int_equal(st.pcs[st.count - 2], p.eval_start + 1);
		assert_int_equal(serials[st.count - 2], 9);
	} else {
		assert_string_equal(scenario, "plain"); /* one run: a Python call stays in it */
	}

	/* after an exec or its end, nothing is known of the process */
	at_pytrace_forget(&t, pid);
	seen.n = 0;
	at_pytrace_new_file(&t);
	raw_stack(&raw, &p, f, n, 0, &runs);
	splice(&t, &raw, pid, 0, &st, serials);
	at_pytrace_names(&t, &st, 1, put_name, &seen);
	assert_int_equal(seen.n, 0);
	at_pytrace_free(&t);
	at_py_close(&p);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* One interpreter: one run (Python calls only), and a C function calling back into Python
 * (two runs). */
static void splice_live(const char *python)
{
	splice_scenario(python, "plain");
	splice_scenario(python, "callback");
}

static void test_splice_live(void **state)
{
	(void)state;
	assert_true(py_each_interpreter(splice_live) >= 1);
}

/* A process that runs no Python: its scan finds nothing, now or later. */
static void test_not_python(void **state)
{
	struct at_pytrace t;
	struct at_bpf_py_proc bp;

	(void)state;
	at_pytrace_init(&t);
	assert_int_equal(at_pytrace_scan(&t, getpid(), &bp), 0);
	assert_int_equal(at_pytrace_scan(&t, getpid(), &bp), 0);
	assert_int_equal(t.count, 0);
	assert_int_equal(t.processes, 0);
	at_pytrace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_splice_live),
		cmocka_unit_test(test_not_python),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
