/* munge.h: the munge algorithm of Firefox's logalloc_munge.py (doc/LOGALLOC.md), as a
 * library: feed it raw lines, it appends munged lines to an at_output.
 *
 * Output is byte for byte the reference's for every line the reference accepts, with one known
 * difference: a pid, tid or pointer beyond 64 bits (plus sign) is dropped here, where Python's
 * unbounded ints accept it. State grows only when a table grows; nothing is allocated per line. */
#ifndef ALLOCTAP_MUNGE_MUNGE_H
#define ALLOCTAP_MUNGE_MUNGE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "idmap.h"
#include "output.h"
#include "text.h"

struct at_munge_options {
	int has_pid;          /* --pid: keep only this original process, printed as process 1 */
	int pid_neg;
	uint64_t pid_mag;
	uint64_t stats_every; /* --stats-every: 0, or N to add a jemalloc_stats() line after every
			       * N written lines of each process */
	int replayable_only;  /* --strict: a line the reference writes but a replay cannot read
			       * is dropped (AT_MUNGE_IGNORED) instead of written */
};

/* Lines the reference writes but a replay (alloctap-replay, Firefox's logalloc-replay) cannot
 * read, and why: */
#define AT_MUNGE_NO_RESULT "an allocation without a result (a replay needs its slot)"
#define AT_MUNGE_ODD_ARGUMENT \
	"an argument that is not a decimal number (a replay reads only those)"
#define AT_MUNGE_BIG_SLOT "a slot number beyond #268435455 (the last a replay has)"

/* Whether why, the reason a line was dropped, is the reference's "Did not see an alloc for
 * pointer": a free or realloc of a pointer the trace never allocated, as a trace taken by
 * attaching (alloctapd --pid) holds for every block allocated before the attach. The programs
 * count those and list them only with -v. */
int at_munge_unseen_pointer(const char *why);

/* What became of one line. */
enum at_munge_result {
	AT_MUNGE_WRITTEN = 0, /* one line written (plus a jemalloc_stats() line if one was due);
			       * *why is NULL, or the reason (AT_MUNGE_NO_RESULT,
			       * AT_MUNGE_ODD_ARGUMENT, AT_MUNGE_BIG_SLOT) a replay cannot read the
			       * line written */
	AT_MUNGE_IGNORED,     /* dropped, as the reference drops it; *why says why */
	AT_MUNGE_FILTERED,    /* belongs to another process than --pid's */
	AT_MUNGE_NOMEM = -1,  /* out of memory; the state is still consistent */
};

struct at_munge_process; /* per process: tid ids, pointer ids, written-line count */

/* A direct-mapped cache from a raw (pid, tid) pair to its process and its printed
 * "PID TID " prefix; ids never change once given, so entries never go stale. */
#define AT_MUNGE_THREAD_CACHE 256
struct at_munge_thread {
	uint64_t pid_mag, tid_mag;
	uint64_t pid_id;     /* 0: empty entry */
	uint64_t tid_id;
	uint32_t proc;       /* index in procs */
	uint32_t len;        /* of prefix */
	char prefix[48];
};

struct at_munge {
	struct at_munge_options opt;
	struct at_idmap pids;
	struct at_munge_process *procs; /* indexed by process id - 1 */
	uint64_t nprocs, procs_cap;
	uint64_t last_pid_mag;          /* one-entry cache of the last pid looked up */
	int last_pid_neg;
	struct at_munge_process *last_proc;
	uint64_t last_pid_id;
	struct at_munge_thread threads[AT_MUNGE_THREAD_CACHE];
};

void at_munge_init(struct at_munge *m, const struct at_munge_options *opt);
void at_munge_free(struct at_munge *m);

/* Munges one line (without its '\n'; surrounding whitespace such as a CR is stripped, as the
 * reference does). Returns an enum at_munge_result; for AT_MUNGE_IGNORED, *why is the reason,
 * a static string; for AT_MUNGE_WRITTEN, NULL or why a replay cannot read the line. */
int at_munge_line(struct at_munge *m, const char *line, size_t len, struct at_output *out,
		  const char **why);

/* Munges one raw event (at_source's or at_atz's): the same steps, the same state and the same
 * result as at_munge_line() on the event's canonical text line (at_format_raw). out[0] is the
 * munged event (ids for pid and tid, slot numbers for the pointer and the result, unused
 * arguments 0); when --stats-every makes one due, out[1] is the "P 1 jemalloc_stats()" event.
 * *n_out is the number of events filled (0 unless AT_MUNGE_WRITTEN). in->func must be below
 * AT_FUNC_COUNT. */
int at_munge_event(struct at_munge *m, const struct at_event *in, struct at_event out[2],
		   unsigned *n_out, const char **why);

/* A line parsed ahead of its turn by at_munge_parse(): for the common shape
 * "PID TID func(ARGS)[=0xHEX]" its numbers and the place of its argument text, as offsets from
 * the line's start so the line may be copied or moved in between. Parsing needs no state, so it
 * can run in another thread than the munging. */
struct at_munge_parsed {
	uint64_t pid, tid, ptr, res;
	uint32_t args_off, args_len; /* the text between the parentheses */
	uint32_t rest_off;           /* free, realloc: where the text after the pointer starts */
	int8_t func;                 /* enum at_func, or -1: not the common shape */
	uint8_t has_result;
};

/* Parses the common shape. Returns 0, or -1 (pl->func = -1) for any other line, which
 * at_munge_apply() then splits and parses as the reference does. */
int at_munge_parse(const char *line, size_t len, struct at_munge_parsed *pl);

/* Munges a line parsed by at_munge_parse(); the same result as at_munge_line(). */
int at_munge_apply(struct at_munge *m, const char *line, size_t len,
		   const struct at_munge_parsed *pl, struct at_output *out, const char **why);

/* Why a replay cannot read a munged event (AT_MUNGE_NO_RESULT, AT_MUNGE_BIG_SLOT), or NULL. */
const char *at_munge_unreplayable_event(const struct at_event *ev);

/* A hint for a parsed line whose turn comes soon: starts loading the table slot of its pointer
 * into the cache if its thread was seen before. Reads the state, changes nothing. */
void at_munge_prefetch(const struct at_munge *m, const struct at_munge_parsed *pl);

#endif
