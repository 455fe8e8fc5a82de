/* event.h: the event model every alloctap tool shares.
 *
 * One struct describes any call of the malloc family, raw (pointers are addresses) or munged
 * (pointers are slot numbers). Readers fill it, writers print it; the daemon builds it from
 * ring-buffer records. */
#ifndef ALLOCTAP_EVENT_H
#define ALLOCTAP_EVENT_H

#include <stddef.h>
#include <stdint.h>

/* The functions of the logalloc format, in a fixed order (also the binary format's codes). */
enum at_func {
	AT_MALLOC = 0,
	AT_CALLOC,
	AT_REALLOC,
	AT_FREE,
	AT_MEMALIGN,
	AT_POSIX_MEMALIGN,
	AT_ALIGNED_ALLOC,
	AT_VALLOC,
	AT_JEMALLOC_STATS,
	AT_FUNC_COUNT
};

/* One call. arg[] holds the arguments in the order the format prints them; for free and
 * realloc arg[0] is the pointer (an address in a raw log, a slot number in a munged one).
 * result is the returned pointer (address or slot); has_result says whether the line had one
 * (free and jemalloc_stats never do). */
struct at_event {
	uint32_t pid;
	uint32_t tid;
	uint8_t func;       /* enum at_func */
	uint8_t has_result;
	uint64_t arg[2];
	uint64_t result;
};

/* Number of arguments the format requires for each function. */
extern const uint8_t at_func_nargs[AT_FUNC_COUNT];
/* Names as printed in logs ("malloc", ..., "jemalloc_stats"). */
extern const char *const at_func_name[AT_FUNC_COUNT];
/* strlen of at_func_name[f]. */
extern const uint8_t at_func_name_len[AT_FUNC_COUNT];

/* Looks up a function name of len bytes; returns its enum at_func, or -1 if unknown. */
int at_func_lookup(const char *name, size_t len);

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
