/* test_daemon_pynames.c: unit tests of daemon/python/pynames.c.
 *
 * Live: tests/fixtures/py_stacks.py stopped under Debian's 3.11 and pyenv's 3.11, 3.12 and
 * 3.13; every Python frame of the stopped thread is named as the traceback module names it
 * (qualified name, file, line), each code object read once however often its values are
 * named. Then a memory image laid out as 3.12's, in an in-memory file read in place of
 * /proc/PID/mem: a code object replaced by another at the same address is read anew, one that
 * cannot be read is an error, and the cache survives both; one named for a module's frame is
 * named for that module's frames from the cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "py_fixture.h"

#include "../../daemon/python/pynames.h"
#include "../../daemon/python/pysplice.h"


/* One frame as the fixture's traceback gives it. */
struct want {
	char name[256], qualname[1024], file[1024];
	int line;
};

/* Starts scenario under python, waits for its stop and reads its frames; returns the pid. */
static pid_t start_fixture(const char *python, const char *scenario, pid_t *tid,
			   struct want *w, int *nw)
{
	char out[] = "/tmp/test_daemon_pynames.out", line[4096];
	pid_t pid = py_fixture_start(python, scenario, out, tid);
	FILE *f = fopen(out, "r");

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f)); /* "tid N" */
	*nw = 0;
	while (*nw < 64 && fgets(line, sizeof(line), f)) {
		struct want *x = &w[*nw];

		assert_int_equal(sscanf(line, "%255[^\t]\t%1023[^\t]\t%1023[^\t]\t%d", x->name,
					x->qualname, x->file, &x->line), 4);
		(*nw)++;
	}
	fclose(f);
	unlink(out);
	return pid;
}

/* Names every frame of one stopped thread, twice. */
static void names_live(const char *python, const char *scenario)
{
	struct want w[64];
	struct at_py_frame f[64];
	struct at_py_proc p;
	struct at_py_names *names = at_py_names_new();
	char why[512];
	pid_t tid, pid;
	int nw, n, distinct = 0;

	assert_non_null(names);
	pid = start_fixture(python, scenario, &tid, w, &nw);
	assert_int_equal(at_py_open(&p, pid, why, sizeof(why)), AT_PY_KNOWN);
	n = at_py_thread_frames(&p, tid, f, 64);
	assert_int_equal(n, nw);
	for (int i = 0; i < n; i++) {
		int seen = 0;

		for (int k = 0; k < i; k++)
			seen |= f[k].code == f[i].code;
		distinct += !seen;
	}
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < n; i++) {
			struct at_py_name nm;
			struct at_py_frame one = f[i];

			assert_int_equal(at_py_names_get(names, &p, at_py_value(&one), 0, &nm), 0);
			assert_string_equal(nm.function, w[i].qualname);
			assert_string_equal(nm.file, w[i].file);
			assert_int_equal(nm.line, w[i].line);
		}
	assert_int_equal(at_py_names_reads(names), distinct);
	at_py_names_free(names);
	at_py_close(&p);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* One interpreter: a recursion (one code object, several frames) and asyncio's frames. */
static void names_of(const char *python)
{
	names_live(python, "plain");
	names_live(python, "coroutine");
}

static void test_names_live(void **state)
{
	(void)state;
	assert_true(py_each_interpreter(names_of) > 0);
}

/* ---- a memory image laid out as 3.12's ---------------------------------------------------- */

#define CODE 0x1000
#define STRS 0x2000

/* Writes an ASCII str at addr of the image. */
static void put_str(uint8_t *img, const struct at_py_offsets *o, uint64_t addr, const char *s)
{
	int64_t len = (int64_t)strlen(s);
	uint32_t state = 1u << 2 | 1u << 5 | 1u << 6;

	memcpy(img + addr + o->unicode_length, &len, sizeof(len));
	memcpy(img + addr + o->unicode_state, &state, sizeof(state));
	memcpy(img + addr + o->unicode_ascii_size, s, strlen(s));
}

/* Points code object CODE's names at the strs of slot k (name, file), first line 10, and a
 * location table of one entry (8 units, line + 1). */
static void put_code(uint8_t *img, const struct at_py_offsets *o, int k, const char *name,
		     const char *file)
{
	uint64_t s = STRS + 0x400 * (uint64_t)k, table = s + 0x200;
	int64_t size = 3;
	int32_t first = 10;

	put_str(img, o, s, name);
	put_str(img, o, s + 0x100, file);
	memcpy(img + table + o->bytes_size, &size, sizeof(size));
	memcpy(img + table + o->bytes_sval, "\xdf\x00\x00", 3);
	memcpy(img + CODE + o->code_name, &s, 8);
	memcpy(img + CODE + o->code_qualname, &s, 8);
	memcpy(img + CODE + o->code_filename, &(uint64_t){ s + 0x100 }, 8);
	memcpy(img + CODE + o->code_linetable, &table, 8);
	memcpy(img + CODE + o->code_firstlineno, &first, sizeof(first));
}

/* Writes the image into the process's stand-in file. */
static void sync_image(int fd, const uint8_t *img, size_t len)
{
	assert_int_equal(pwrite(fd, img, len, 0), (ssize_t)len);
}

/* A code object replaced at its address is read anew; an unreadable one is an error. */
static void test_code_replaced(void **state)
{
	static uint8_t img[0x4000];
	struct at_py_proc p = { .pid = 1, .mem_fd = memfd_create("pynames", MFD_CLOEXEC) };
	struct at_py_names *names = at_py_names_new();
	struct at_py_frame f = { CODE, 3, 0, 0 };
	struct at_py_name nm;

	(void)state;
	assert_true(p.mem_fd >= 0);
	assert_non_null(names);
	p.off = *at_py_offsets_table(0x030c01f0);
	put_code(img, &p.off, 0, "serve", "app.py");
	sync_image(p.mem_fd, img, sizeof(img));
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0, &nm), 0);
	assert_string_equal(nm.function, "serve");
	assert_string_equal(nm.file, "app.py");
	assert_int_equal(nm.line, 11);
	f.offset = 8;    /* past the table's one entry: no line */
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0, &nm), 0);
	assert_int_equal(nm.line, 0);
	f.offset = AT_PY_OFFSET_START;
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0, &nm), 0);
	assert_int_equal(nm.line, 10);
	assert_int_equal(at_py_names_reads(names), 1);

	put_code(img, &p.off, 1, "handle", "web.py");
	sync_image(p.mem_fd, img, sizeof(img));
	f.offset = 0;
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0, &nm), 0);
	assert_string_equal(nm.function, "handle");
	assert_string_equal(nm.file, "web.py");
	assert_int_equal(at_py_names_reads(names), 2);

	/* a name that is no str (its state says not compact): an error, the cache intact */
	memcpy(img + CODE + p.off.code_name, &(uint64_t){ CODE }, 8);
	sync_image(p.mem_fd, img, sizeof(img));
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0, &nm), -1);
	/* past the end of the process's memory */
	f.code = 0x100000;
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0, &nm), -1);
	at_py_names_free(names);
	close(p.mem_fd);
}

/* A code object named for a frame of one module is named again for that module's frames
 * without reading the process, even once freed and its memory reused (a module's code at the
 * end of its import); a frame of another module, or of one not known, reads it anew. */
static void test_same_module(void **state)
{
	static uint8_t img[0x4000];
	struct at_py_proc p = { .pid = 1, .mem_fd = memfd_create("pynames", MFD_CLOEXEC) };
	struct at_py_names *names = at_py_names_new();
	struct at_py_frame f = { CODE, 0, 0, 0 };
	struct at_py_name nm;

	(void)state;
	assert_true(p.mem_fd >= 0);
	assert_non_null(names);
	p.off = *at_py_offsets_table(0x030c01f0);
	put_code(img, &p.off, 0, "<module>", "app.py");
	sync_image(p.mem_fd, img, sizeof(img));
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0x1235, &nm), 0);
	assert_string_equal(nm.function, "<module>");
	assert_int_equal(nm.line, 11);

	/* freed: its name is no str now; the same module's next line is named all the same */
	memcpy(img + CODE + p.off.code_name, &(uint64_t){ CODE }, 8);
	sync_image(p.mem_fd, img, sizeof(img));
	f.offset = AT_PY_OFFSET_START;
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0x1235, &nm), 0);
	assert_string_equal(nm.function, "<module>");
	assert_string_equal(nm.file, "app.py");
	assert_int_equal(nm.line, 10);
	/* for a frame of another module, or of none known, it is read: it cannot be */
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0x4561, &nm), -1);
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0, &nm), -1);

	/* another code object at its address, of another module: read anew */
	put_code(img, &p.off, 1, "handle", "web.py");
	sync_image(p.mem_fd, img, sizeof(img));
	assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0x4561, &nm), 0);
	assert_string_equal(nm.function, "handle");
	assert_string_equal(nm.file, "web.py");
	assert_int_equal(at_py_names_reads(names), 2);
	at_py_names_free(names);
	close(p.mem_fd);
}

/* Many code objects: the table grows and every one keeps its name. */
static void test_many_codes(void **state)
{
	enum { COUNT = 300, STRIDE = 0x100 };
	static uint8_t img[0x100 * 300 + 0x1000];
	struct at_py_proc p = { .pid = 1, .mem_fd = memfd_create("pynames", MFD_CLOEXEC) };
	struct at_py_names *names = at_py_names_new();
	uint64_t str = sizeof(img) - 0x800, table = sizeof(img) - 0x400;
	int64_t size = 0;

	(void)state;
	assert_true(p.mem_fd >= 0);
	p.off = *at_py_offsets_table(0x030b07f0);
	put_str(img, &p.off, str, "f");
	memcpy(img + table + p.off.bytes_size, &size, sizeof(size));
	for (int i = 0; i < COUNT; i++) {
		uint64_t c = 0x100 + (uint64_t)i * STRIDE;
		int32_t first = i + 1;

		memcpy(img + c + p.off.code_name, &str, 8);
		memcpy(img + c + p.off.code_qualname, &str, 8);
		memcpy(img + c + p.off.code_filename, &str, 8);
		memcpy(img + c + p.off.code_linetable, &table, 8);
		memcpy(img + c + p.off.code_firstlineno, &first, sizeof(first));
	}
	sync_image(p.mem_fd, img, sizeof(img));
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < COUNT; i++) {
			struct at_py_frame f = { 0x100 + (uint64_t)i * STRIDE, AT_PY_OFFSET_START,
						 0, 0 };
			struct at_py_name nm;

			assert_int_equal(at_py_names_get(names, &p, at_py_value(&f), 0, &nm), 0);
			assert_int_equal(nm.line, i + 1);
		}
	assert_int_equal(at_py_names_reads(names), COUNT);
	at_py_names_free(names);
	close(p.mem_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_live),
		cmocka_unit_test(test_code_replaced),
		cmocka_unit_test(test_same_module),
		cmocka_unit_test(test_many_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
