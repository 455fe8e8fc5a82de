/* pylinetable.h: the line of an instruction, from CPython's location table (co_linetable of
 * 3.11 and later; CPython's Objects/locations.md).
 *
 * The table is bytes read from a process the daemon does not trust: every read is bounded,
 * and a malformed table gives "no line", never a crash (tests/fuzz/fuzz_pylinetable.c). */
#ifndef ALLOCTAP_PYLINETABLE_H
#define ALLOCTAP_PYLINETABLE_H

#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at offset code units into a code object whose location table is
 * table[0..len) and whose first line is firstlineno: what CPython's PyCode_Addr2Line gives for
 * byte offset 2 * offset. -1 when that instruction has no location, lies past the table's
 * last entry, or the table is malformed before it. */
int at_py_line(const uint8_t *table, size_t len, int firstlineno, uint32_t offset);

#endif
