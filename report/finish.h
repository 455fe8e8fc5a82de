/* finish.h: the end of a report's output. */
#ifndef ALLOCTAP_REPORT_FINISH_H
#define ALLOCTAP_REPORT_FINISH_H

#include <errno.h>
#include <stdio.h>

/* Flushes out: 0, or -1 with errno (EIO when the stream failed without one) when a write
 * failed, now or before. */
static inline int rep_finish_output(FILE *out)
{
	if (fflush(out) != 0 || ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

#endif
