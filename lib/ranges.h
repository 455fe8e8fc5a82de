/* ranges.h: address ranges of processes (a trace's mappings), found by address in O(log n).
 *
 * Each process's ranges never overlap: a range put over earlier ones of its process replaces
 * every one it overlaps (the rule of mapping records, lib/stack.h). The ranges are kept in a
 * treap keyed by (pid, start), so a put and a lookup cost O(log n) expected whatever the order
 * they come in, and a put that replaces k ranges O((k + 1) log n).
 *
 * Not thread-safe. */
#ifndef ALLOCTAP_RANGES_H
#define ALLOCTAP_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* One range [start, end) of process pid, with what the caller keeps for it. */
struct at_range {
	uint32_t pid;
	uint64_t start, end, offset;
	void *value;
};

struct at_ranges;

/* An empty set; NULL with errno (ENOMEM). Released with at_ranges_free (NULL ignored). */
struct at_ranges *at_ranges_new(void);
void at_ranges_free(struct at_ranges *t);

/* Adds a copy of r (r->end > r->start), removing first every range of r->pid that overlaps
 * it. 0, or -1 with errno: EINVAL for an empty range, ENOMEM (the set then unchanged). */
int at_ranges_put(struct at_ranges *t, const struct at_range *r);

/* The range of pid holding addr, or NULL. Valid until the next at_ranges_put. */
const struct at_range *at_ranges_find(const struct at_ranges *t, uint32_t pid, uint64_t addr);

/* How many ranges the set holds. */
size_t at_ranges_count(const struct at_ranges *t);

#endif
