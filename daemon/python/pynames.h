/* pynames.h: the names of a process's Python frame values, each code object read once.
 *
 * The daemon names a Python frame (pysplice.h's value: a code object and an instruction
 * offset) by the code object's qualified name, its file and the offset's line, read from the
 * process while it lives. A code object is read whole once (names, first line, line table) and
 * kept; a later value of the same address checks the object's header again (its name, file,
 * line-table pointers and first line, one read), so that a code object freed and another
 * allocated at its address is read anew, not named after the one before. */
#ifndef ALLOCTAP_PYNAMES_H
#define ALLOCTAP_PYNAMES_H

#include <stdint.h>

#include "pyframes.h"

struct at_py_names;

/* An empty cache for one process; NULL when out of memory. The caller frees it. */
struct at_py_names *at_py_names_new(void);
void at_py_names_free(struct at_py_names *n);

/* What names one value: the strings are the cache's, valid until the cache is freed. */
struct at_py_name {
	const char *function;       /* the qualified name (co_qualname) */
	const char *file;           /* co_filename */
	int line;                   /* the offset's line; 0 when it has none or is unknown */
};

/* Names value v of process p, a frame's whose globals fold to module (0: not known): 0, or -1
 * when its code object cannot be read (gone, or no code object of this interpreter). A code
 * object read for a frame of the same module is taken as the one at its address still, and
 * named without reading the process: a module's code runs once and is freed at the end of its
 * import, often before its later lines are named, and another code object at its address is
 * all but never of the same module (decision 18). */
int at_py_names_get(struct at_py_names *n, const struct at_py_proc *p, uint64_t v,
		    uint32_t module, struct at_py_name *out);

/* Code objects read whole since the cache was made (for the tests and the summary). */
uint64_t at_py_names_reads(const struct at_py_names *n);

#endif
