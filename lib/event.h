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

/* The malloc family (AT_FUNCTIONS), its codes (enum at_func, enum at_probe_func) and kinds
 * (enum at_func_kind, at_func_kind()) are lib/functions.h's, which the BPF program shares. */
#include "functions.h"

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

/* Whether arg[0] of this function is a pointer: it frees or reallocates (free, realloc). */
static inline int at_func_takes_pointer(unsigned f)
{
	return at_func_frees(f) || at_func_reallocates(f);
}

/* Whether this function returns a pointer: every kind but a free and a marker (free and
 * jemalloc_stats), a code out of range included. */
static inline int at_func_returns_pointer(unsigned f)
{
	enum at_func_kind k = at_func_kind(f);

	return k != AT_KIND_FREE && k != AT_KIND_MARKER;
}

#endif
