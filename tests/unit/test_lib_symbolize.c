/* test_lib_symbolize.c: unit tests of lib/symbolize.c against a shared object compiled here
 * with -g (a function inlined into another, a function that ends with a call, a static
 * function), loaded with dlopen so that its addresses and mappings are real: names from
 * .symtab, .dynsym or a debug file found by build-id, lines and inlined frames, the pc - 1 rule
 * for return addresses, changed and missing objects reported once and never named; each
 * object's unnamed frames counted; debug files fetched by build-id from a debuginfod (python3's
 * http.server on the loopback serving files as a debuginfod does: found, none, another
 * build-id's, and no server at all). */
#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "procmaps.h"
#include "symbolize.h"

/* The object's source: the line numbers below are checked. */
static const char fixture_source[] =
	"#include <setjmp.h>\n"                                           /* 1 */
	"void *volatile at_fix_ret;\n"                                    /* 2 */
	"jmp_buf at_fix_jb;\n"                                            /* 3 */
	"__attribute__((noinline)) void at_fix_record(void)\n"            /* 4 */
	"{\n"                                                             /* 5 */
	"\tat_fix_ret = __builtin_return_address(0);\n"                   /* 6 */
	"}\n"                                                             /* 7 */
	"static inline __attribute__((always_inline)) void at_fix_inner(void)\n" /* 8 */
	"{\n"                                                             /* 9 */
	"\tat_fix_record();\n"                                            /* 10 */
	"\t__asm__ volatile(\"\");\n"                                     /* 11 */
	"}\n"                                                             /* 12 */
	"__attribute__((noinline)) void at_fix_outer(void)\n"             /* 13 */
	"{\n"                                                             /* 14 */
	"\tat_fix_inner();\n"                                             /* 15 */
	"\t__asm__ volatile(\"\");\n"                                     /* 16 */
	"}\n"                                                             /* 17 */
	"__attribute__((noinline, noreturn)) void at_fix_stop(void)\n"    /* 18 */
	"{\n"                                                             /* 19 */
	"\tat_fix_ret = __builtin_return_address(0);\n"                   /* 20 */
	"\tlongjmp(at_fix_jb, 1);\n"                                      /* 21 */
	"}\n"                                                             /* 22 */
	"__attribute__((noinline)) void at_fix_ends_with_call(void)\n"    /* 23 */
	"{\n"                                                             /* 24 */
	"\tat_fix_stop();\n"                                              /* 25 */
	"}\n"                                                             /* 26 */
	"__attribute__((noinline)) void at_fix_after(void)\n"             /* 27 */
	"{\n"                                                             /* 28 */
	"\tat_fix_ret = 0;\n"                                             /* 29 */
	"}\n"                                                             /* 30 */
	"static __attribute__((noinline)) int at_fix_hidden(int x)\n"     /* 31 */
	"{\n"                                                             /* 32 */
	"\treturn x * 3 + 1;\n"                                           /* 33 */
	"}\n"                                                             /* 34 */
	"int (*at_fix_hidden_ptr)(int) = at_fix_hidden;\n"                /* 35 */
	"__attribute__((noinline)) int at_fix_mangled(int x) __asm__(\"_ZN2at7mangledEi\");\n"
	"int at_fix_mangled(int x)\n"                                    /* 37 */
	"{\n"                                                             /* 38 */
	"\treturn x + 7;\n"                                               /* 39 */
	"}\n";                                                            /* 40 */

/* Everything the tests share, made once by setup(). */
static struct {
	char dir[64];          /* scratch folder */
	char lib[128];         /* DIR/libfix.so: with .symtab and DWARF */
	char stripped[128];    /* DIR/stripped/libfix.so: .dynsym only */
	char debug_dir[128];   /* DIR/debug: .build-id/ab/cdef....debug of libfix.so */
	uint8_t build_id[AT_BUILD_ID_MAX];
	int build_id_len;
	struct at_mapping maps[8]; /* executable mappings of libfix.so in this process */
	int nmaps;
	void *handle;
	/* addresses in this process */
	uint64_t outer, inner_call_ret, ends_call_ret, after, hidden;
	uint64_t mangled;      /* a C++ symbol name: _ZN2at7mangledEi */
} fx;

/* Runs a shell command; 0 when it exits 0. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0 ? 0 : -1;
}

static int read_build_id(const char *path, uint8_t *out)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	const void *id;
	ssize_t n;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	if (n > 0 && n <= AT_BUILD_ID_MAX)
		memcpy(out, id, (size_t)n);
	if (elf)
		elf_end(elf);
	close(fd);
	return n > 0 && n <= AT_BUILD_ID_MAX ? (int)n : -1;
}

static int collect_mapping(const struct at_procmaps_entry *e, void *arg)
{
	(void)arg;
	if (strcmp(e->path, fx.lib) == 0 && e->perms[2] == 'x' && fx.nmaps < 8)
		fx.maps[fx.nmaps++] = (struct at_mapping){
			.pid = 7, .build_id_len = (uint8_t)fx.build_id_len,
			.start = e->start, .end = e->end, .offset = e->offset, .path = fx.lib,
		};
	return 0;
}

static int setup(void **state)
{
	char src[128], id[2 * AT_BUILD_ID_MAX + 1];
	FILE *f;

	(void)state;
	strcpy(fx.dir, "/tmp/at-symbolize.XXXXXX");
	if (!mkdtemp(fx.dir))
		return -1;
	snprintf(src, sizeof(src), "%s/fix.c", fx.dir);
	snprintf(fx.lib, sizeof(fx.lib), "%s/libfix.so", fx.dir);
	snprintf(fx.stripped, sizeof(fx.stripped), "%s/stripped/libfix.so", fx.dir);
	snprintf(fx.debug_dir, sizeof(fx.debug_dir), "%s/debug", fx.dir);
	f = fopen(src, "w");
	if (!f || fputs(fixture_source, f) < 0 || fclose(f) != 0)
		return -1;
	/* no sibling calls, functions in source order and packed: at_fix_ends_with_call's
	 * return address is at_fix_after's first byte */
	if (run("cc -O2 -g -fPIC -shared -fno-optimize-sibling-calls -fno-toplevel-reorder "
		"-falign-functions=1 -Wl,--build-id=sha1 -o %s %s",
		fx.lib, src) < 0)
		return -1;
	fx.build_id_len = read_build_id(fx.lib, fx.build_id);
	if (fx.build_id_len < 2)
		return -1;
	for (int i = 0; i < fx.build_id_len; i++)
		sprintf(id + 2 * i, "%02x", fx.build_id[i]);
	if (run("mkdir -p %s/stripped %s/.build-id/%.2s && strip --strip-all -o %s %s && "
		"objcopy --only-keep-debug %s %s/.build-id/%.2s/%s.debug",
		fx.dir, fx.debug_dir, id, fx.stripped, fx.lib, fx.lib, fx.debug_dir, id,
		id + 2) < 0)
		return -1;

	fx.handle = dlopen(fx.lib, RTLD_NOW);
	if (!fx.handle)
		return -1;
	if (at_procmaps_for_each_file("/proc/self/maps", collect_mapping, NULL, NULL) != 0 ||
	    fx.nmaps == 0)
		return -1;
	for (int i = 0; i < fx.nmaps; i++)
		memcpy(fx.maps[i].build_id, fx.build_id, (size_t)fx.build_id_len);

	void (*outer)(void) = (void (*)(void))dlsym(fx.handle, "at_fix_outer");
	void (*ends)(void) = (void (*)(void))dlsym(fx.handle, "at_fix_ends_with_call");
	void *volatile *ret = dlsym(fx.handle, "at_fix_ret");
	jmp_buf *jb = dlsym(fx.handle, "at_fix_jb");
	int (**hidden)(int) = dlsym(fx.handle, "at_fix_hidden_ptr");
	if (!outer || !ends || !ret || !jb || !hidden)
		return -1;
	fx.outer = (uint64_t)(uintptr_t)outer;
	fx.after = (uint64_t)(uintptr_t)dlsym(fx.handle, "at_fix_after");
	fx.hidden = (uint64_t)(uintptr_t)*hidden;
	fx.mangled = (uint64_t)(uintptr_t)dlsym(fx.handle, "_ZN2at7mangledEi");
	if (!fx.mangled)
		return -1;
	outer();
	fx.inner_call_ret = (uint64_t)(uintptr_t)*ret;
	if (setjmp(*jb) == 0)
		ends();
	fx.ends_call_ret = (uint64_t)(uintptr_t)*ret;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (fx.handle)
		dlclose(fx.handle);
	if (fx.dir[0])
		run("rm -rf %s", fx.dir);
	return 0;
}

/* Problems reported, for the changed and missing objects. */
struct problems {
	int count;
	char path[256], why[256];
};

static void on_problem(void *arg, const char *path, const char *why)
{
	struct problems *p = arg;

	p->count++;
	snprintf(p->path, sizeof(p->path), "%s", path);
	snprintf(p->why, sizeof(p->why), "%s", why);
}

/* A symbolizer holding the mappings of libfix.so under path (pid 7), build-id as given. */
static struct at_symbolizer *symbolizer(const char *path, const char *debug_dir,
					const uint8_t *build_id, struct problems *p)
{
	struct at_symbolizer *z = at_symbolizer_new(debug_dir, on_problem, p);

	assert_non_null(z);
	for (int i = 0; i < fx.nmaps; i++) {
		struct at_mapping m = fx.maps[i];

		m.path = path;
		memcpy(m.build_id, build_id, AT_BUILD_ID_MAX);
		assert_int_equal(at_symbolizer_add_mapping(z, &m), 0);
	}
	return z;
}

static const char *text_of(const struct at_frame *f)
{
	static char buf[256];

	at_frame_text(f, buf, sizeof(buf));
	return buf;
}

/* The file offset of address pc of this process, in libfix.so's mappings. */
static uint64_t file_offset(uint64_t pc)
{
	for (int i = 0; i < fx.nmaps; i++)
		if (fx.maps[i].start <= pc && pc < fx.maps[i].end)
			return pc - fx.maps[i].start + fx.maps[i].offset;
	fail_msg("0x%" PRIx64 " is not in libfix.so", pc);
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, t = strlen(tail);

	return s && n >= t && strcmp(s + n - t, tail) == 0;
}

/* The objects that give names, lines and inlines: libfix.so itself (.symtab, DWARF), and its
 * stripped copy with the debug file found by build-id. */
static void test_names_lines_inlines(void **state)
{
	static const struct {
		const char *what;
		int stripped;
	} objects[] = {
		{ "the object itself", 0 },
		{ "a stripped copy and its debug file", 1 },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(objects) / sizeof(objects[0]); k++) {
		struct problems p = { 0 };
		struct at_symbolizer *z =
			symbolizer(objects[k].stripped ? fx.stripped : fx.lib,
				   objects[k].stripped ? fx.debug_dir : "/nonexistent", fx.build_id, &p);
		struct at_frame fr[AT_SYMBOLIZE_MAX_INLINE];
		int n;

		print_message("%s\n", objects[k].what);
		/* a function's entry, the first pc of a stack: looked up as it is */
		n = at_symbolize(z, 7, fx.outer, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].function, "at_fix_outer");
		assert_true(ends_with(fr[0].file, "/fix.c"));
		assert_int_equal(fr[0].line, 14);
		assert_string_equal(fr[0].object, "libfix.so");
		assert_int_equal(fr[0].object_address, file_offset(fx.outer));

		/* a return address inside an inlined function: the inline first, then its caller
		 * at the line of the inlined call */
		n = at_symbolize(z, 7, fx.inner_call_ret, 1, fr, AT_SYMBOLIZE_MAX_INLINE);
		assert_int_equal(n, 2);
		assert_string_equal(fr[0].function, "at_fix_inner");
		assert_true(fr[0].inlined);
		assert_true(ends_with(fr[0].file, "/fix.c"));
		assert_int_equal(fr[0].line, 10);
		assert_string_equal(fr[1].function, "at_fix_outer");
		assert_false(fr[1].inlined);
		assert_true(ends_with(fr[1].file, "/fix.c"));
		assert_int_equal(fr[1].line, 15);
		assert_int_equal(fr[1].object_address, file_offset(fx.inner_call_ret));
		/* a table of one frame gets the innermost */
		n = at_symbolize(z, 7, fx.inner_call_ret, 1, fr, 1);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].function, "at_fix_inner");

		/* a call that ends a function returns to the next function's first byte: pc - 1
		 * is the caller, the pc itself the next function */
		assert_int_equal(fx.ends_call_ret, fx.after);
		n = at_symbolize(z, 7, fx.ends_call_ret, 1, fr, AT_SYMBOLIZE_MAX_INLINE);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].function, "at_fix_ends_with_call");
		assert_int_equal(fr[0].line, 25);
		n = at_symbolize(z, 7, fx.ends_call_ret, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
		assert_string_equal(fr[n - 1].function, "at_fix_after");

		/* a static function: in .symtab and DWARF only (its first instruction is the
		 * return statement's) */
		n = at_symbolize(z, 7, fx.hidden, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
		assert_string_equal(fr[n - 1].function, "at_fix_hidden");
		assert_int_equal(fr[n - 1].line, 33);
		assert_int_equal(p.count, 0);
		at_symbolizer_free(z);
	}
}

/* A stripped object without its debug file: exported names from .dynsym, no lines, and a
 * static function as object+address. */
static void test_dynsym_only(void **state)
{
	struct problems p = { 0 };
	struct at_symbolizer *z = symbolizer(fx.stripped, fx.dir, fx.build_id, &p);
	struct at_frame fr[AT_SYMBOLIZE_MAX_INLINE];
	char want[64];
	int n;

	(void)state;
	n = at_symbolize(z, 7, fx.inner_call_ret, 1, fr, AT_SYMBOLIZE_MAX_INLINE);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].function, "at_fix_outer");
	assert_null(fr[0].file);
	assert_int_equal(fr[0].line, 0);
	n = at_symbolize(z, 7, fx.hidden, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
	assert_int_equal(n, 1);
	assert_null(fr[0].function);
	snprintf(want, sizeof(want), "libfix.so+0x%" PRIx64, file_offset(fx.hidden));
	assert_string_equal(text_of(&fr[0]), want);
	/* a C++ symbol, demangled */
	n = at_symbolize(z, 7, fx.mangled, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].function, "at::mangled(int)");
	assert_int_equal(p.count, 0);
	at_symbolizer_free(z);
}

/* Objects that cannot be trusted: reported once each, their frames never named. */
static void test_unusable_objects(void **state)
{
	uint8_t changed[AT_BUILD_ID_MAX];
	char want_id[2 * AT_BUILD_ID_MAX + 1], have_id[2 * AT_BUILD_ID_MAX + 1];
	char want_why[256];
	static const char *const missing = "/nonexistent/dir/libgone.so";
	const struct {
		const char *what;
		const char *path;
		const uint8_t *build_id;
		const char *why; /* NULL: the build-id message */
	} cases[] = {
		{ "a changed build-id", fx.lib, changed, NULL },
		{ "a missing object", missing, fx.build_id,
		  "cannot open: No such file or directory" },
	};

	(void)state;
	memcpy(changed, fx.build_id, sizeof(changed));
	changed[0] ^= 0xff;
	for (int i = 0; i < fx.build_id_len; i++) {
		sprintf(want_id + 2 * i, "%02x", changed[i]);
		sprintf(have_id + 2 * i, "%02x", fx.build_id[i]);
	}
	snprintf(want_why, sizeof(want_why),
		 "build-id %s in the trace, %s on disk: the object changed", want_id, have_id);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct problems p = { 0 };
		struct at_symbolizer *z =
			symbolizer(cases[k].path, fx.debug_dir, cases[k].build_id, &p);
		struct at_frame fr[4];
		char want[128];
		const char *base = strrchr(cases[k].path, '/') + 1;

		print_message("%s\n", cases[k].what);
		for (int round = 0; round < 3; round++) {
			uint64_t pc = round == 2 ? fx.hidden : fx.inner_call_ret;

			assert_int_equal(at_symbolize(z, 7, pc, round != 2, fr, 4), 1);
			assert_null(fr[0].function);
			assert_null(fr[0].file);
			snprintf(want, sizeof(want), "%s+0x%" PRIx64, base, file_offset(pc));
			assert_string_equal(text_of(&fr[0]), want);
		}
		assert_int_equal(p.count, 1);
		assert_string_equal(p.path, cases[k].path);
		assert_string_equal(p.why, cases[k].why ? cases[k].why : want_why);
		at_symbolizer_free(z);
	}
}

/* A writer rewriting libfix.so in place at a path, as cp over it does: truncated, then 1 KiB
 * every 5 ms; started says the first KiB is there. */
struct rewriter {
	const char *path;
	volatile int started;
};

static void *rewrite_in_place(void *arg)
{
	struct rewriter *w = arg;
	char buf[1024];
	int in = open(fx.lib, O_RDONLY), out = open(w->path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
	ssize_t n;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n)
			break;
		w->started = 1;
		usleep(5000);
	}
	w->started = 1;
	close(in);
	close(out);
	return NULL;
}

/* An object read while a writer rewrites it in place (empty, then partial: "not an ELF
 * object", or a build-id that is not there yet) is read again once written: named, nothing
 * reported. */
static void test_rewritten_while_read(void **state)
{
	char path[160];
	struct rewriter w = { path, 0 };
	struct problems p = { 0 };
	struct at_frame fr[4];
	struct stat st;
	pthread_t writer;

	(void)state;
	assert_int_equal(stat(fx.lib, &st), 0);
	assert_true(st.st_size > 8 * 1024); /* the writer takes 40 ms or more */
	snprintf(path, sizeof(path), "%s/rewritten.so", fx.dir);
	assert_int_equal(pthread_create(&writer, NULL, rewrite_in_place, &w), 0);
	while (!w.started)
		usleep(100);
	/* no debug file: the names are in the object's .symtab, at its end */
	struct at_symbolizer *z = symbolizer(path, fx.dir, fx.build_id, &p);
	int n = at_symbolize(z, 7, fx.outer, 0, fr, 4);
	pthread_join(writer, NULL);
	assert_int_equal(p.count, 0);
	assert_int_equal(n, 1);
	assert_string_equal(text_of(&fr[0]), "at_fix_outer");
	at_symbolizer_free(z);
}

/* An object without a build-id (libfix.so, its note removed): named only when its file has
 * not changed since the trace began (ctime older than the trace's start); a trace without a
 * start time names it never. Each case: the trace's start against the file's ctime. */
static void test_no_build_id(void **state)
{
	static const uint8_t none[AT_BUILD_ID_MAX];
	char path[160];
	struct stat st;
	const struct {
		const char *what;
		int64_t start_minus_ctime_ns; /* INT64_MIN: no start time */
		const char *name;             /* NULL: unnamed, one problem */
		const char *why_starts;
	} cases[] = {
		{ "a trace begun after the file's last change", 60000000000, "at_fix_outer", NULL },
		{ "a trace begun before the file changed", -1000000000, NULL,
		  "no build-id, and the file changed at 20" },
		{ "a change 10 ms after the start: within the clock's slack, changed", -10000000, NULL,
		  "no build-id, and the file changed at 20" },
		{ "a trace without a start time", INT64_MIN, NULL,
		  "no build-id, and the trace has no start time: nothing tells whether this file "
		  "is the one traced" },
	};

	(void)state;
	snprintf(path, sizeof(path), "%s/nobid/libfix.so", fx.dir);
	assert_int_equal(run("mkdir -p %s/nobid && objcopy --remove-section .note.gnu.build-id %s %s",
			     fx.dir, fx.lib, path), 0);
	uint8_t id[AT_BUILD_ID_MAX];
	assert_int_equal(read_build_id(path, id), -1);
	assert_int_equal(stat(path, &st), 0);
	uint64_t ctime_ns = (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct problems p = { 0 };
		struct at_symbolizer *z = at_symbolizer_new(fx.dir, on_problem, &p);
		struct at_frame fr[4];

		print_message("%s\n", cases[k].what);
		assert_non_null(z);
		if (cases[k].start_minus_ctime_ns != INT64_MIN)
			at_symbolizer_trace_start(z, ctime_ns + (uint64_t)cases[k].start_minus_ctime_ns);
		for (int i = 0; i < fx.nmaps; i++) {
			struct at_mapping m = fx.maps[i];

			m.path = path;
			m.build_id_len = 0;
			memcpy(m.build_id, none, sizeof(none));
			assert_int_equal(at_symbolizer_add_mapping(z, &m), 0);
		}
		assert_int_equal(at_symbolize(z, 7, fx.outer, 0, fr, 4), 1);
		if (cases[k].name) {
			assert_string_equal(text_of(&fr[0]), cases[k].name);
			assert_int_equal(p.count, 0);
		} else {
			assert_null(fr[0].function);
			assert_int_equal(p.count, 1);
			assert_memory_equal(p.why, cases[k].why_starts, strlen(cases[k].why_starts));
		}
		at_symbolizer_free(z);
	}
}

/* Which mapping an address falls in: pid, overlap replacement, no mapping, no file. */
static void test_mappings(void **state)
{
	struct problems p = { 0 };
	struct at_symbolizer *z = at_symbolizer_new(fx.debug_dir, on_problem, &p);
	struct at_frame fr[4];
	const struct {
		uint32_t pid;
		uint64_t start, end, offset;
		const char *path;
	} maps[] = {
		{ 1, 0x1000, 0x2000, 0x0, "/nonexistent/a.so" },
		{ 1, 0x2000, 0x3000, 0x1000, "/nonexistent/e.so" },
		{ 2, 0x1000, 0x3000, 0x5000, "/nonexistent/b.so" },
		{ 1, 0x8000, 0x9000, 0x0, "[vdso]" },
		{ 1, 0x2800, 0x2900, 0x100000, "/nonexistent/c.so" }, /* replaces e.so's */
	};
	const struct {
		uint32_t pid;
		uint64_t pc;
		const char *text;
	} lookups[] = {
		{ 1, 0x1000, "a.so+0x0" },
		{ 1, 0x1fff, "a.so+0xfff" },
		{ 1, 0x2000, "[unknown]" }, /* e.so's mapping was replaced as a whole */
		{ 1, 0x2800, "c.so+0x100000" },
		{ 1, 0x28ff, "c.so+0x1000ff" },
		{ 2, 0x2a00, "b.so+0x6a00" },
		{ 3, 0x1000, "[unknown]" },
		{ 1, 0x3000, "[unknown]" },
		{ 1, 0x8010, "[vdso]+0x10" },
	};

	(void)state;
	assert_non_null(z);
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct at_mapping m = { .pid = maps[i].pid, .start = maps[i].start,
					.end = maps[i].end, .offset = maps[i].offset,
					.path = maps[i].path };
		assert_int_equal(at_symbolizer_add_mapping(z, &m), 0);
	}
	for (size_t i = 0; i < sizeof(lookups) / sizeof(lookups[0]); i++) {
		assert_int_equal(at_symbolize(z, lookups[i].pid, lookups[i].pc, 1, fr, 4), 1);
		assert_string_equal(text_of(&fr[0]), lookups[i].text);
	}
	/* a.so, b.so and c.so missing, each once; [vdso] has no file to miss */
	assert_int_equal(p.count, 3);
	struct at_mapping empty = { .pid = 1, .start = 0x10, .end = 0x10, .path = "/x" };
	assert_int_equal(at_symbolizer_add_mapping(z, &empty), -1);
	assert_int_equal(errno, EINVAL);
	at_symbolizer_free(z);
}

/* at_frame_text cuts to the buffer and says the length it wanted. */
static void test_frame_text(void **state)
{
	struct at_frame f = { .function = "a_long_function_name" };
	char buf[8];

	(void)state;
	assert_int_equal(at_frame_text(&f, buf, sizeof(buf)), 20);
	assert_string_equal(buf, "a_long_");
}

/* A frame of a kind named by NAMES records (lib/frames.h's AT_FRAME_TEST) gets the name of its
 * pid, kind and value through at_symbolize_frame, one frame with the kind's name as its object;
 * a later name replaces it; a value without a name, another pid's, is the kind and the value
 * ("test+0x6"); a native kind cannot be named so; a kind the table lacks is "[unknown]". */
static void test_named_frames(void **state)
{
	struct at_symbolizer *z = at_symbolizer_new(NULL, NULL, NULL);
	struct at_frame_name n = { .pid = 7, .kind = AT_FRAME_TEST, .value = 5, .line = 12,
				   .function = "f", .file = "a.py" };
	struct at_frame f[AT_SYMBOLIZE_MAX_INLINE];
	char buf[64];

	(void)state;
	assert_non_null(z);
	for (uint64_t v = 100; v < 300; v++) { /* others, enough to grow the table */
		struct at_frame_name o = { .pid = 7, .kind = AT_FRAME_TEST, .value = v,
					   .function = "other" };
		assert_int_equal(at_symbolizer_add_name(z, &o), 0);
	}
	assert_int_equal(at_symbolizer_add_name(z, &n), 0);
	assert_int_equal(at_symbolize_frame(z, 7, AT_FRAME_TEST, 5, 1, f, AT_SYMBOLIZE_MAX_INLINE),
			 1);
	assert_string_equal(f[0].function, "f");
	assert_string_equal(f[0].file, "a.py");
	assert_int_equal(f[0].line, 12);
	assert_int_equal(f[0].inlined, 0);
	assert_string_equal(f[0].object, "test");
	assert_int_equal(f[0].object_address, 5);
	at_symbolize_frame(z, 7, AT_FRAME_TEST, 250, 1, f, 1);
	assert_string_equal(f[0].function, "other");
	assert_null(f[0].file);

	n.function = "g";
	n.file = NULL;
	n.line = 0;
	assert_int_equal(at_symbolizer_add_name(z, &n), 0);
	at_symbolize_frame(z, 7, AT_FRAME_TEST, 5, 1, f, 1);
	assert_string_equal(f[0].function, "g");
	assert_null(f[0].file);
	assert_int_equal(f[0].line, 0);

	assert_int_equal(at_symbolize_frame(z, 7, AT_FRAME_TEST, 6, 1, f, 1), 1);
	at_frame_text(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, "test+0x6");
	at_symbolize_frame(z, 8, AT_FRAME_TEST, 5, 1, f, 1);
	at_frame_text(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, "test+0x5");
	assert_int_equal(at_symbolize_frame(z, 7, 3, 5, 1, f, 1), 1);
	at_frame_text(&f[0], buf, sizeof(buf));
	assert_string_equal(buf, "[unknown]");

	n.kind = AT_FRAME_NATIVE;
	errno = 0;
	assert_int_equal(at_symbolizer_add_name(z, &n), -1);
	assert_int_equal(errno, EINVAL);
	at_symbolizer_free(z);
}

/* The outcomes at_symbolizer_objects hands out, collected. */
struct outcomes {
	int count;
	struct at_object_outcome o[4];
	char path[4][160];
};

static void on_object(void *arg, const struct at_object_outcome *o)
{
	struct outcomes *c = arg;

	assert_true(c->count < 4);
	c->o[c->count] = *o;
	snprintf(c->path[c->count], sizeof(c->path[0]), "%s", o->path);
	c->o[c->count].path = c->path[c->count];
	c->o[c->count].build_id = NULL;
	c->count++;
}

/* Each object read tells how many of its frames stayed unnamed and whether a debug file named
 * them; an unusable object (reported) is not told. DEBUGINFOD_URLS is unset: none fetched. */
static void test_object_outcomes(void **state)
{
	const struct {
		const char *what;
		const char *path, *debug_dir;
		uint64_t unnamed;
		int debug_file;
	} cases[] = {
		{ "a stripped object without its debug file", fx.stripped, fx.dir, 2, 0 },
		{ "a stripped object with its debug file", fx.stripped, fx.debug_dir, 0, 1 },
		{ "an object with .symtab and DWARF", fx.lib, fx.dir, 0, 0 },
	};

	(void)state;
	unsetenv("DEBUGINFOD_URLS");
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct problems p = { 0 };
		struct outcomes c = { 0 };
		struct at_symbolizer *z = symbolizer(cases[k].path, cases[k].debug_dir, fx.build_id, &p);
		struct at_mapping gone = fx.maps[0];
		struct at_frame fr[AT_SYMBOLIZE_MAX_INLINE];

		print_message("%s\n", cases[k].what);
		gone.pid = 8;
		gone.path = "/nonexistent/libgone.so";
		assert_int_equal(at_symbolizer_add_mapping(z, &gone), 0);
		/* the static function twice (the second from the cache), an exported one once */
		at_symbolize(z, 7, fx.hidden, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
		at_symbolize(z, 7, fx.hidden, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
		at_symbolize(z, 7, fx.outer, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
		at_symbolize(z, 8, gone.start, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
		at_symbolizer_objects(z, on_object, &c);
		assert_int_equal(p.count, 1);
		assert_int_equal(c.count, 1);
		assert_string_equal(c.path[0], cases[k].path);
		assert_int_equal(c.o[0].build_id_len, fx.build_id_len);
		assert_int_equal(c.o[0].unnamed, cases[k].unnamed);
		assert_int_equal(c.o[0].debug_file, cases[k].debug_file);
		assert_int_equal(c.o[0].debuginfod, 0);
		at_symbolizer_free(z);
	}
}

/* A loopback port nothing listens on (bound, then closed): its number. */
static int closed_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* With DEBUGINFOD_URLS naming a server that is not there, the first object without a debug
 * file is fetched for and fails with the connection's error; the next is not asked for (-2),
 * with the same error; its frames stay as they were (.dynsym's names, offsets). */
static void test_debuginfod_unreachable(void **state)
{
	char urls[64], cache[160], copy[160];
	struct problems p = { 0 };
	struct outcomes c = { 0 };
	struct at_frame fr[AT_SYMBOLIZE_MAX_INLINE];

	(void)state;
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", closed_port());
	snprintf(cache, sizeof(cache), "%s/debuginfod-cache", fx.dir);
	snprintf(copy, sizeof(copy), "%s/stripped2/libfix.so", fx.dir);
	assert_int_equal(run("mkdir -p %s/stripped2 && cp %s %s", fx.dir, fx.stripped, copy), 0);
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	struct at_symbolizer *z = symbolizer(fx.stripped, fx.dir, fx.build_id, &p);
	for (int i = 0; i < fx.nmaps; i++) {
		struct at_mapping m = fx.maps[i];

		m.pid = 9;
		m.path = copy;
		assert_int_equal(at_symbolizer_add_mapping(z, &m), 0);
	}
	assert_int_equal(at_symbolize(z, 7, fx.hidden, 0, fr, AT_SYMBOLIZE_MAX_INLINE), 1);
	assert_null(fr[0].function);
	assert_int_equal(at_symbolize(z, 9, fx.outer, 0, fr, AT_SYMBOLIZE_MAX_INLINE), 1);
	assert_string_equal(fr[0].function, "at_fix_outer");
	at_symbolizer_objects(z, on_object, &c);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	assert_int_equal(p.count, 0);
	assert_int_equal(c.count, 2);
	assert_string_equal(c.path[0], fx.stripped);
	assert_int_equal(c.o[0].debuginfod, -1);
	assert_int_not_equal(c.o[0].debuginfod_errno, 0);
	assert_int_not_equal(c.o[0].debuginfod_errno, ENOENT);
	assert_int_equal(c.o[0].unnamed, 1);
	assert_string_equal(c.path[1], copy);
	assert_int_equal(c.o[1].debuginfod, -2);
	assert_int_equal(c.o[1].debuginfod_errno, c.o[0].debuginfod_errno);
	assert_int_equal(c.o[1].unnamed, 0);
	at_symbolizer_free(z);
}

/* Starts an HTTP server of the files under dir on the loopback (python3's http.server: a
 * debuginfod's answers are files at /buildid/ID/debuginfo, 404 for the others); its pid, once
 * it accepts connections at port. */
static pid_t serve(const char *dir, int port)
{
	char port_text[16];
	pid_t pid;

	snprintf(port_text, sizeof(port_text), "%d", port);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execlp("python3", "python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory",
		       dir, port_text, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int fd = socket(AF_INET, SOCK_STREAM, 0), up;

		up = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(fd);
		if (up)
			return pid;
		usleep(50000);
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	fail_msg("python3 -m http.server did not start on port %d", port);
	return -1;
}

/* libfix.so compiled again as path (stripped) with build-id bid (of libfix.so's size, so
 * that its layout is libfix.so's), and added as pid's mappings to z. */
static void add_rebuilt(struct at_symbolizer *z, const char *path, const uint8_t *bid,
			uint32_t pid)
{
	char hex_id[2 * AT_BUILD_ID_MAX + 1];

	for (int i = 0; i < fx.build_id_len; i++)
		sprintf(hex_id + 2 * i, "%02x", bid[i]);
	assert_int_equal(run("mkdir -p $(dirname %s) && cc -O2 -g -fPIC -shared "
			     "-fno-optimize-sibling-calls -fno-toplevel-reorder -falign-functions=1 "
			     "-Wl,--build-id=0x%s -o %s %s/fix.c && strip --strip-all %s",
			     path, hex_id, path, fx.dir, path), 0);
	for (int i = 0; i < fx.nmaps; i++) {
		struct at_mapping m = fx.maps[i];

		m.pid = pid;
		m.path = path;
		memcpy(m.build_id, bid, AT_BUILD_ID_MAX);
		assert_int_equal(at_symbolizer_add_mapping(z, &m), 0);
	}
}

/* A server that gives libfix.so's debug file for its build-id, and the same file for a second
 * build-id, nothing for a third: an object of the third gets ENOENT, and the server is asked
 * again for the next; the stripped libfix.so's frames get names, lines and inlines from the
 * file fetched, as from the debug directory, and it is kept in DEBUGINFOD_CACHE_PATH; an
 * object of the second build-id refuses the file (EBADMSG) and stays unnamed. */
static void test_debuginfod_fetch(void **state)
{
	char id[2 * AT_BUILD_ID_MAX + 1], other_id[2 * AT_BUILD_ID_MAX + 1];
	char urls[64], cache[160], srv[160], other[160], third[160];
	uint8_t other_bid[AT_BUILD_ID_MAX], third_bid[AT_BUILD_ID_MAX];
	struct problems p = { 0 };
	struct outcomes c = { 0 };
	struct at_frame fr[AT_SYMBOLIZE_MAX_INLINE];
	int port = closed_port(), n;

	(void)state;
	memcpy(other_bid, fx.build_id, sizeof(other_bid));
	other_bid[0] ^= 0xff;
	memcpy(third_bid, fx.build_id, sizeof(third_bid));
	third_bid[1] ^= 0xff;
	for (int i = 0; i < fx.build_id_len; i++) {
		sprintf(id + 2 * i, "%02x", fx.build_id[i]);
		sprintf(other_id + 2 * i, "%02x", other_bid[i]);
	}
	snprintf(srv, sizeof(srv), "%s/srv", fx.dir);
	for (int k = 0; k < 2; k++)
		assert_int_equal(run("mkdir -p %s/buildid/%s && cp %s/.build-id/%.2s/%s.debug "
				     "%s/buildid/%s/debuginfo", srv, k ? other_id : id,
				     fx.debug_dir, id, id + 2, srv, k ? other_id : id), 0);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	snprintf(cache, sizeof(cache), "%s/fetch-cache", fx.dir);
	snprintf(other, sizeof(other), "%s/other/libfix.so", fx.dir);
	snprintf(third, sizeof(third), "%s/third/libfix.so", fx.dir);
	pid_t server = serve(srv, port);
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	struct at_symbolizer *z = symbolizer(fx.stripped, fx.dir, fx.build_id, &p);
	add_rebuilt(z, other, other_bid, 9);
	add_rebuilt(z, third, third_bid, 11);

	assert_int_equal(at_symbolize(z, 11, fx.hidden, 0, fr, AT_SYMBOLIZE_MAX_INLINE), 1);
	assert_null(fr[0].function);
	/* named from the fetched file: the static function, its line, the inline */
	n = at_symbolize(z, 7, fx.hidden, 0, fr, AT_SYMBOLIZE_MAX_INLINE);
	assert_string_equal(fr[n - 1].function, "at_fix_hidden");
	assert_int_equal(fr[n - 1].line, 33);
	n = at_symbolize(z, 7, fx.inner_call_ret, 1, fr, AT_SYMBOLIZE_MAX_INLINE);
	assert_int_equal(n, 2);
	assert_string_equal(fr[0].function, "at_fix_inner");
	assert_int_equal(fr[1].line, 15);
	/* the file served for the second build-id is libfix.so's: refused */
	assert_int_equal(at_symbolize(z, 9, fx.hidden, 0, fr, AT_SYMBOLIZE_MAX_INLINE), 1);
	assert_null(fr[0].function);
	at_symbolizer_objects(z, on_object, &c);
	kill(server, SIGTERM);
	waitpid(server, NULL, 0);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	assert_int_equal(p.count, 0);
	assert_int_equal(c.count, 3);
	assert_int_equal(c.o[0].debuginfod, 1);
	assert_int_equal(c.o[0].debug_file, 1);
	assert_int_equal(c.o[0].unnamed, 0);
	assert_int_equal(c.o[1].debuginfod, -1);
	assert_int_equal(c.o[1].debuginfod_errno, EBADMSG);
	assert_int_equal(c.o[1].debug_file, 0);
	assert_int_equal(c.o[1].unnamed, 1);
	assert_int_equal(c.o[2].debuginfod, -1);
	assert_int_equal(c.o[2].debuginfod_errno, ENOENT);
	assert_int_equal(c.o[2].unnamed, 1);
	assert_int_equal(run("cmp %s/%s/debuginfo %s/.build-id/%.2s/%s.debug", cache, id,
			     fx.debug_dir, id, id + 2), 0);
	at_symbolizer_free(z);
}

/* The debug file's path by build-id: the first byte a folder, the rest the name. */
static void test_debug_file_path(void **state)
{
	static const uint8_t id[] = { 0xab, 0xcd, 0xef, 0x01 };
	char buf[64];

	(void)state;
	assert_int_equal(at_debug_file_path(NULL, id, sizeof(id), buf, sizeof(buf)),
			 strlen("/usr/lib/debug/.build-id/ab/cdef01.debug"));
	assert_string_equal(buf, "/usr/lib/debug/.build-id/ab/cdef01.debug");
	assert_int_equal(at_debug_file_path("/d", id, 2, buf, sizeof(buf)),
			 strlen("/d/.build-id/ab/cd.debug"));
	assert_string_equal(buf, "/d/.build-id/ab/cd.debug");
	assert_int_equal(at_debug_file_path("/d", id, 1, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(at_debug_file_path("/d", id, 4, buf, 8),
			 strlen("/d/.build-id/ab/cdef01.debug"));
	assert_string_equal(buf, "/d/.bui");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_lines_inlines),
		cmocka_unit_test(test_dynsym_only),
		cmocka_unit_test(test_unusable_objects),
		cmocka_unit_test(test_rewritten_while_read),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_mappings),
		cmocka_unit_test(test_frame_text),
		cmocka_unit_test(test_named_frames),
		cmocka_unit_test(test_object_outcomes),
		cmocka_unit_test(test_debuginfod_unreachable),
		cmocka_unit_test(test_debuginfod_fetch),
		cmocka_unit_test(test_debug_file_path),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
