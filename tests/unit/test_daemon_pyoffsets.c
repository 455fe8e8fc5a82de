/* test_daemon_pyoffsets.c: unit tests of daemon/python/pyoffsets.c.
 *
 * The oracle is the interpreters' own DWARF, read with libdw: every offset of the 3.11 and 3.12
 * tables is checked against pyenv's libpython3.11 and libpython3.12, and 3.13's
 * _Py_DebugOffsets, decoded from the initial bytes of _PyRuntime in libpython3.13's file (the
 * same bytes the process starts with), against libpython3.13's. An interpreter not installed
 * is skipped, said in a message. The decoder's refusals are checked on altered bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <gelf.h>

#include "../../daemon/python/pyoffsets.h"

#define PYENV "/root/.pyenv/versions/"
#define N(a) (sizeof(a) / sizeof(a[0]))

/* Peels typedefs and qualifiers off die into *out: 0, or -1. */
static int peel(Dwarf_Die *die, Dwarf_Die *out)
{
	*out = *die;
	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(out);
		Dwarf_Attribute a;

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
			return 0;
		if (!dwarf_attr(out, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
			return -1;
	}
	return -1;
}

/* Finds the defined struct named name (a typedef's name or a struct's tag) in dbg. */
static int find_type(Dwarf *dbg, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dbg, off + hsize, &cu) && dwarf_child(&cu, &die) == 0)
			do {
				int tag = dwarf_tag(&die);
				const char *n = dwarf_diename(&die);

				if ((tag == DW_TAG_typedef || tag == DW_TAG_structure_type) && n &&
				    strcmp(n, name) == 0 && peel(&die, out) == 0 &&
				    dwarf_tag(out) == DW_TAG_structure_type && dwarf_haschildren(out))
					return 0;
			} while (dwarf_siblingof(&die, &die) == 0);
		off = next;
	}
	return -1;
}

/* The byte offset of member path ("threads.head") in struct st, or -1. */
static long member_offset(Dwarf_Die *st, const char *path)
{
	char first[128];
	const char *dot = strchr(path, '.');
	size_t len = dot ? (size_t)(dot - path) : strlen(path);
	Dwarf_Die m;

	snprintf(first, sizeof(first), "%.*s", (int)len, path);
	if (dwarf_child(st, &m) != 0)
		return -1;
	do {
		Dwarf_Attribute a;
		Dwarf_Word at;
		Dwarf_Die type, inner;
		const char *n = dwarf_diename(&m);
		long rest;

		if (dwarf_tag(&m) != DW_TAG_member || !n || strcmp(n, first) != 0)
			continue;
		if (!dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &at))
			return -1;
		if (!dot)
			return (long)at;
		if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &type) ||
		    peel(&type, &inner) != 0)
			return -1;
		rest = member_offset(&inner, dot + 1);
		return rest < 0 ? -1 : (long)at + rest;
	} while (dwarf_siblingof(&m, &m) == 0);
	return -1;
}

/* One field of struct at_py_offsets and where the DWARF has it: type and member path, or the
 * type's size when the path is NULL. */
struct check {
	size_t field;
	const char *type, *member;
};

#define F(f) offsetof(struct at_py_offsets, f)

/* The fields every version has, under the same names. */
static const struct check common[] = {
	{ F(runtime_interpreters_head), "_PyRuntimeState", "interpreters.head" },
	{ F(interp_next), "PyInterpreterState", "next" },
	{ F(interp_threads_head), "PyInterpreterState", "threads.head" },
	{ F(tstate_next), "PyThreadState", "next" },
	{ F(tstate_native_thread_id), "PyThreadState", "native_thread_id" },
	{ F(frame_previous), "_PyInterpreterFrame", "previous" },
	{ F(frame_owner), "_PyInterpreterFrame", "owner" },
	{ F(frame_globals), "_PyInterpreterFrame", "f_globals" },
	{ F(frame_locals), "_PyInterpreterFrame", "f_locals" },
	{ F(code_filename), "PyCodeObject", "co_filename" },
	{ F(code_name), "PyCodeObject", "co_name" },
	{ F(code_qualname), "PyCodeObject", "co_qualname" },
	{ F(code_linetable), "PyCodeObject", "co_linetable" },
	{ F(code_firstlineno), "PyCodeObject", "co_firstlineno" },
	{ F(code_code_adaptive), "PyCodeObject", "co_code_adaptive" },
	{ F(unicode_length), "PyASCIIObject", "length" },
	{ F(unicode_state), "PyASCIIObject", "state" },
	{ F(unicode_ascii_size), "PyASCIIObject", NULL },
	{ F(unicode_compact_size), "PyCompactUnicodeObject", NULL },
	{ F(bytes_size), "PyVarObject", "ob_size" },
	{ F(bytes_sval), "PyBytesObject", "ob_sval" },
};

/* The fields of 3.11 and 3.12 only, and of 3.13 only. */
static const struct check before313[] = {
	{ F(tstate_cframe), "PyThreadState", "cframe" },
	{ F(cframe_current_frame), "_PyCFrame", "current_frame" },
	{ F(frame_code), "_PyInterpreterFrame", "f_code" },
	{ F(frame_instr), "_PyInterpreterFrame", "prev_instr" },
};
static const struct check since313[] = {
	{ F(tstate_current_frame), "PyThreadState", "current_frame" },
	{ F(frame_code), "_PyInterpreterFrame", "f_executable" },
	{ F(frame_instr), "_PyInterpreterFrame", "instr_ptr" },
};

/* Checks the n fields of c of o against dbg. */
static void check_fields(Dwarf *dbg, const struct at_py_offsets *o, const struct check *c,
			 size_t n, const char *lib)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t have;
		Dwarf_Die st;
		long want;

		memcpy(&have, (const char *)o + c[i].field, sizeof(have));
		assert_int_equal(find_type(dbg, c[i].type, &st), 0);
		want = c[i].member ? member_offset(&st, c[i].member) : dwarf_bytesize(&st);
		if ((long)have != want)
			print_message("%s: %s.%s is at %ld, the table says %u\n", lib, c[i].type,
				      c[i].member ? c[i].member : "(size)", want, have);
		assert_int_equal(have, want);
	}
}

/* Opens lib's DWARF; NULL (and a skip) when lib is not installed. */
static Dwarf *open_dwarf(const char *lib, int *fd)
{
	Dwarf *dbg;

	*fd = open(lib, O_RDONLY);
	if (*fd < 0) {
		print_message("%s not installed\n", lib);
		return NULL;
	}
	dbg = dwarf_begin(*fd, DWARF_C_READ);
	assert_non_null(dbg);
	return dbg;
}

/* 3.11's and 3.12's tables are their DWARF's offsets, and 3.11's is_entry too. */
static void test_tables_match_dwarf(void **state)
{
	static const struct { const char *lib; uint32_t version; } libs[] = {
		{ PYENV "3.11.7/lib/libpython3.11.so.1.0", 0x030b07f0 },
		{ PYENV "3.12.1/lib/libpython3.12.so.1.0", 0x030c01f0 },
	};
	static const struct check entry311 = { F(frame_is_entry), "_PyInterpreterFrame",
					       "is_entry" };
	int skipped = 0;

	(void)state;
	for (size_t i = 0; i < N(libs); i++) {
		const struct at_py_offsets *o = at_py_offsets_table(libs[i].version);
		int fd;
		Dwarf *dbg = open_dwarf(libs[i].lib, &fd);

		assert_non_null(o);
		assert_true(at_py_offsets_walkable(o)); /* in the bytes read, pointers aligned */
		if (!dbg) {
			skipped++;
			continue;
		}
		check_fields(dbg, o, common, N(common), libs[i].lib);
		check_fields(dbg, o, before313, N(before313), libs[i].lib);
		if (i == 0)
			check_fields(dbg, o, &entry311, 1, libs[i].lib);
		else
			assert_int_equal(o->frame_is_entry, AT_PY_NONE);
		assert_int_equal(o->tstate_current_frame, AT_PY_NONE);
		dwarf_end(dbg);
		close(fd);
	}
	if (skipped == N(libs))
		skip();
}

/* The first bytes of _PyRuntime in lib's file into buf: 0, or -1. */
static int runtime_bytes(const char *lib, uint8_t *buf, size_t len)
{
	int fd = open(lib, O_RDONLY), rc = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			GElf_Shdr data;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || strcmp(name, "_PyRuntime") != 0 ||
			    !gelf_getshdr(elf_getscn(elf, s.st_shndx), &data))
				continue;
			rc = pread(fd, buf, len, (off_t)(s.st_value - data.sh_addr + data.sh_offset))
				== (ssize_t)len ? 0 : -1;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return rc;
}

/* 3.13's published offsets, decoded, are its DWARF's. */
static void test_debug_offsets_match_dwarf(void **state)
{
	static const char lib[] = PYENV "3.13.0/lib/libpython3.13.so.1.0";
	uint8_t buf[AT_PY_DEBUG_OFFSETS_SIZE];
	struct at_py_offsets o;
	const char *why = NULL;
	int fd;
	Dwarf *dbg;

	(void)state;
	assert_null(at_py_offsets_table(0x030d00f0));
	assert_true(at_py_offsets_published(0x030d00f0));
	dbg = open_dwarf(lib, &fd);
	if (!dbg)
		skip();
	assert_int_equal(runtime_bytes(lib, buf, sizeof(buf)), 0);
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), 0);
	assert_int_equal(o.version, 0x030d0000);
	check_fields(dbg, &o, common, N(common), lib);
	check_fields(dbg, &o, since313, N(since313), lib);
	assert_int_equal(o.tstate_cframe, AT_PY_NONE);
	assert_int_equal(o.frame_is_entry, AT_PY_NONE);
	dwarf_end(dbg);
	close(fd);
}

/* Altered bytes are refused, each with its reason. */
static void test_decode_refusals(void **state)
{
	uint8_t good[AT_PY_DEBUG_OFFSETS_SIZE], buf[AT_PY_DEBUG_OFFSETS_SIZE];
	struct at_py_offsets o;
	const char *why;
	uint64_t v;

	(void)state;
	memset(good, 0, sizeof(good));
	memcpy(good, AT_PY_DEBUG_COOKIE, 8);
	v = 0x030d00f0;
	memcpy(good + 8, &v, 8);
	assert_int_equal(at_py_offsets_decode(good, sizeof(good), 0x030d01f0, &o, &why), 0);

	assert_int_equal(at_py_offsets_decode(good, sizeof(good), 0x030c01f0, &o, &why), -1);
	assert_string_equal(why, "this version publishes no debug offsets");
	assert_int_equal(at_py_offsets_decode(good, sizeof(good) - 1, 0x030d00f0, &o, &why), -1);
	assert_string_equal(why, "debug offsets cut short");
	memcpy(buf, good, sizeof(buf));
	buf[0] = 'y';
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), -1);
	assert_string_equal(why, "no debug offsets cookie at the start of _PyRuntime");
	memcpy(buf, good, sizeof(buf));
	v = 0x030e00a0;
	memcpy(buf + 8, &v, 8);
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), -1);
	assert_string_equal(why, "debug offsets of another version than Py_Version");
	memcpy(buf, good, sizeof(buf));
	buf[16] = 1;
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), -1);
	assert_string_equal(why, "a free-threaded build");
	memcpy(buf, good, sizeof(buf));
	v = 1u << 20;
	memcpy(buf + 8 + 8 * 42, &v, 8);        /* co_code_adaptive */
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), -1);
	assert_string_equal(why, "a debug offset past any structure's size");
	memcpy(buf, good, sizeof(buf));
	v = 72;
	memcpy(buf + 8 + 8 * 32, &v, 8);        /* the frame's owner, past the bytes read */
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), -1);
	assert_string_equal(why, "a frame field past the bytes the walk reads of a frame, or a "
				 "pointer off a word's boundary");
	v = 64;
	memcpy(buf + 8 + 8 * 32, &v, 8);        /* ... a byte field at 64: read */
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), 0);
	memcpy(buf + 8 + 8 * 30, &v, 8);        /* ... a word at 64, its last byte the 72nd */
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), 0);
	v = 65;
	memcpy(buf + 8 + 8 * 30, &v, 8);        /* ... a word at 65: past them */
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), -1);
	v = 60;
	memcpy(buf + 8 + 8 * 30, &v, 8);        /* ... a word at 60: within them, off a boundary */
	assert_int_equal(at_py_offsets_decode(buf, sizeof(buf), 0x030d00f0, &o, &why), -1);
	assert_string_equal(why, "a frame field past the bytes the walk reads of a frame, or a "
				 "pointer off a word's boundary");
	assert_null(at_py_offsets_table(0x030a0df0));
	assert_false(at_py_offsets_published(0x030e0000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_match_dwarf),
		cmocka_unit_test(test_debug_offsets_match_dwarf),
		cmocka_unit_test(test_decode_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
