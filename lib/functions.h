/* functions.h: the malloc family, written once, for every tool and for the BPF program.
 *
 * The codes of the logalloc format (enum at_func), the codes of the probed functions (enum
 * at_probe_func, what the BPF program writes into its records), each function's kind and its
 * ELF symbol are all generated from AT_FUNCTIONS below. This header holds macros, enums and
 * inline functions only, with no include, so that clang's BPF target and cc both compile it
 * (bpf/alloctap.h and lib/event.h include it). Adding a function of the family is one line of
 * AT_FUNCTIONS; what the tools do with it follows from its kind. Functions that another object
 * supplies (C++'s operator new and delete) are a family of their own: a line of AT_FAMILIES,
 * and their lines with that family. */
#ifndef ALLOCTAP_FUNCTIONS_H
#define ALLOCTAP_FUNCTIONS_H

/* Each entry is one of
 *   F(CODE, word, symbol, kind, nargs, regs, family)  a function of the logalloc format that
 *                                                     the daemon probes;
 *   M(CODE, word, , kind, nargs, 0, C)                a function of the format that no probe
 *                                                     sees (jemalloc_stats, a marker the munge
 *                                                     writes);
 *   P(CODE, word, symbol, kind, nargs, regs, family)  a function the daemon probes that the
 *                                                     format lacks: it is written as the
 *                                                     format's function word (pvalloc as
 *                                                     valloc, reallocarray as realloc);
 * word: the function's name in a log; symbol: the ELF symbol the daemon probes; kind: enum
 * at_func_kind without its AT_KIND_ prefix; nargs: its argument count in a log (for a P entry,
 * word's); regs: how many argument registers its entry probe reads; family: its family of entry
 * points (AT_FAMILIES below, without the AT_FAMILY_ prefix). The F and M entries in order
 * are enum at_func (the binary format's codes: never reorder them); the F and P entries in order
 * are enum at_probe_func, and the order in which aliases are named (glibc's memalign is
 * aligned_alloc: "memalign" wins). */
#define AT_FUNCTIONS(F, M, P)                                                                  \
	F(MALLOC, malloc, malloc, ALLOC, 1, 1, C)                                              \
	F(CALLOC, calloc, calloc, ALLOC, 2, 2, C)                                              \
	F(REALLOC, realloc, realloc, REALLOC, 2, 2, C)                                         \
	F(FREE, free, free, FREE, 1, 1, C)                                                     \
	F(MEMALIGN, memalign, memalign, ALLOC, 2, 2, C)                                        \
	F(POSIX_MEMALIGN, posix_memalign, posix_memalign, OUT_PARAM, 2, 3, C)                  \
	F(ALIGNED_ALLOC, aligned_alloc, aligned_alloc, ALLOC, 2, 2, C)                         \
	F(VALLOC, valloc, valloc, ALLOC, 1, 1, C)                                              \
	M(JEMALLOC_STATS, jemalloc_stats, , MARKER, 0, 0, C)                                   \
	P(PVALLOC, valloc, pvalloc, ALLOC, 1, 1, C)                                            \
	P(REALLOCARRAY, realloc, reallocarray, REALLOC, 2, 3, C)

/* Expansions that drop the entries of a kind, as arguments of AT_FUNCTIONS. */
#define AT_FUNC_SKIP(code, ...)

/* What a function does with blocks: the one thing the tools decide a function's handling by
 * (which probes it gets, whether its record has a result, whether it takes or returns a block,
 * whether the BPF program numbers it twice). */
enum at_func_kind {
	AT_KIND_NONE = 0, /* no function of the family: a code out of range */
	AT_KIND_ALLOC,    /* returns a new block (malloc, calloc, memalign, valloc, ...) */
	AT_KIND_OUT_PARAM, /* stores a new block through its first argument and returns an error
			    * number (posix_memalign) */
	AT_KIND_REALLOC,  /* takes a block and returns its successor (realloc, reallocarray) */
	AT_KIND_FREE,     /* takes a block and returns nothing (free) */
	AT_KIND_MARKER,   /* a mark in a log, no call of the allocator (jemalloc_stats) */
};

/* The families of entry points: the functions one object supplies to a process, each family
 * from an object of its own (the C library's malloc family; later, say, libstdc++'s operator
 * new and delete). A target holds one allocator per family (bpf/alloctap.h's AT_TARGET_IN), and
 * an object is probed for one family, whose first function it must define. Each entry is
 * X(FAMILY, first): first, the CODE of AT_FUNCTIONS that every object of the family defines. */
#define AT_FAMILIES(X) X(C, MALLOC)

#define AT_FAMILY_ENUM(family, first) AT_FAMILY_##family,
enum at_family {
	AT_FAMILIES(AT_FAMILY_ENUM)
	AT_FAMILY_COUNT
};

/* The functions of the logalloc format (also the binary format's codes). */
#define AT_FUNC_ENUM(code, ...) AT_##code,
enum at_func {
	AT_FUNCTIONS(AT_FUNC_ENUM, AT_FUNC_ENUM, AT_FUNC_SKIP)
	AT_FUNC_COUNT
};

/* The probed functions: the codes of the BPF program's records and cookies. A function of the
 * format keeps its enum at_func code (checked below); the daemon writes the others as calls the
 * format has (daemon/trace/convert.c, doc/LOGALLOC.md). */
#define AT_PROBE_FUNC_ENUM(code, ...) AT_PROBE_##code,
enum at_probe_func {
	AT_FUNCTIONS(AT_PROBE_FUNC_ENUM, AT_FUNC_SKIP, AT_PROBE_FUNC_ENUM)
	AT_PROBE_FUNC_COUNT
};

/* The binary format's codes (doc/FORMAT.md) do not move. */
_Static_assert(AT_MALLOC == 0 && AT_CALLOC == 1 && AT_REALLOC == 2 && AT_FREE == 3 &&
		       AT_MEMALIGN == 4 && AT_POSIX_MEMALIGN == 5 && AT_ALIGNED_ALLOC == 6 &&
		       AT_VALLOC == 7 && AT_JEMALLOC_STATS == 8 && AT_FUNC_COUNT == 9,
	       "enum at_func is the binary format's function codes");
/* A record of a function of the format carries its enum at_func code unchanged. */
#define AT_FUNC_SAME_CODE(code, word, ...)                                                     \
	_Static_assert((int)AT_##code == (int)AT_PROBE_##code, #word " has one code");
AT_FUNCTIONS(AT_FUNC_SAME_CODE, AT_FUNC_SKIP, AT_FUNC_SKIP)
/* The targets map keeps one bit per probed function in 16 (bpf/alloctap.h's AT_TARGET). */
_Static_assert(AT_PROBE_FUNC_COUNT <= 16, "a probed function has a bit of AT_TARGET");

/* Every probed function belongs to a family of AT_FAMILIES. */
#define AT_FUNC_FAMILY_OK(code, word, symbol, kind, nargs, regs, family)                       \
	_Static_assert(AT_FAMILY_##family < AT_FAMILY_COUNT, #word " has a family");
AT_FUNCTIONS(AT_FUNC_FAMILY_OK, AT_FUNC_SKIP, AT_FUNC_FAMILY_OK)

/* The kind of a function of the format (enum at_func); AT_KIND_NONE for a code out of range.
 * A chain of constant comparisons, which the compiler folds at each use. */
#define AT_FUNC_KIND_OF(code, word, symbol, kind, ...) f == AT_##code ? AT_KIND_##kind:
static inline enum at_func_kind at_func_kind(unsigned f)
{
	return AT_FUNCTIONS(AT_FUNC_KIND_OF, AT_FUNC_KIND_OF, AT_FUNC_SKIP) AT_KIND_NONE;
}

/* The kind of a probed function (enum at_probe_func); AT_KIND_NONE for a code out of range. */
#define AT_PROBE_KIND_OF(code, word, symbol, kind, ...) f == AT_PROBE_##code ? AT_KIND_##kind:
static inline enum at_func_kind at_probe_kind(unsigned f)
{
	return AT_FUNCTIONS(AT_PROBE_KIND_OF, AT_FUNC_SKIP, AT_PROBE_KIND_OF) AT_KIND_NONE;
}

/* The family of a probed function (enum at_probe_func); AT_FAMILY_COUNT for a code out of
 * range. */
#define AT_PROBE_FAMILY_OF(code, word, symbol, kind, nargs, regs, family)                      \
	f == AT_PROBE_##code ? AT_FAMILY_##family:
static inline enum at_family at_probe_family(unsigned f)
{
	return AT_FUNCTIONS(AT_PROBE_FAMILY_OF, AT_FUNC_SKIP, AT_PROBE_FAMILY_OF) AT_FAMILY_COUNT;
}

/* The first function of family fam (enum at_probe_func), which every object probed for the
 * family defines; AT_PROBE_FUNC_COUNT for a family out of range. */
#define AT_FAMILY_FIRST_OF(family, first) fam == AT_FAMILY_##family ? AT_PROBE_##first:
static inline enum at_probe_func at_family_first(unsigned fam)
{
	return AT_FAMILIES(AT_FAMILY_FIRST_OF) AT_PROBE_FUNC_COUNT;
}

/* Whether function f of the format (enum at_func) frees a block and returns nothing. */
static inline int at_func_frees(unsigned f)
{
	return at_func_kind(f) == AT_KIND_FREE;
}

/* Whether function f of the format gives a new block, returned or stored (every kind but a
 * free and a marker); 0 for a code out of range. */
static inline int at_func_allocates(unsigned f)
{
	enum at_func_kind k = at_func_kind(f);

	return k == AT_KIND_ALLOC || k == AT_KIND_OUT_PARAM || k == AT_KIND_REALLOC;
}

/* Whether function f of the format takes a block and returns its successor (realloc). */
static inline int at_func_reallocates(unsigned f)
{
	return at_func_kind(f) == AT_KIND_REALLOC;
}

/* Whether probed function f (enum at_probe_func) frees a block and returns nothing: it gets
 * no return probe and its record no result. */
static inline int at_probe_frees(unsigned f)
{
	return at_probe_kind(f) == AT_KIND_FREE;
}

/* Whether probed function f takes a block and returns its successor: it is timed at its
 * entry and at its return (struct at_record's time_entry and time). */
static inline int at_probe_reallocates(unsigned f)
{
	return at_probe_kind(f) == AT_KIND_REALLOC;
}

#endif
