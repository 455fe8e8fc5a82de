/* formats.h: the formats of a trace, by name, in one list: the names the programs' options
 * take (alloctapd -f/--format, alloctap-munge --format) and the values that lib/sink.h's
 * writers (enum at_sink_format) and lib/source.h's readers (enum at_source_kind) are chosen
 * by. A new format is one row here, then its writer in sink.c's table and its reader in
 * source.c's. */
#ifndef ALLOCTAP_FORMATS_H
#define ALLOCTAP_FORMATS_H

#include <stdio.h>
#include <string.h>

/* X(ID, name, whole, records): AT_FORMAT_ID, called name on the command line; whole: a file
 * of it is written whole (truncated when opened, never appended to: one compressed stream);
 * records: it holds stack, mapping, process and RSS records besides the events. The first
 * row is the default. */
#define AT_FORMATS(X)           \
	X(TEXT, "text", 0, 0)     \
	X(BINARY, "binary", 1, 1)

#define AT_FORMAT_ENUM(id, name, whole, records) AT_FORMAT_##id,
enum at_format { AT_FORMATS(AT_FORMAT_ENUM) AT_FORMAT_COUNT };
#undef AT_FORMAT_ENUM

/* The name of format f, an enum at_format value ("text", "binary"). */
static inline const char *at_format_name(unsigned f)
{
#define AT_FORMAT_NAME(id, name, whole, records) name,
	static const char *const names[AT_FORMAT_COUNT] = { AT_FORMATS(AT_FORMAT_NAME) };
#undef AT_FORMAT_NAME
	return names[f];
}

/* Whether a file of format f (an enum at_format value) is written whole (truncated when opened, not appended to). */
static inline int at_format_whole(unsigned f)
{
#define AT_FORMAT_WHOLE(id, name, whole, records) whole,
	static const unsigned char v[AT_FORMAT_COUNT] = { AT_FORMATS(AT_FORMAT_WHOLE) };
#undef AT_FORMAT_WHOLE
	return v[f];
}

/* Whether format f holds stack, mapping, process and RSS records. */
static inline int at_format_records(unsigned f)
{
#define AT_FORMAT_RECORDS(id, name, whole, records) records,
	static const unsigned char v[AT_FORMAT_COUNT] = { AT_FORMATS(AT_FORMAT_RECORDS) };
#undef AT_FORMAT_RECORDS
	return v[f];
}

/* The format of a name: 0 (*f set), or -1 for none. */
static inline int at_format_parse(const char *name, enum at_format *f)
{
	for (int i = 0; i < AT_FORMAT_COUNT; i++)
		if (strcmp(name, at_format_name((unsigned)i)) == 0) {
			*f = (enum at_format)i;
			return 0;
		}
	return -1;
}

/* The names for a usage message: "text or binary" (static storage, built once). */
static inline const char *at_format_list(void)
{
	static char list[128];

	if (list[0])
		return list;
	for (int i = 0; i < AT_FORMAT_COUNT; i++) {
		size_t n = strlen(list);
		snprintf(list + n, sizeof(list) - n, "%s%s",
			 i == 0 ? "" : i + 1 == AT_FORMAT_COUNT ? " or " : ", ",
			 at_format_name((unsigned)i));
	}
	return list;
}

#endif
