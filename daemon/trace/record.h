/* record.h: ring records to logalloc events. */
#ifndef ALLOCTAP_RECORD_H
#define ALLOCTAP_RECORD_H

#include <linux/types.h>
#include <stddef.h> /* lib/event.h needs size_t */
#include <stdint.h>

#include "alloctap.h"
#include "event.h"

/* Fills ev from rec, with its time when times (else 0). Functions outside the format become the call that reproduces them:
 * pvalloc(n) is valloc(n rounded up to pagesize) (n unchanged if that overflows);
 * reallocarray(p,n,m) is realloc(p,n*m), with n*m saturated to 2^64-1 when it overflowed (a
 * request no allocator satisfies, so the replayed call fails as the real one did). */
void at_record_to_event(const struct at_record *rec, uint64_t pagesize, int times,
			struct at_event *ev);

#endif
