/* frames.h: the kinds of a stack's frames, written once, for every tool and for the BPF
 * program.
 *
 * A frame's kind says what its value is and how a reader names it. enum at_frame_kind, each
 * kind's name, how it is named and the format version that defines it are all generated from
 * AT_FRAME_KINDS below. This header holds macros, enums and inline functions only, with no
 * include, so that clang's BPF target and cc both compile it (bpf/alloctap.h and lib/stack.h
 * include it). Adding the frames of another runtime (an interpreter's) is its walker, one line
 * of AT_FRAME_KINDS, and its tests: the BPF stack, the daemon's copies, the trace's stack
 * record (its KINDS flag), the stack hash and the naming of a frame take any kind listed here
 * (doc/FORMAT.md 5.6, 5.10). */
#ifndef ALLOCTAP_FRAMES_H
#define ALLOCTAP_FRAMES_H

/* Each entry is X(CODE, value, name, naming, since):
 *   value   the kind's byte in a stack record (0..255; never renumber one);
 *   name    its word in messages and listings;
 *   naming  how a reader names such a frame, enum at_frame_naming without its AT_NAMED_
 *           prefix: ADDRESS, a pc of the process, through its mappings and the objects'
 *           symbols; NAMES, a value the trace's NAMES records give a name to;
 *   since   the minor version of 2.x that defines the kind: writers write it and readers take
 *           it in frames of that version or later, and refuse it before.
 * PYTHON is a CPython frame: its value packs a code object's address and an instruction offset
 * (daemon/python/pysplice.h), its name the code object's qualified name, file and line.
 * TEST is reserved for the tests of this machinery: no walker takes it, and no version of the
 * format defines it (since 255 stands for none), so the tools refuse it in every trace they
 * write or read; the tests tell their writers and readers to take it as if their frames were of
 * version 2.255 (at_atz_options.test_kinds, at_atz_reader_test_kinds). */
#define AT_FRAME_KINDS(X)                                                                      \
	X(NATIVE, 0, native, ADDRESS, 0)                                                       \
	X(PYTHON, 1, python, NAMES, 5)                                                         \
	X(TEST, 254, test, NAMES, 255)

/* How a frame of a kind is named. */
enum at_frame_naming {
	AT_NAMED_NONE = 0, /* no kind: a value the table lacks */
	AT_NAMED_ADDRESS,  /* by address, through the process's mappings (doc/FORMAT.md 5.7) */
	AT_NAMED_NAMES,    /* by the NAMES records of its process (doc/FORMAT.md 5.10) */
};

#define AT_FRAME_KIND_ENUM(code, value, ...) AT_FRAME_##code = value,
enum at_frame_kind {
	AT_FRAME_KINDS(AT_FRAME_KIND_ENUM)
};

/* The native kind is 0: a stack whose kinds were never set is native, and its hash and its
 * record are those of a stack without kinds. */
_Static_assert(AT_FRAME_NATIVE == 0, "a frame of kind 0 is native");

/* How a frame of kind k is named; AT_NAMED_NONE for a value the table lacks. A chain of
 * constant comparisons, which the compiler folds at each use. */
#define AT_FRAME_NAMING_OF(code, value, name, naming, since)                                   \
	k == AT_FRAME_##code ? AT_NAMED_##naming:
static inline enum at_frame_naming at_frame_naming(unsigned k)
{
	return AT_FRAME_KINDS(AT_FRAME_NAMING_OF) AT_NAMED_NONE;
}

/* The minor version of 2.x that defines kind k; 256 (none) for a value the table lacks. */
#define AT_FRAME_SINCE_OF(code, value, name, naming, since) k == AT_FRAME_##code ? since:
static inline unsigned at_frame_since(unsigned k)
{
	return AT_FRAME_KINDS(AT_FRAME_SINCE_OF) 256u;
}

/* Whether a 2.minor frame may hold frames of kind k. */
static inline int at_frame_kind_known(unsigned k, unsigned minor)
{
	return at_frame_since(k) <= minor;
}

/* The word of kind k ("native"); NULL for a value the table lacks. */
#define AT_FRAME_NAME_OF(code, value, name, naming, since) k == AT_FRAME_##code ? #name:
static inline const char *at_frame_kind_name(unsigned k)
{
	return AT_FRAME_KINDS(AT_FRAME_NAME_OF) (const char *)0;
}

#endif
