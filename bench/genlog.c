/* genlog: writes a deterministic synthetic raw logalloc log, for benchmarks and tests.
 *
 * Several processes, each with several threads, interleaved; a malloc/free/realloc/calloc mix
 * with a few aligned allocations, free(0x0), realloc(0x0,n), failed allocations (=0x0) and
 * jemalloc_stats() markers. Freed addresses are handed out again last-freed first, as real
 * allocators do, so the munge's id recycling is exercised. The same LINES and SEED always give
 * the same bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "output.h"
#include "text.h"

#define MAX_PROCS 64
#define LIVE_CAP 50000   /* live allocations per process before frees win */
#define FREED_CAP 4096   /* freed addresses remembered for reuse per process */

struct process {
	uint32_t pid;
	uint32_t tids[16];
	unsigned ntids;
	uint64_t brk;                 /* next fresh address */
	uint64_t *live;               /* live addresses */
	unsigned nlive;
	uint64_t freed[FREED_CAP];    /* a stack: the last freed address is reused first */
	unsigned nfreed;
};

static uint64_t rng_state;

/* splitmix64 */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return rng() % n;
}

/* Mostly small sizes, some pages, a few large blocks. */
static uint64_t pick_size(void)
{
	uint64_t r = below(100);
	if (r < 70)
		return 8 + below(121);
	if (r < 96)
		return 128 + below(3969);
	return 4096 + below(1 << 20);
}

/* An address for a new block: a recently freed one (75%), else a fresh one. */
static uint64_t new_address(struct process *p, uint64_t size)
{
	if (p->nfreed && below(4) != 0)
		return p->freed[--p->nfreed];
	uint64_t a = p->brk;
	p->brk += (size + 31) & ~UINT64_C(15);
	return a;
}

static void remember_freed(struct process *p, uint64_t a)
{
	if (p->nfreed == FREED_CAP) {
		memmove(p->freed, p->freed + 1, (FREED_CAP - 1) * sizeof(p->freed[0]));
		p->nfreed--;
	}
	p->freed[p->nfreed++] = a;
}

/* Removes a random live block and returns its address (there must be one). */
static uint64_t take_live(struct process *p)
{
	unsigned i = (unsigned)below(p->nlive);
	uint64_t a = p->live[i];
	p->live[i] = p->live[--p->nlive];
	return a;
}

static void add_live(struct process *p, uint64_t a)
{
	p->live[p->nlive++] = a;
}

/* One call of process p into e. */
static void next_event(struct process *p, struct at_event *e)
{
	uint64_t r = below(1000);

	e->pid = p->pid;
	e->tid = p->tids[below(p->ntids)];
	e->has_result = 1;
	e->arg[0] = e->arg[1] = 0;
	if (p->nlive >= LIVE_CAP || (r >= 450 && r < 800 && p->nlive)) {
		e->func = AT_FREE;
		e->has_result = 0;
		e->arg[0] = take_live(p);
		remember_freed(p, e->arg[0]);
		return;
	}
	if (r >= 800 && r < 880 && p->nlive) {
		uint64_t size = pick_size();
		e->func = AT_REALLOC;
		e->arg[1] = size;
		if (below(20) == 0) { /* realloc(NULL, n) */
			e->result = new_address(p, size);
		} else {
			uint64_t old = take_live(p);
			e->arg[0] = old;
			if (below(2)) {
				e->result = old; /* grown or shrunk in place */
			} else {
				remember_freed(p, old);
				e->result = new_address(p, size);
			}
		}
		add_live(p, e->result);
		return;
	}
	if (r >= 995) {
		e->func = AT_FREE; /* free(NULL) */
		e->has_result = 0;
		return;
	}
	if (r == 994 && below(100) == 0) {
		e->func = AT_JEMALLOC_STATS;
		e->has_result = 0;
		return;
	}
	uint64_t size = pick_size();
	if (r < 940) {
		e->func = AT_MALLOC;
		e->arg[0] = size;
	} else if (r < 980) {
		e->func = AT_CALLOC;
		e->arg[0] = 1 + below(16);
		e->arg[1] = (size + e->arg[0] - 1) / e->arg[0];
		size = e->arg[0] * e->arg[1];
	} else {
		static const uint8_t aligned[] = { AT_POSIX_MEMALIGN, AT_MEMALIGN,
						   AT_ALIGNED_ALLOC, AT_VALLOC };
		e->func = aligned[below(4)];
		uint64_t align = UINT64_C(16) << below(9);
		if (e->func == AT_VALLOC) {
			e->arg[0] = size;
		} else {
			e->arg[0] = align;
			e->arg[1] = size;
		}
		size += align;
	}
	if (below(20000) == 0) { /* a failed allocation */
		e->result = 0;
		return;
	}
	e->result = new_address(p, size);
	add_live(p, e->result);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: genlog LINES [SEED] [-p PROCESSES] [-t THREADS] > log\n"
"\n"
"Writes LINES lines of a synthetic raw logalloc log (the format alloctapd and Firefox's\n"
"logalloc write) to standard output. The same LINES, SEED (default 1), PROCESSES (default 3,\n"
"at most %d) and THREADS per process (default 4, at most 16) always give the same bytes.\n"
"Processes are interleaved; each mixes malloc (~45%%), free (~43%%: at most %d blocks are\n"
"live per process), realloc (~7%%, some in place, some realloc(0x0,n)), calloc (~4%%),\n"
"aligned allocations (~2%%), free(0x0), rare failed allocations (=0x0) and jemalloc_stats();\n"
"freed addresses are reused last-freed first, as allocators do.\n"
"Exit status: 0 ok, 1 write error, 2 usage error.\n",
		MAX_PROCS, LIVE_CAP);
}

static int parse_num(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return (errno || end == s || *end || s[0] == '-') ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t lines = 0, seed = 1, nprocs = 3, nthreads = 4;
	int have_lines = 0, have_seed = 0;

	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		uint64_t *opt = NULL;
		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(s, "-p"))
			opt = &nprocs;
		else if (!strcmp(s, "-t"))
			opt = &nthreads;
		if (opt) {
			if (++i == argc || parse_num(argv[i], opt) < 0)
				goto bad;
		} else if (!have_lines && parse_num(s, &lines) == 0) {
			have_lines = 1;
		} else if (!have_seed && parse_num(s, &seed) == 0) {
			have_seed = 1;
		} else {
			goto bad;
		}
	}
	if (!have_lines || !nprocs || nprocs > MAX_PROCS || !nthreads || nthreads > 16)
		goto bad;

	static struct process procs[MAX_PROCS];
	rng_state = seed;
	for (unsigned k = 0; k < nprocs; k++) {
		struct process *p = &procs[k];
		p->pid = 1000 + (uint32_t)below(60000);
		p->ntids = (unsigned)nthreads;
		for (unsigned j = 0; j < p->ntids; j++)
			p->tids[j] = p->pid + j * 3;
		p->brk = UINT64_C(0x550000000000) + (below(1 << 16) << 24);
		p->live = malloc(LIVE_CAP * sizeof(*p->live));
		if (!p->live) {
			fprintf(stderr, "genlog: out of memory\n");
			return 1;
		}
	}
	struct at_output out;
	if (at_output_open(&out, NULL) < 0) {
		fprintf(stderr, "genlog: %s\n", strerror(errno));
		return 1;
	}
	for (uint64_t n = 0; n < lines && !out.err; n++) {
		/* process k gets a share proportional to k + 1: a busy one and quieter ones */
		uint64_t w = below(nprocs * (nprocs + 1) / 2);
		unsigned k = 0;
		while (w >= k + 1) {
			w -= k + 1;
			k++;
		}
		struct at_event e;
		next_event(&procs[k], &e);
		char *d = at_output_reserve(&out, AT_LINE_MAX);
		at_output_commit(&out, at_format_raw(d, &e));
	}
	if (at_output_close(&out) < 0) {
		fprintf(stderr, "genlog: <stdout>: write error: %s\n", strerror(out.err));
		return 1;
	}
	for (unsigned k = 0; k < nprocs; k++)
		free(procs[k].live);
	return 0;
bad:
	usage(stderr);
	return 2;
}
