/* daemon_reorder: what alloctapd's merge of the event rings costs per record, next to handing
 * the same records straight to the writer, for 1, 2, 4 and 16 rings; then the daemon's whole
 * path from rings to file (merge, event, sink: binary and text, to /dev/null), with the sink
 * written by the loop or by a thread of its own, in events per second (with a thread, the loop's
 * rate and the writer's, from its CPU time: it works while the bench fills the rings, which is
 * not timed). Prints two tables.
 *
 * The records are written into ring images laid out as the kernel lays out its rings (each
 * CPU's records in its own ring, in time order but for swaps, one realloc in ten with its entry
 * record), then merged in drains of a few thousand records, as the daemon does.
 *
 * A third table has the loop read rings that a thread on another CPU writes while it reads them
 * (as the programs do on the traced program's CPUs), each ring at most a wakeup's records ahead
 * of the loop: every record's line comes from the other CPU's cache, where the first two
 * tables find it in the loop's own. It needs 2 CPUs.
 *
 * Usage: daemon_reorder [EVENTS]
 * Includes daemon/trace/reorder.c itself (the bench build links only lib/). */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <fcntl.h>
#include <unistd.h>

#include "../daemon/trace/record.c"
#include "../daemon/trace/reorder.c"
#include "../tests/unit/ring_image.h"
#include "sink.h"

#define DRAIN_EVERY 4096 /* records written between two drains, unless a case says */

static uint64_t emitted_sum;

static void count_emit(void *arg, const struct at_record *r)
{
	(void)arg;
	emitted_sum += r->time;
}

/* n records (reallocs_per_1000 of them reallocs, each with its entry record first) over nrings
 * rings, a nanosecond apart; each ring's record swapped with its neighbour every `swap`. */
static struct at_record *make_records(uint64_t n, unsigned reallocs_per_1000, unsigned nrings,
				      unsigned swap, unsigned **ring_of)
{
	struct at_record *r = at_map(n * sizeof(*r), 0);
	uint64_t rng = 88172645463325252ull, t = 1000000;

	*ring_of = malloc(n * sizeof(**ring_of));
	if (!r || !*ring_of)
		exit(1);
	for (uint64_t k = 0; k < n; k++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		struct at_record *x = &r[k];
		unsigned ring = (unsigned)(rng >> 40) % nrings;

		memset(x, 0, sizeof(*x));
		x->pid = 1;
		x->tid = 1 + ring;
		x->arg[0] = 0x1000 + (rng >> 20) % 4096 * 16;
		x->result = 0x1000 + (rng >> 32) % 4096 * 16;
		x->func = rng % 2 ? AT_PROBE_MALLOC : AT_PROBE_FREE;
		x->time = x->time_entry = t++;
		(*ring_of)[k] = ring;
		if (rng % 1000 < reallocs_per_1000 && k + 1 < n) {
			x->func = AT_PROBE_REALLOC_ENTRY; /* its return next, same thread and ring */
			r[k + 1] = *x;
			r[k + 1].func = AT_PROBE_REALLOC;
			r[k + 1].time = t++;
			(*ring_of)[++k] = ring;
		}
	}
	for (uint64_t i = 0; swap && i + 2 * nrings < n; i += swap) {
		/* the next record of the same ring, if close: swapped (a preempted producer) */
		for (uint64_t j = i + 1; j < i + 2 * nrings; j++)
			if ((*ring_of)[j] == (*ring_of)[i] && r[i].func < AT_PROBE_THREAD_END &&
			    r[j].func < AT_PROBE_THREAD_END && !at_probe_reallocates(r[i].func) &&
			    !at_probe_reallocates(r[j].func)) {
				struct at_record tmp = r[i];
				r[i] = r[j];
				r[j] = tmp;
				break;
			}
	}
	return r;
}

static struct at_sink *pipeline_sink; /* where the pipeline's events go (NULL: counted) */

static void sink_emit(void *arg, const struct at_record *r)
{
	struct at_event ev;

	(void)arg;
	if (r->func == AT_PROBE_THREAD_END)
		return;
	at_record_to_event(r, 4096, 1, &ev);
	at_sink_put(pipeline_sink, &ev);
}

/* CPU time of the process, or of the calling thread, in ns. */
static double cpu_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The writing thread's CPU per record in the last run (the process's CPU less the caller's). */
static double writer_ns;

static double run(const struct at_record *recs, const unsigned *ring_of, uint64_t n,
		  unsigned nrings, unsigned drain_every, int direct)
{
	struct ring_image img[16];
	struct at_ring views[16];
	struct at_reorder ro;
	double elapsed = 0;
	double process0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID), thread0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);

	for (unsigned i = 0; i < nrings; i++) {
		if (ring_image_init(&img[i], 1 << 22) < 0) /* 65,536 slots */
			exit(1);
		views[i] = img[i].view;
	}
	if (at_reorder_init(&ro, views, nrings, 1 << 16, pipeline_sink ? sink_emit : count_emit,
			    NULL) < 0)
		exit(1);
	for (uint64_t k = 0; k < n;) {
		uint64_t end = k + drain_every < n ? k + drain_every : n;
		double t0;

		if (direct) {
			t0 = (double)at_now_ns();
			for (; k < end; k++)
				count_emit(NULL, &recs[k]);
		} else {
			for (; k < end; k++)
				if (ring_image_put(&img[ring_of[k]], &recs[k], 0) < 0) {
					fprintf(stderr, "daemon_reorder: a ring image is full\n");
					exit(1);
				}
			t0 = (double)at_now_ns();
			at_reorder_drain(&ro, recs[end - 1].time + 2 * AT_REORDER_CLOCK_SLACK_NS);
		}
		elapsed += (double)at_now_ns() - t0;
	}
	if (!direct) {
		double t0 = (double)at_now_ns();
		at_reorder_finish(&ro);
		if (pipeline_sink)
			at_sink_flush(pipeline_sink); /* everything encoded and written */
		elapsed += (double)at_now_ns() - t0;
		if (ro.emitted + ro.given_up == 0)
			exit(1);
	}
	writer_ns = (cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - process0 -
		     (cpu_ns(CLOCK_THREAD_CPUTIME_ID) - thread0)) / (double)n;
	at_reorder_free(&ro);
	for (unsigned i = 0; i < nrings; i++)
		ring_image_free(&img[i]);
	return elapsed / (double)n;
}

/* The second table: merge, events and the sink to /dev/null, per format and writers (one
 * writing thread, or encoders of frames), in millions of events per second (best of 3). */
static void pipeline(uint64_t n)
{
	static const struct {
		enum at_sink_format format;
		unsigned encoders;
	} rows[] = { { AT_SINK_ATZ, 1 }, { AT_SINK_ATZ, 2 }, { AT_SINK_ATZ, 3 },
		     { AT_SINK_TEXT, 1 } };
	static const unsigned rings[] = { 2, 16 };

	printf("\nrings to /dev/null: merge, events, sink (%llu records, 10%% realloc), million "
	       "events/s, best of 3;\nwith writing threads (one, or encoders of frames, each "
	       "on a CPU of its own), the loop's rate, the writers' (events a second of their "
	       "CPU time,\ntimes their number), and the lower of the two\n",
	       (unsigned long long)n);
	printf("%-8s %-8s %-7s %12s %12s %12s %12s\n", "format", "writers", "rings", "loop writes",
	       "thread: loop", "writers", "both");
	for (unsigned f = 0; f < sizeof(rows) / sizeof(rows[0]); f++) {
		for (unsigned k = 0; k < 2; k++) {
			unsigned *ring_of;
			struct at_record *recs = make_records(n, 100, rings[k], 0, &ring_of);
			double best[2] = { 1e30, 1e30 }, best_writer = 1e30;

			for (int rep = 0; rep < 3; rep++) {
				for (int thread = 0; thread < 2; thread++) {
					struct at_sink s;
					/* frames go on from each other in 2.5 with stacks, or
					 * without stacks, which these records have not */
					struct at_sink_options opt = {
						.format = rows[f].format,
						.atz = { .flags = AT_ATZ_FLAG_NO_STACKS } };
					int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

					if (fd < 0 || at_sink_open_fd(&s, fd, "/dev/null") < 0 ||
					    at_sink_start(&s, &opt) < 0 ||
					    (thread && at_sink_thread_start(&s, 16 + (rows[f].encoders > 1),
									    rows[f].encoders) < 0))
						exit(1);
					pipeline_sink = &s;
					double ns = run(recs, ring_of, n, rings[k], DRAIN_EVERY,
							0);
					pipeline_sink = NULL;
					at_sink_close(&s);
					close(fd);
					best[thread] = ns < best[thread] ? ns : best[thread];
					if (thread && writer_ns < best_writer)
						best_writer = writer_ns;
				}
			}
			best_writer /= rows[f].encoders;
			double both = best[1] > best_writer ? best[1] : best_writer;

			printf("%-8s %-8u %-7u %12.1f %12.1f %12.1f %12.1f\n",
			       rows[f].format == AT_SINK_TEXT ? "text" : "binary", rows[f].encoders,
			       rings[k], 1e3 / best[0], 1e3 / best[1], 1e3 / best_writer, 1e3 / both);
			at_unmap(recs, n * sizeof(*recs));
			free(ring_of);
		}
	}
}

/* ---- the third table: rings written on another CPU while the loop reads them ------------- */

/* Records a ring holds at most ahead of the loop's release (256 KiB: a wakeup's worth). */
#define FEED_LEAD 4096
/* The records' times are this many ns apart (16 million events a second), so that the merge's
 * slack holds back a few hundred records, not tens of thousands. */
#define FEED_SPACING 64

struct feed {
	const struct at_record *recs;
	const unsigned *ring_of;
	uint64_t n;
	struct ring_image *img;
	uint64_t written_time; /* the time of the last record committed (FEED_SPACING scale) */
	int cpu;
};

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The producer: every record into its ring, as a program reserves, writes and commits it. */
static void *feed_rings(void *arg)
{
	struct feed *f = arg;

	if (pin_to(f->cpu) != 0)
		exit(1);
	for (uint64_t k = 0; k < f->n; k++) {
		struct ring_image *ri = &f->img[f->ring_of[k]];
		uint64_t pos = ri->producer;

		while (pos + 1 - __atomic_load_n(&ri->consumer, __ATOMIC_ACQUIRE) > FEED_LEAD)
			__builtin_ia32_pause();
		__atomic_store_n(&ri->producer, pos + 1, __ATOMIC_RELEASE);
		struct at_record *slot = ring_image_slot(ri, pos);
		uint16_t state = slot->state;
		uint32_t number = slot->number;

		*slot = f->recs[k];
		slot->time *= FEED_SPACING;
		slot->time_entry *= FEED_SPACING;
		slot->state = state;
		slot->number = number;
		ring_image_commit(ri, pos);
		__atomic_store_n(&f->written_time, f->recs[k].time * FEED_SPACING, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* The loop's CPU ns per record merging rings of recs (written on CPU 1 as it reads them on CPU
 * 0) to emit; its wall ns per record in *wall. */
static double cross_run(const struct at_record *recs, const unsigned *ring_of, uint64_t n,
			unsigned nrings, at_emit_fn emit, double *wall)
{
	struct ring_image img[16];
	struct at_ring views[16];
	struct at_reorder ro;
	struct feed f = { recs, ring_of, n, img, 0, 1 };
	pthread_t producer;

	for (unsigned i = 0; i < nrings; i++) {
		if (ring_image_init(&img[i], 1 << 22) < 0)
			exit(1);
		views[i] = img[i].view;
	}
	if (at_reorder_init(&ro, views, nrings, 1 << 16, emit, NULL) < 0 || pin_to(0) != 0)
		exit(1);
	double cpu0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), t0 = (double)at_now_ns();

	if (pthread_create(&producer, NULL, feed_rings, &f) != 0)
		exit(1);
	while (__atomic_load_n(&f.written_time, __ATOMIC_ACQUIRE) < recs[n - 1].time * FEED_SPACING)
		at_reorder_drain(&ro, __atomic_load_n(&f.written_time, __ATOMIC_ACQUIRE));
	pthread_join(producer, NULL);
	at_reorder_finish(&ro);
	if (pipeline_sink)
		at_sink_flush(pipeline_sink);
	*wall = ((double)at_now_ns() - t0) / (double)n;
	double cpu = (cpu_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / (double)n;

	if (ro.emitted + ro.given_up == 0)
		exit(1);
	at_reorder_free(&ro);
	for (unsigned i = 0; i < nrings; i++)
		ring_image_free(&img[i]);
	return cpu;
}

/* The third table: the merge alone, and the merge with events and a sink written by the loop,
 * reading rings another CPU writes; the loop's CPU ns per record (best of 3). */
static void cross_core(uint64_t n)
{
	static const struct {
		const char *what;
		int sink;
		enum at_sink_format format;
	} rows[] = { { "merge", 0, AT_SINK_TEXT },
		     { "merge, binary", 1, AT_SINK_ATZ },
		     { "merge, text", 1, AT_SINK_TEXT } };
	static const unsigned rings[] = { 2, 16 };

	printf("\nrings written on another CPU as the loop reads them (%llu records, 10%% realloc, "
	       "each ring at most %u records ahead),\nthe loop's CPU ns per record and its wall ns "
	       "per record (best of 3); the sink written by the loop, to /dev/null\n",
	       (unsigned long long)n, FEED_LEAD);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("(not run: it needs 2 CPUs online)\n");
		return;
	}
	printf("%-16s %-7s %14s %14s\n", "loop", "rings", "CPU ns/rec", "wall ns/rec");
	for (unsigned r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		for (unsigned k = 0; k < 2; k++) {
			unsigned *ring_of;
			struct at_record *recs = make_records(n, 100, rings[k], 0, &ring_of);
			double best = 1e30, best_wall = 1e30;

			for (int rep = 0; rep < 3; rep++) {
				struct at_sink s;
				struct at_sink_options opt = {
					.format = rows[r].format,
					.atz = { .flags = AT_ATZ_FLAG_NO_STACKS } };
				int fd = -1;
				double wall;

				if (rows[r].sink) {
					fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
					if (fd < 0 || at_sink_open_fd(&s, fd, "/dev/null") < 0 ||
					    at_sink_start(&s, &opt) < 0)
						exit(1);
					pipeline_sink = &s;
				}
				double cpu = cross_run(recs, ring_of, n, rings[k],
						       rows[r].sink ? sink_emit : count_emit, &wall);
				if (rows[r].sink) {
					pipeline_sink = NULL;
					at_sink_close(&s);
					close(fd);
				}
				best = cpu < best ? cpu : best;
				best_wall = wall < best_wall ? wall : best_wall;
			}
			printf("%-16s %-7u %14.1f %14.1f\n", rows[r].what, rings[k], best, best_wall);
			at_unmap(recs, n * sizeof(*recs));
			free(ring_of);
		}
	}
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
	static const struct {
		const char *name;
		unsigned rings, reallocs, swap, drain_every;
	} cases[] = {
		{ "1 ring, no realloc", 1, 0, 0, DRAIN_EVERY },
		{ "2 rings, 10% realloc", 2, 100, 0, DRAIN_EVERY },
		{ "4 rings, 10% realloc", 4, 100, 0, DRAIN_EVERY },
		{ "16 rings, no realloc", 16, 0, 0, DRAIN_EVERY },
		{ "16 rings, 10% realloc", 16, 100, 0, DRAIN_EVERY },
		{ "16 rings, 10% realloc, swaps", 16, 100, 64, DRAIN_EVERY },
		/* a daemon behind its producers: each drain finds megabytes waiting (1.3 and 2.6 MB
		 * of records in each of 2 rings, 0.66 in each of 16) */
		{ "2 rings, 10% realloc, 32 Ki", 2, 100, 0, 1u << 15 },
		{ "2 rings, 10% realloc, 64 Ki", 2, 100, 0, 1u << 16 },
		{ "16 rings, 10% realloc, 128 Ki", 16, 100, 0, 1u << 17 },
	};

	printf("merge of the rings: cost per record (%llu records, drains of %u records unless "
	       "the case says, best of 3)\n", (unsigned long long)n, DRAIN_EVERY);
	printf("%-30s %14s %14s %12s\n", "records", "direct ns/rec", "merge ns/rec", "added ns/rec");
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		unsigned *ring_of;
		struct at_record *recs = make_records(n, cases[c].reallocs, cases[c].rings,
						      cases[c].swap, &ring_of);
		double direct = 1e30, merged = 1e30;

		for (int rep = 0; rep < 3; rep++) {
			double d = run(recs, ring_of, n, cases[c].rings, cases[c].drain_every, 1);
			double m = run(recs, ring_of, n, cases[c].rings, cases[c].drain_every, 0);
			direct = d < direct ? d : direct;
			merged = m < merged ? m : merged;
		}
		printf("%-30s %14.1f %14.1f %12.1f\n", cases[c].name, direct, merged,
		       merged - direct);
		at_unmap(recs, n * sizeof(*recs));
		free(ring_of);
	}
	pipeline(n);
	cross_core(n);
	return emitted_sum == 0;
}
