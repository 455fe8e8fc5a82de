/* replay_direct: the calls of a munged log made by a compiled loop, to measure what
 * alloctap-replay's reading and parsing add to the allocator's own cost.
 *
 * Usage: replay_direct FILE
 * Decodes the first process's lines of FILE into an mmapped array first (untimed), then times
 * one loop that makes the same malloc-family calls through a slot array, with the replay's
 * semantics but without text, accounting or checks. Prints one line:
 *   direct ops=N ns=N ns_per_op=X.X
 * Run it with LD_PRELOAD to measure another allocator. Exit status 0, 1 on an unreadable or
 * malformed file, 2 on a usage error. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "linereader.h"
#include "prim.h"
#include "text.h"

struct call {
	uint8_t func;
	uint64_t a0, a1, result;
};

/* An mmapped array that grows by mremap, so the decoding leaves the heap alone. */
struct calls {
	struct call *c;
	size_t n, cap;
};

static int calls_push(struct calls *v, const struct at_event *ev)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 1 << 16;
		void *p = v->c ? at_remap(v->c, v->cap * sizeof(*v->c), cap * sizeof(*v->c))
			       : at_map(cap * sizeof(*v->c), 0);
		if (!p)
			return -1;
		v->c = p;
		v->cap = cap;
	}
	v->c[v->n++] = (struct call){ ev->func, ev->arg[0], ev->arg[1], ev->result };
	return 0;
}

/* Reads the first process's calls of path into v. Returns 0, or -1 after a message. */
static int decode(const char *path, struct calls *v, uint64_t *max_slot)
{
	struct at_linereader r;
	struct at_event ev;
	const char *line, *why;
	size_t len;
	int got, have_pid = 0, status = -1;
	uint32_t pid = 0;

	if (at_linereader_open(&r, path) < 0) {
		fprintf(stderr, "replay_direct: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((got = at_linereader_next(&r, &line, &len)) > 0) {
		if (at_strip(line, len).n == 0)
			continue;
		if (at_parse_munged(line, len, &ev, &why) < 0) {
			fprintf(stderr, "replay_direct: %s:%" PRIu64 ": %s\n", r.name, r.lineno, why);
			goto cleanup;
		}
		if (!have_pid) {
			have_pid = 1;
			pid = ev.pid;
		}
		if (ev.pid != pid || ev.func == AT_JEMALLOC_STATS)
			continue;
		if (ev.arg[0] > *max_slot && at_func_takes_pointer(ev.func))
			*max_slot = ev.arg[0];
		if (ev.result > *max_slot)
			*max_slot = ev.result;
		if (calls_push(v, &ev) < 0) {
			fprintf(stderr, "replay_direct: out of memory\n");
			goto cleanup;
		}
	}
	if (got < 0) {
		fprintf(stderr, "replay_direct: %s: %s\n", r.name, strerror(errno));
		goto cleanup;
	}
	status = 0;
cleanup:
	at_linereader_close(&r);
	return status;
}

/* The timed loop: the calls of v through slot (the replay's slot semantics). */
static void run_calls(const struct calls *v, void **slot)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct call *c = &v->c[i];
		void *p = NULL;

		switch (c->func) {
		case AT_MALLOC:
			slot[c->result] = malloc(c->a0);
			break;
		case AT_CALLOC:
			slot[c->result] = calloc(c->a0, c->a1);
			break;
		case AT_REALLOC:
			p = slot[c->a0];
			slot[c->a0] = NULL;
			slot[c->result] = realloc(p, c->a1);
			break;
		case AT_FREE:
			free(slot[c->a0]);
			slot[c->a0] = NULL;
			break;
		case AT_MEMALIGN:
			slot[c->result] = memalign(c->a0, c->a1);
			break;
		case AT_POSIX_MEMALIGN:
			slot[c->result] = posix_memalign(&p, c->a0, c->a1) ? NULL : p;
			break;
		case AT_ALIGNED_ALLOC:
			slot[c->result] = aligned_alloc(c->a0, c->a1);
			break;
		case AT_VALLOC:
			slot[c->result] = valloc(c->a0);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	struct calls v = { 0 };
	uint64_t max_slot = 0;

	if (argc != 2) {
		fprintf(stderr, "Usage: replay_direct FILE\n");
		return 2;
	}
	if (decode(argv[1], &v, &max_slot) < 0)
		return 1;
	void **slot = at_map((max_slot + 1) * sizeof(void *), AT_MAP_NORESERVE);
	if (!slot) {
		fprintf(stderr, "replay_direct: cannot map %" PRIu64 " slots\n", max_slot + 1);
		return 1;
	}
	uint64_t start = at_now_ns();
	run_calls(&v, slot);
	uint64_t ns = at_now_ns() - start;
	printf("direct ops=%zu ns=%" PRIu64 " ns_per_op=%.1f\n", v.n, ns,
	       v.n ? (double)ns / (double)v.n : 0.0);
	return 0;
}
