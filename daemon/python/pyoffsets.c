/* pyoffsets.c: the offsets of CPython 3.11 and 3.12 (x86_64 release builds), and the decoder of
 * 3.13's _Py_DebugOffsets. */
#include <string.h>

#include "pyoffsets.h"

#define MINOR(v) ((v) & 0xFFFF0000u)

/* Checked against the DWARF of pyenv's 3.11.7 (tests/unit/test_daemon_pyoffsets.c). */
static const struct at_py_offsets py311 = {
	.version = 0x030b0000,
	.runtime_interpreters_head = 0x28,
	.interp_next = 0x0,
	.interp_threads_head = 0x10,
	.tstate_next = 0x8,
	.tstate_native_thread_id = 0xa0,
	.tstate_cframe = 0x38,
	.cframe_current_frame = 0x8,
	.tstate_current_frame = AT_PY_NONE,
	.frame_previous = 0x30,
	.frame_code = 0x20,
	.frame_instr = 0x38,
	.frame_owner = 0x45,
	.frame_is_entry = 0x44,
	.frame_globals = 0x8,
	.frame_locals = 0x18,
	.code_filename = 0x70,
	.code_name = 0x78,
	.code_qualname = 0x80,
	.code_linetable = 0x88,
	.code_firstlineno = 0x48,
	.code_code_adaptive = 0xb8,
	.unicode_length = 0x10,
	.unicode_state = 0x20,
	.unicode_ascii_size = 48,
	.unicode_compact_size = 72,
	.bytes_size = 0x10,
	.bytes_sval = 0x20,
};

/* Checked against the DWARF of pyenv's 3.12.1. */
static const struct at_py_offsets py312 = {
	.version = 0x030c0000,
	.runtime_interpreters_head = 0x28,
	.interp_next = 0x0,
	.interp_threads_head = 0x48,
	.tstate_next = 0x8,
	.tstate_native_thread_id = 0x90,
	.tstate_cframe = 0x38,
	.cframe_current_frame = 0x0,
	.tstate_current_frame = AT_PY_NONE,
	.frame_previous = 0x8,
	.frame_code = 0x0,
	.frame_instr = 0x38,
	.frame_owner = 0x46,
	.frame_is_entry = AT_PY_NONE,
	.frame_globals = 0x18,
	.frame_locals = 0x28,
	.code_filename = 0x70,
	.code_name = 0x78,
	.code_qualname = 0x80,
	.code_linetable = 0x88,
	.code_firstlineno = 0x44,
	.code_code_adaptive = 0xc0,
	.unicode_length = 0x10,
	.unicode_state = 0x20,
	.unicode_ascii_size = 40,
	.unicode_compact_size = 56,
	.bytes_size = 0x10,
	.bytes_sval = 0x20,
};

const struct at_py_offsets *at_py_offsets_table(uint32_t version)
{
	if (MINOR(version) == py311.version)
		return &py311;
	if (MINOR(version) == py312.version)
		return &py312;
	return NULL;
}

int at_py_offsets_published(uint32_t version)
{
	return MINOR(version) == 0x030d0000;
}

/* The i-th 64-bit field after the cookie of _Py_DebugOffsets (3.13's layout). */
static uint64_t field(const uint8_t *buf, unsigned i)
{
	uint64_t v;

	memcpy(&v, buf + 8 + 8 * (size_t)i, sizeof(v));
	return v;
}

/* Indexes of the fields read, in 3.13's struct _Py_DebugOffsets (after its cookie). */
enum {
	F_VERSION = 0, F_FREE_THREADED = 1,
	F_RUNTIME_INTERPRETERS_HEAD = 4,
	F_INTERP_NEXT = 7, F_INTERP_THREADS_HEAD = 8,
	F_TSTATE_NEXT = 20, F_TSTATE_CURRENT_FRAME = 22, F_TSTATE_NATIVE_THREAD_ID = 24,
	F_FRAME_PREVIOUS = 28, F_FRAME_EXECUTABLE = 29, F_FRAME_INSTR_PTR = 30, F_FRAME_OWNER = 32,
	F_CODE_FILENAME = 34, F_CODE_NAME = 35, F_CODE_QUALNAME = 36, F_CODE_LINETABLE = 37,
	F_CODE_FIRSTLINENO = 38, F_CODE_CODE_ADAPTIVE = 42,
	F_BYTES_OB_SIZE = 64, F_BYTES_OB_SVAL = 65,
	F_UNICODE_STATE = 67, F_UNICODE_LENGTH = 68, F_UNICODE_ASCII_SIZE = 69,
};

/* Larger than any of these structures (3.13's PyInterpreterState is about 100 KiB). */
#define PLAUSIBLE 0x100000u

/* Stores field i in *dst; -1 when it is past any plausible structure. */
static int take(const uint8_t *buf, unsigned i, uint32_t *dst)
{
	uint64_t v = field(buf, i);

	if (v >= PLAUSIBLE)
		return -1;
	*dst = (uint32_t)v;
	return 0;
}

int at_py_offsets_decode(const uint8_t *buf, size_t len, uint32_t version,
			 struct at_py_offsets *o, const char **why)
{
	static const struct { unsigned i; size_t at; } map[] = {
#define M(i, f) { i, offsetof(struct at_py_offsets, f) }
		M(F_RUNTIME_INTERPRETERS_HEAD, runtime_interpreters_head),
		M(F_INTERP_NEXT, interp_next), M(F_INTERP_THREADS_HEAD, interp_threads_head),
		M(F_TSTATE_NEXT, tstate_next), M(F_TSTATE_CURRENT_FRAME, tstate_current_frame),
		M(F_TSTATE_NATIVE_THREAD_ID, tstate_native_thread_id),
		M(F_FRAME_PREVIOUS, frame_previous), M(F_FRAME_EXECUTABLE, frame_code),
		M(F_FRAME_INSTR_PTR, frame_instr), M(F_FRAME_OWNER, frame_owner),
		M(F_CODE_FILENAME, code_filename), M(F_CODE_NAME, code_name),
		M(F_CODE_QUALNAME, code_qualname), M(F_CODE_LINETABLE, code_linetable),
		M(F_CODE_FIRSTLINENO, code_firstlineno),
		M(F_CODE_CODE_ADAPTIVE, code_code_adaptive),
		M(F_BYTES_OB_SIZE, bytes_size), M(F_BYTES_OB_SVAL, bytes_sval),
		M(F_UNICODE_STATE, unicode_state), M(F_UNICODE_LENGTH, unicode_length),
		M(F_UNICODE_ASCII_SIZE, unicode_ascii_size),
#undef M
	};

	if (!at_py_offsets_published(version)) {
		*why = "this version publishes no debug offsets";
		return -1;
	}
	if (len < AT_PY_DEBUG_OFFSETS_SIZE) {
		*why = "debug offsets cut short";
		return -1;
	}
	if (memcmp(buf, AT_PY_DEBUG_COOKIE, 8) != 0) {
		*why = "no debug offsets cookie at the start of _PyRuntime";
		return -1;
	}
	if (MINOR(field(buf, F_VERSION)) != MINOR(version)) {
		*why = "debug offsets of another version than Py_Version";
		return -1;
	}
	if (field(buf, F_FREE_THREADED) != 0) {
		*why = "a free-threaded build";
		return -1;
	}
	memset(o, 0, sizeof(*o));
	o->version = MINOR(version);
	for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
		if (take(buf, map[k].i, (uint32_t *)((char *)o + map[k].at)) != 0) {
			*why = "a debug offset past any structure's size";
			return -1;
		}
	o->tstate_cframe = AT_PY_NONE;
	o->cframe_current_frame = AT_PY_NONE;
	o->frame_is_entry = AT_PY_NONE;
	/* not published: 3.13's frame keeps f_globals where 3.12's does (checked against
	 * pyenv's 3.13 DWARF by tests/unit/test_daemon_pyoffsets.c) */
	o->frame_globals = 0x18;
	o->frame_locals = 0x28;
	/* 3.13's PyCompactUnicodeObject is its PyASCIIObject and utf8_length, utf8. */
	o->unicode_compact_size = o->unicode_ascii_size + 16;
	if (!at_py_offsets_walkable(o)) {
		*why = "a frame field past the bytes the walk reads of a frame, or a pointer off a word's boundary";
		return -1;
	}
	return 0;
}

/* Whether a frame's pointer field at offset at lies in the bytes read, on a word's boundary
 * (the BPF walk reads it as one aligned word). */
static int word_field(uint32_t at)
{
	return at <= AT_PY_FRAME_BYTES - 8 && at % 8 == 0;
}

int at_py_offsets_walkable(const struct at_py_offsets *o)
{
	return word_field(o->frame_previous) && word_field(o->frame_code) &&
	       word_field(o->frame_instr) && word_field(o->frame_globals) &&
	       word_field(o->frame_locals) && o->frame_owner < AT_PY_FRAME_BYTES &&
	       (o->frame_is_entry == AT_PY_NONE || o->frame_is_entry < AT_PY_FRAME_BYTES);
}
