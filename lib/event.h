/* event.h: the event model every alloctap tool shares.
 *
 * One struct describes any call of the malloc family, raw (pointers are addresses) or munged
 * (pointers are slot numbers). Readers fill it, writers print it; the daemon builds it from
 * ring-buffer records. */
#ifndef ALLOCTAP_EVENT_H
#define ALLOCTAP_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The malloc family, written once: the names, lengths, argument counts and probes of every
 * table are generated from this list. Each entry is one of
 *   F(CODE, name, nargs, regs)  a function of the logalloc format that the daemon probes;
 *   M(CODE, name, nargs, 0)     a function of the format that no probe sees (jemalloc_stats,
 *                               a marker the munge writes);
 *   P(CODE, name, regs)         a function the daemon probes that the format lacks: it is
 *                               written as one the format has (pvalloc as valloc,
 *                               reallocarray as realloc);
 * nargs: its argument count in a log; regs: how many argument registers its entry probe reads.
 * The F and M entries in order are enum at_func (the binary format's codes: never reorder
 * them); the F and P entries in order are enum at_probe_func of bpf/alloctap.h, and the order
 * in which aliases are named (glibc's memalign is aligned_alloc: "memalign" wins). */
#define AT_FUNCTIONS(F, M, P)                                                                  \
	F(MALLOC, malloc, 1, 1)                                                                \
	F(CALLOC, calloc, 2, 2)                                                                \
	F(REALLOC, realloc, 2, 2)                                                              \
	F(FREE, free, 1, 1)                                                                    \
	F(MEMALIGN, memalign, 2, 2)                                                            \
	F(POSIX_MEMALIGN, posix_memalign, 2, 3)                                                \
	F(ALIGNED_ALLOC, aligned_alloc, 2, 2)                                                  \
	F(VALLOC, valloc, 1, 1)                                                                \
	M(JEMALLOC_STATS, jemalloc_stats, 0, 0)                                                \
	P(PVALLOC, pvalloc, 1)                                                                 \
	P(REALLOCARRAY, reallocarray, 3)

/* Expansions that drop the entries of a kind, as arguments of AT_FUNCTIONS. */
#define AT_FUNC_SKIP(code, name, ...)

/* The functions of the logalloc format (also the binary format's codes). */
#define AT_FUNC_ENUM(code, name, nargs, regs) AT_##code,
enum at_func {
	AT_FUNCTIONS(AT_FUNC_ENUM, AT_FUNC_ENUM, AT_FUNC_SKIP)
	AT_FUNC_COUNT
};

/* The binary format's codes (doc/FORMAT.md) do not move. */
_Static_assert(AT_MALLOC == 0 && AT_CALLOC == 1 && AT_REALLOC == 2 && AT_FREE == 3 &&
		       AT_MEMALIGN == 4 && AT_POSIX_MEMALIGN == 5 && AT_ALIGNED_ALLOC == 6 &&
		       AT_VALLOC == 7 && AT_JEMALLOC_STATS == 8 && AT_FUNC_COUNT == 9,
	       "enum at_func is the binary format's function codes");

/* Bytes of at_func_name[f]: the longest name, its NUL and padding, so that a writer can copy
 * any name with one fixed-size memcpy. */
#define AT_FUNC_NAME_SIZE 16

/* One call. arg[] holds the arguments in the order the format prints them; for free and
 * realloc arg[0] is the pointer (an address in a raw log, a slot number in a munged one).
 * result is the returned pointer (address or slot); has_result says whether the line had one
 * (free and jemalloc_stats never do). time_ns and stack exist only in binary traces of
 * version 2 (doc/FORMAT.md); text never prints them. */
struct at_event {
	uint32_t pid;
	uint32_t tid;
	uint8_t func;       /* enum at_func */
	uint8_t has_result;
	uint64_t arg[2];
	uint64_t result;
	uint64_t time_ns;   /* CLOCK_MONOTONIC when recorded; 0: unknown (text logs, v1 traces) */
	uint32_t stack;     /* id of its call stack in the trace (lib/stack.h); 0: none */
};

/* Number of arguments the format requires for each function. */
extern const uint8_t at_func_nargs[AT_FUNC_COUNT];
/* Names as printed in logs ("malloc", ..., "jemalloc_stats"), NUL-padded. */
extern const char at_func_name[AT_FUNC_COUNT][AT_FUNC_NAME_SIZE];
/* strlen of at_func_name[f]. */
extern const uint8_t at_func_name_len[AT_FUNC_COUNT];

/* Looks up a function name of len bytes; returns its enum at_func, or -1 if unknown. Inline:
 * the munge looks up one name per line. */
static inline int at_func_lookup(const char *name, size_t len)
{
	for (int f = 0; f < AT_FUNC_COUNT; f++)
		if (len == at_func_name_len[f] && name[0] == at_func_name[f][0] &&
		    memcmp(name, at_func_name[f], len) == 0)
			return f;
	return -1;
}

/* Whether arg[0] of this function is a pointer (free, realloc). */
static inline int at_func_takes_pointer(unsigned f)
{
	return f == AT_FREE || f == AT_REALLOC;
}

/* Whether this function returns a pointer (every function but free and jemalloc_stats). */
static inline int at_func_returns_pointer(unsigned f)
{
	return f != AT_FREE && f != AT_JEMALLOC_STATS;
}

#endif
