/* event.c: the tables of the event model, generated from AT_FUNCTIONS. */
#include "event.h"

#define NARGS(code, name, symbol, kind, nargs, ...) [AT_##code] = nargs,
const uint8_t at_func_nargs[AT_FUNC_COUNT] = { AT_FUNCTIONS(NARGS, NARGS, AT_FUNC_SKIP) };

#define NAME(code, name, ...) [AT_##code] = #name,
const char at_func_name[AT_FUNC_COUNT][AT_FUNC_NAME_SIZE] = {
	AT_FUNCTIONS(NAME, NAME, AT_FUNC_SKIP)
};

#define NAME_FITS(code, name, ...)                                                             \
	_Static_assert(sizeof(#name) <= AT_FUNC_NAME_SIZE, "at_func_name holds " #name);
AT_FUNCTIONS(NAME_FITS, NAME_FITS, AT_FUNC_SKIP)

#define NAME_LEN(code, name, ...) [AT_##code] = sizeof(#name) - 1,
const uint8_t at_func_name_len[AT_FUNC_COUNT] = {
	AT_FUNCTIONS(NAME_LEN, NAME_LEN, AT_FUNC_SKIP)
};
