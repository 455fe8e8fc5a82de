/* folded.h: distinct stacks and their total weights, written in the folded format.
 *
 * Folded format (Brendan Gregg's stackcollapse output, read by flamegraph.pl, inferno,
 * speedscope and Pyroscope): one line per distinct stack, its frames root first separated by
 * ';', then a space and the weight. The table grows with the distinct stacks only. */
#ifndef ALLOCTAP_REPORT_FOLDED_H
#define ALLOCTAP_REPORT_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rep_folded;

/* An empty table; NULL with errno set. */
struct rep_folded *rep_folded_new(void);
void rep_folded_free(struct rep_folded *f);

/* The entry of the stack text[0..len) (copied when new): its index, or -1 with errno set. */
int64_t rep_folded_intern(struct rep_folded *f, const char *text, size_t len);

/* Adds weight to an entry; a total that would pass UINT64_MAX stays there. */
void rep_folded_add(struct rep_folded *f, int64_t entry, uint64_t weight);

/* The text of an entry (len bytes, NUL-terminated); valid until the table changes. */
const char *rep_folded_text(const struct rep_folded *f, int64_t entry, size_t *len);
/* Sets an entry's weight. */
void rep_folded_set(struct rep_folded *f, int64_t entry, uint64_t weight);
/* Number of entries (distinct stacks). */
size_t rep_folded_count(const struct rep_folded *f);

/* Writes "STACK WEIGHT\n" for every entry of non-zero weight, sorted by the stack text
 * (bytewise): 0, or -1 with errno set when a write fails. The entries are reordered: indexes
 * from rep_folded_intern are not valid after. */
int rep_folded_write(struct rep_folded *f, FILE *out);

#endif
