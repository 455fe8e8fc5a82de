/* event.c: tables of the event model. */
#include <stddef.h>
#include <string.h>

#include "event.h"

const uint8_t at_func_nargs[AT_FUNC_COUNT] = {
	[AT_MALLOC] = 1, [AT_CALLOC] = 2, [AT_REALLOC] = 2, [AT_FREE] = 1,
	[AT_MEMALIGN] = 2, [AT_POSIX_MEMALIGN] = 2, [AT_ALIGNED_ALLOC] = 2,
	[AT_VALLOC] = 1, [AT_JEMALLOC_STATS] = 0,
};

const char *const at_func_name[AT_FUNC_COUNT] = {
	[AT_MALLOC] = "malloc", [AT_CALLOC] = "calloc", [AT_REALLOC] = "realloc",
	[AT_FREE] = "free", [AT_MEMALIGN] = "memalign",
	[AT_POSIX_MEMALIGN] = "posix_memalign", [AT_ALIGNED_ALLOC] = "aligned_alloc",
	[AT_VALLOC] = "valloc", [AT_JEMALLOC_STATS] = "jemalloc_stats",
};

const uint8_t at_func_name_len[AT_FUNC_COUNT] = {
	6, 6, 7, 4, 8, 14, 13, 6, 14,
};

int at_func_lookup(const char *name, size_t len)
{
	for (int f = 0; f < AT_FUNC_COUNT; f++)
		if (len == at_func_name_len[f] && memcmp(name, at_func_name[f], len) == 0)
			return f;
	return -1;
}
