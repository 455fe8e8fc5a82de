/* test_daemon_pywalk.c: the walk of Python frames (bpf/py_walk.h) in BPF.
 *
 * bpf/pywalk.bpf.c is the walk in a uprobe of its own. Loading it runs the verifier over the
 * walk; attached to the C library's malloc in tests/fixtures/py_stacks.py's spin scenario (a
 * Python callback of sorted() allocating 1000-byte bytearrays forever on one line: past
 * pymalloc's sizes, so malloc's) under Debian's 3.11 and pyenv's 3.11,
 * 3.12 and 3.13, its frames of the spinning thread must be the daemon's reader's (the same
 * walk over /proc/PID/mem, whose frames test_daemon_pyframes checks against the traceback
 * module): the same code objects, the same runs, the same offsets outside the innermost frame,
 * and the innermost at the allocating line. Needs root (CAP_BPF, CAP_PERFMON); an interpreter
 * not installed is skipped, said in a message. */
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
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../daemon/python/pyframes.h"
#include "../../daemon/probes/elfsym.h"
#include "py_fixture.h"
#include "pywalk.skel.h"

#define N(a) (sizeof(a) / sizeof(a[0]))

static char script[PATH_MAX];
static pid_t child;    /* the fixture running, killed by the teardown if a check fails */

/* The line of the fixture that holds BUSY_LINE. */
static int busy_line(void)
{
	FILE *f = fopen(script, "r");
	char line[512];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, "# BUSY_LINE")) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no BUSY_LINE in %s", script);
	return 0;
}

/* Starts the fixture's spin scenario under python: its pid, the spinning thread in *tid. */
static pid_t start_spin(const char *python, pid_t *tid)
{
	const char out[] = "/tmp/test_daemon_pywalk.out";
	pid_t pid = py_fixture_start(python, "spin", out, tid);

	unlink(out);
	return pid;
}

/* The path, as the process maps it, of the file named base: 0, or -1. */
static int mapped_path(pid_t pid, const char *base, char *path, size_t len)
{
	char maps[64], line[4096];
	FILE *f;
	int rc = -1;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	assert_non_null(f);
	while (rc != 0 && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *slash;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		slash = strrchr(p, '/');
		if (strcmp(slash + 1, base) == 0) {
			snprintf(path, len, "%s", p);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* The file offset of malloc in path. */
static uint64_t malloc_offset(const char *path)
{
	struct at_elf e;
	const char *why;
	uint64_t vaddr, off;

	assert_int_equal(at_elf_open(&e, path, &why), 0);
	assert_int_equal(at_elf_find_function(&e, "malloc", &vaddr), 1);
	assert_int_equal(at_elf_vaddr_to_offset(&e, vaddr, &off), 0);
	at_elf_close(&e);
	return off;
}

/* Waits up to 10 s for the walk to have run. */
static void wait_done(struct pywalk *skel, struct at_py_walk_result *r)
{
	__u32 zero = 0;

	for (int i = 0; i < 1000; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.py_result), &zero, r),
				 0);
		if (r->done)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("the probe never ran");
}

/* The BPF walk of one interpreter's spinning thread against the reader's. */
static void walk_one(const char *python)
{
	static struct at_py_walk_result r;
	struct at_py_frame f[AT_PY_WALK_MAX];
	struct at_py_proc p;
	struct pywalk *skel;
	struct bpf_link *link;
	char why[512], path[4096];
	__u32 zero = 0;
	pid_t tid, pid = start_spin(python, &tid);
	int n;

	child = pid;
	assert_int_equal(at_py_open(&p, pid, why, sizeof(why)), AT_PY_KNOWN);
	assert_int_equal(mapped_path(pid, "libc.so.6", path, sizeof(path)), 0);
	skel = pywalk__open();
	assert_non_null(skel);
	skel->rodata->py_runtime = p.runtime;
	skel->rodata->target_tid = (__u32)tid;
	assert_int_equal(pywalk__load(skel), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.py_offsets), &zero, &p.off, 0),
			 0);
	link = bpf_program__attach_uprobe(skel->progs.py_walk_probe, false, pid, path,
					  malloc_offset(path));
	assert_non_null(link);
	wait_done(skel, &r);
	bpf_link__destroy(link);
	n = at_py_thread_frames(&p, tid, f, AT_PY_WALK_MAX);
	print_message("%s: %u frames in BPF, %d read\n", python, r.count, n);
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.found, 1);
	assert_int_equal(r.count, n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(r.frames[i].code, f[i].code);
		assert_int_equal(r.frames[i].entry, f[i].entry);
		if (i > 0)
			assert_int_equal(r.frames[i].offset, f[i].offset);
	}
	{
		struct at_py_code c;

		assert_int_equal(at_py_code_read(&p, r.frames[0].code, &c), 0);
		assert_string_equal(c.qualname, "busy");
		assert_int_equal(at_py_code_line(&c, r.frames[0].offset), busy_line());
		free(c.linetable);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	child = 0;
	pywalk__destroy(skel);
	at_py_close(&p);
}

/* Each interpreter. */
static void test_bpf_walk_equals_reader(void **state)
{
	(void)state;
	assert_true(py_each_interpreter(walk_one) > 0);
}

static int setup(void **state)
{
	(void)state;
	return realpath("tests/fixtures/py_stacks.py", script) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_bpf_walk_equals_reader, teardown),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
