/* unwind_tables.c: how long the daemon takes to build the unwind tables of objects, and whether
 * its two builders agree: at_unwind_table_build (each FDE's program run once, eh_frame.c) and
 * at_unwind_table_build_libdw (libdw's CFI queried at every row).
 *
 * Usage: unwind_tables [-n] OBJECT...
 * For each object prints its rows, pages, entries, rules, unreadable FDEs and both build times
 * in ms (one thread, cold: the first build of the object in this process), then "same" or
 * "DIFFERENT" (what differs). -n: the eh_frame.c build alone (no libdw). Exits 1 if the tables
 * of any object differ or one cannot be built, 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/stacks/unwind_table.h"

/* Names what differs between a and b in *what; 0 if nothing (build times aside). */
static int tables_differ(const struct at_unwind_table *a, const struct at_unwind_table *b,
			 const char **what)
{
	struct at_unwind_stats x = a->stats, y = b->stats;

	x.build_ns = y.build_ns = 0;
	if (memcmp(&x, &y, sizeof(x)) != 0)
		*what = "stats";
	else if (a->first_page != b->first_page || a->page_count != b->page_count ||
		 a->entry_count != b->entry_count || a->rule_count != b->rule_count)
		*what = "sizes";
	else if (memcmp(a->pages, b->pages, a->page_count * sizeof(*a->pages)) != 0)
		*what = "pages";
	else if (memcmp(a->entries, b->entries, a->entry_count * sizeof(*a->entries)) != 0)
		*what = "entries";
	else if (memcmp(a->rules, b->rules, a->rule_count * sizeof(*a->rules)) != 0)
		*what = "rules";
	else
		return 0;
	return 1;
}

/* Builds path's table one way or both, prints the line. 0, or 1 on a failure or a difference. */
static int one(const char *path, int with_libdw)
{
	struct at_unwind_table t, l;
	const char *why = NULL, *what = NULL;

	if (at_unwind_table_build(path, &t, &why) < 0) {
		fprintf(stderr, "unwind_tables: %s: %s\n", path, why);
		return 1;
	}
	printf("%s: %u rows (%u unsupported), %u pages, %u entries, %u rules, %u FDEs "
	       "(%u unreadable); %.1f ms",
	       path, t.stats.rows, t.stats.unsupported_rows, t.page_count, t.entry_count,
	       t.rule_count, t.stats.fdes, t.stats.unreadable_fdes, t.stats.build_ns / 1e6);
	int rc = 0;
	if (with_libdw) {
		if (at_unwind_table_build_libdw(path, &l, &why) < 0) {
			printf("; libdw: %s\n", why);
			at_unwind_table_free(&t);
			return 1;
		}
		rc = tables_differ(&t, &l, &what);
		printf("; libdw %.1f ms; %s%s", l.stats.build_ns / 1e6, rc ? "DIFFERENT: " : "same",
		       rc ? what : "");
		at_unwind_table_free(&l);
	}
	printf("\n");
	at_unwind_table_free(&t);
	return rc;
}

int main(int argc, char **argv)
{
	int with_libdw = 1, i = 1, rc = 0;

	if (argc > 1 && strcmp(argv[1], "-n") == 0) {
		with_libdw = 0;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: unwind_tables [-n] OBJECT...\n");
		return 2;
	}
	for (; i < argc; i++)
		rc |= one(argv[i], with_libdw);
	return rc;
}
