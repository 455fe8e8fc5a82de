/* probe_site.h: where in a file an entry probe goes. */
#ifndef ALLOCTAP_PROBE_SITE_H
#define ALLOCTAP_PROBE_SITE_H

#include <stdint.h>

#include "elfsym.h"

/* The file offset at which the entry probe of function name goes (today: its first
 * instruction; issue 6 moves it to a cheaper one). Returns 1 with *offset set, 0 if the file
 * does not define the function, -1 if its address is in no executable segment. */
int at_probe_entry_offset(struct at_elf *e, const char *name, uint64_t *offset);

/* The file offset at which the return probe of function name goes: always its first
 * instruction (a uretprobe hijacks the return address there). Same returns as above. */
int at_probe_return_offset(struct at_elf *e, const char *name, uint64_t *offset);

#endif
