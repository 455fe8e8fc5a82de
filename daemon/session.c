/* session.c: one run of the daemon, from loading the BPF program to the summary. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloctap.h"
#include "bpf.h"
#include "caps.h"
#include "record.h"
#include "display.h"
#include "prim.h"
#include "rss.h"
#include "session.h"
#include "signals.h"
#include "attach.h"
#include "targets.h"
#include "window.h"

#define MAX_RETURNS (1u << 16) /* realloc returns the merge holds out of their rings at once */
#define WRITER_QUEUE_LOG2 16 /* events queued for the writing thread at most */
#define ENCODER_QUEUE_LOG2 18 /* for the encoders: a run holds 1 / (2 x encoders) of it */
#define WRITER_THREAD_CPUS 2
#define CPUS_PER_ENCODER 8  /* a binary trace gets one encoder per this many online CPUs */
#define ENCODERS_MAX 4
#define TICK_MS 500         /* a realloc's missing return is given up after one to two ticks */
#define PROGRESS_MS 2000

/* A thread's end (AT_PROBE_THREAD_END), in causal order: after the process changes before it,
 * a binary trace's END record (the writer releases the thread's state; nothing if it had
 * none); nothing in a text trace, and no event. */
static void write_thread_end(struct at_session *d, const struct at_record *rec)
{
	struct at_sink_record end = { .kind = AT_SINK_THREAD_END,
				      .thread = { .pid = rec->pid, .tid = rec->tid } };

	at_proctable_forget(&d->table, rec->time);
	at_proctable_flush(&d->table, &d->sink, rec->time);
	at_sink_put_record(&d->sink, &end);
}

/* Reorder output: one record in causal order, to the sink, after the process changes that
 * happened before it. */
static void write_record(void *arg, const struct at_record *rec)
{
	struct at_session *d = arg;
	struct at_event ev;

	if (rec->func == AT_PROBE_THREAD_END) {
		write_thread_end(d, rec);
		return;
	}
	at_record_to_event(rec, d->pagesize, d->times, &ev);
	if (d->time_grain > 1)
		ev.time_ns -= ev.time_ns % d->time_grain;
	at_proctable_forget(&d->table, rec->time); /* the processes ended before it leave */
	if (at_proctable_event(&d->table, (pid_t)ev.pid, rec->time) == 1) {
		at_targets_first_seen(&d->targets, (pid_t)ev.pid, rec->time);
		if (d->opt.stacks && !at_stack_procs_find(&d->stacks.procs, (pid_t)ev.pid))
			at_stacks_scan(&d->stacks, (pid_t)ev.pid); /* --all: found by its events */
	}
	at_proctable_flush(&d->table, &d->sink, rec->time);
	ev.stack = at_stacks_resolve(&d->stacks, &d->sink, (pid_t)rec->pid, rec->stack);
	at_sink_put(&d->sink, &ev);
}

/* One "PID PID jemalloc_stats()" event. */
static void write_stats_marker(void *arg, pid_t pid)
{
	struct at_session *d = arg;
	struct at_event ev = { .pid = (uint32_t)pid, .tid = (uint32_t)pid,
			       .func = AT_JEMALLOC_STATS };

	at_sink_put(&d->sink, &ev);
}

/* SIGUSR1: a "PID PID jemalloc_stats()" event for every process seen that had not ended when
 * the signal came. */
static void write_stats_markers(void *arg)
{
	struct at_session *d = arg;

	at_proctable_forget(&d->table, at_reorder_out_to(&d->reorder));
	at_proctable_each(&d->table, AT_PROC_SEEN, write_stats_marker, d);
}

/* Takes the rings' wakeups, reads the rings and writes out what is in order (the clock read
 * first: see reorder.h). */
static void drain_rings(struct at_session *d)
{
	at_bpf_ring_woken(d->bpf);
	at_reorder_drain(&d->reorder, at_bpf_clock(d->bpf));
	at_sink_kick(&d->sink); /* the writing thread takes what the drain wrote */
}

/* Events lost so far, from a fresh read of the BPF counters. */
static uint64_t events_lost(struct at_session *d)
{
	at_lost_read(&d->lost, d->bpf);
	return at_lost_events(&d->lost, &d->reorder) + d->unfinished;
}

/* Maps the ring's position pages read-only, for the fill level in -v lines. */
static void map_ring_positions(struct at_session *d)
{
	at_bpf_ring_positions(d->bpf, d->ring_pos);
}

/* What the trace has done so far: events taken by the sink, or records discarded. */
static uint64_t progress_count(const struct at_session *d)
{
	return d->opt.discard ? d->reorder.discarded : d->sink.accepted;
}

/* -v's line every PROGRESS_MS: count (progress_count) more over the last ms. */
static void print_progress(struct at_session *d, uint64_t count, uint64_t ms)
{
	struct at_sink_stats st;
	unsigned fill = 0;
	unsigned long long rate = ms ? count * 1000 / ms : 0;

	if (d->opt.discard) {
		DISPLAYLEVEL(3, "%s: %llu records/s, %llu discarded unread, %llu lost so far\n",
			     at_program_name, rate, (unsigned long long)d->reorder.discarded,
			     (unsigned long long)events_lost(d));
		return;
	}
	at_sink_stats(&d->sink, &st);
	if (d->ring_pos[0] && d->ring_pos[1])
		fill = (unsigned)((*d->ring_pos[1] - *d->ring_pos[0]) * 100 / d->opt.ringbuf_size);
	DISPLAYLEVEL(3, "%s: %llu events/s, %llu written, %llu lost so far, ring buffer %u%% full, "
		     "%llu in the reorder window\n", at_program_name, rate,
		     (unsigned long long)st.written, (unsigned long long)events_lost(d), fill,
		     (unsigned long long)at_reorder_backlog(&d->reorder));
}

uint64_t at_session_now(const struct at_session *d)
{
	return at_bpf_clock(d->bpf);
}

void at_session_remove_target(struct at_session *d, pid_t pid)
{
	at_bpf_remove_target(d->bpf, pid);
	if (at_proctable_allocator(&d->table, pid)) /* the mirror follows the map */
		at_proctable_set_allocator(&d->table, pid, 0);
}

int at_session_add_target(struct at_session *d, pid_t pid, uint64_t allocators)
{
	/* an ended process's number taken again is a new process */
	at_proctable_appear(&d->table, pid, 0, AT_PROC_SEEN);
	if (at_bpf_set_target(d->bpf, pid, allocators) < 0) {
		at_error("cannot add pid %d to the BPF target map: %s", (int)pid, strerror(errno));
		return -1;
	}
	at_proctable_set_allocator(&d->table, pid, allocators);
	return 0;
}

void at_session_set_allocator(struct at_session *d, pid_t pid, uint32_t object)
{
	if (object == 0 || object > d->targets.nobjects)
		return;
	unsigned family = d->targets.objects[object - 1].family;
	uint64_t allocators = at_session_allocator(d, pid) & ~AT_TARGET_IN(family, ~0u);

	allocators |= AT_TARGET_IN(family, AT_TARGET(object, d->targets.objects[object - 1].funcs));
	/* in --all the process may not be in the map yet: it is added (and goes at its end) */
	if (at_bpf_set_target(d->bpf, pid, allocators) == 0) {
		at_proctable_set_allocator(&d->table, pid, allocators);
		at_bpf_allocators_changed(d->bpf);
	}
}

void at_session_inherit_allocator(struct at_session *d, pid_t pid, pid_t parent)
{
	uint64_t allocators = at_session_allocator(d, parent);

	if (allocators && at_bpf_set_target(d->bpf, pid, allocators) == 0) {
		at_proctable_set_allocator(&d->table, pid, allocators);
		at_bpf_allocators_changed(d->bpf);
	}
}

uint64_t at_session_allocator(const struct at_session *d, pid_t pid)
{
	return at_proctable_allocator(&d->table, pid); /* the targets map's, as written */
}

/* ---- what the targets need of the session (targets.h) ---------------------------------- */

static uint64_t op_now(void *ctx)
{
	return at_session_now(ctx);
}

static int op_add_target(void *ctx, pid_t pid, uint64_t allocators)
{
	return at_session_add_target(ctx, pid, allocators);
}

static void op_set_allocator(void *ctx, pid_t pid, uint32_t object)
{
	at_session_set_allocator(ctx, pid, object);
}

static void op_inherit_allocator(void *ctx, pid_t pid, pid_t parent)
{
	at_session_inherit_allocator(ctx, pid, parent);
}

static void op_remove_target(void *ctx, pid_t pid)
{
	at_session_remove_target(ctx, pid);
}

/* Held threads need a tracer: stacks may hold them only while ptrace follows. */
static void op_hold_threads(void *ctx, int on)
{
	struct at_session *d = ctx;

	d->stacks.hold = on;
}

static const struct at_targets_ops targets_ops = {
	op_now, op_add_target, op_set_allocator, op_inherit_allocator, op_remove_target,
	op_hold_threads,
};

/* Gives the targets what they work with (the BPF program comes with load_bpf). 0, or -1 with
 * errno. */
static int wire_targets(struct at_session *d)
{
	d->targets.opt = &d->opt;
	d->targets.ops = &targets_ops;
	d->targets.ctx = d;
	d->targets.table = &d->table;
	d->targets.probes = &d->probes;
	d->targets.stacks = &d->stacks;
	d->targets.child.go_fd = -1;
	d->targets.events.fd = -1;
	return at_pidset_init(&d->targets.loading);
}

/* The number of per-thread state slots: AT_THREAD_SLOTS, or ALLOCTAP_THREAD_SLOTS from the
 * environment (a power of two from 1 to 2^20; tests make threads share slots with few). 0 after
 * an error message when the variable is not such a number. */
static uint32_t thread_slots(void)
{
	const char *v = getenv("ALLOCTAP_THREAD_SLOTS");
	char *end;

	if (!v)
		return AT_THREAD_SLOTS;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (errno || end == v || *end || n == 0 || n > (1ul << 20) || (n & (n - 1))) {
		at_error("ALLOCTAP_THREAD_SLOTS=%s: not a power of two from 1 to 1048576", v);
		return 0;
	}
	return (uint32_t)n;
}

/* ALLOCTAP_TIMES: "none" or "ns" (times to the nanosecond), for the benchmarks of what times
 * cost (bench/probes_bench.sh, bench/atz_bench.sh; doc/DESIGN.md, decision 6); NULL when unset
 * or anything else. */
static const char *times_asked(void)
{
	const char *env = getenv("ALLOCTAP_TIMES");

	return env && (strcmp(env, "none") == 0 || strcmp(env, "ns") == 0) ? env : NULL;
}

/* Whether the events carry their times: in every binary trace (a format with records), unless
 * ALLOCTAP_TIMES=none. A text trace has no field for them. */
static int times_wanted(const struct at_session *d)
{
	const char *asked = times_asked();

	if (asked && strcmp(asked, "none") == 0)
		return 0;
	return at_format_records(d->opt.format);
}

/* The grain of the events' times in ns: the microsecond without --stacks, where times to the
 * nanosecond would take three times the bytes of the events without them, and a microsecond's
 * less than half of that (doc/DESIGN.md, decision 6); the nanosecond with --stacks, whose
 * traces had them before and whose stacks cost more, or with ALLOCTAP_TIMES=ns. */
static uint64_t times_grain(const struct at_session *d)
{
	const char *asked = times_asked();

	return d->opt.stacks || (asked && strcmp(asked, "ns") == 0) ? 1 : 1000;
}

static int load_bpf(struct at_session *d)
{
	int err;
	uint32_t slots = thread_slots();

	if (slots == 0)
		return -1;

	struct at_bpf_options o = {
		.all = d->opt.all, .floor = d->opt.floor, .bound = at_targets_bound(&d->targets),
		.stacks = d->opt.stacks, .self_tgid = (uint32_t)getpid(),
		.ring_bytes = (uint32_t)d->opt.ringbuf_size, .max_targets = AT_MAX_TRACED,
		.thread_slots = slots, .min_size = d->opt.min_size,
		.sample_bytes = d->opt.sample_bytes, .block_map = d->opt.block_map,
	};
	d->bpf = at_bpf_open(&o);
	if (!d->bpf) {
		at_error("cannot open the BPF program: %s", strerror(errno));
		return -1;
	}
	d->targets.bpf = d->bpf;
	at_stacks_configure(d->bpf, d->opt.stacks);
	/* with stacks or a filter, alloc_entry serves every allocation function; and every entry
	 * when a tree is followed with links of each process's own: each link costs a process an
	 * attach and a close, three links in place of eight */
	at_attach_prepare(d->bpf, d->opt.stacks || d->opt.min_size || d->opt.sample_bytes,
			  d->opt.follow && at_targets_bound(&d->targets));
	err = at_bpf_load(d->bpf);
	if (err) {
		at_error("cannot load the BPF program: %s%s", strerror(-err),
			 (err == -EPERM || err == -EACCES) ? at_caps_hint(AT_CAPS_LOAD) : "");
		return -1;
	}
	if (at_stacks_open(&d->stacks, d->bpf, d->opt.cache_dir, d->opt.cache_size) < 0)
		return -1;
	d->stacks.no_python = d->opt.no_python;
	if (at_bpf_attach_thread_exit(d->bpf) < 0) {
		at_error("cannot attach the thread-exit tracepoint: %s", strerror(errno));
		return -1;
	}
	if (at_bpf_attach_thread_exec(d->bpf) < 0) {
		at_error("cannot attach the exec tracepoint: %s", strerror(errno));
		return -1;
	}
	unsigned nrings = 0;
	const struct at_ring *rings = NULL;

	if (at_bpf_ring_open(d->bpf) == 0)
		rings = at_bpf_rings(d->bpf, &nrings);
	if (!rings || at_reorder_init(&d->reorder, rings, nrings, MAX_RETURNS, write_record, d) < 0) {
		at_error("cannot set up the ring buffers: %s", strerror(errno));
		return -1;
	}
	map_ring_positions(d);
	d->reorder.mark = write_stats_markers;
	d->reorder.discard = d->opt.discard;
	return 0;
}

/* The table's forget hook: what stacks keep of a process goes with its slot. */
static void process_forgotten(void *arg, pid_t pid)
{
	struct at_session *d = arg;

	at_stacks_forgotten(&d->stacks, pid);
}

/* Environment variable name, when set: a number from lo to hi (hi <= 9) into *v. 0, or -1
 * after a message naming the variable and what it may be. */
static int env_digit(const char *name, unsigned lo, unsigned hi, unsigned *v)
{
	const char *e = getenv(name);

	if (!e)
		return 0;
	if (e[0] >= (char)('0' + lo) && e[0] <= (char)('0' + hi) && !e[1]) {
		*v = (unsigned)(e[0] - '0');
		return 0;
	}
	if (hi == lo + 1)
		at_error("%s=%s: not %u or %u", name, e, lo, hi);
	else
		at_error("%s=%s: not a number from %u to %u", name, e, lo, hi);
	return -1;
}

/* How the output is written, into w: by a thread of its own on a machine of at least
 * WRITER_THREAD_CPUS online CPUs (on fewer, the thread's CPU is taken from the traced program)
 * or as ALLOCTAP_WRITER_THREAD says (0 or 1); a binary trace by one encoder per
 * CPUS_PER_ENCODER online CPUs (ENCODERS_MAX at most) or as ALLOCTAP_ENCODERS says (1 to
 * ENCODERS_MAX; one is the writing thread alone), a frame a run of events when
 * ALLOCTAP_FRAME_EACH_RUN=1 (AT_SINK_FRAME_EACH_RUN). 0, or -1 after a message. */
struct writing {
	unsigned thread, encoders, each_run;
};

static int writing_wanted(struct writing *w)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), n = cpus / CPUS_PER_ENCODER;

	w->thread = cpus >= WRITER_THREAD_CPUS;
	w->encoders = n < 1 ? 1 : n > ENCODERS_MAX ? ENCODERS_MAX : (unsigned)n;
	w->each_run = 0;
	if (env_digit("ALLOCTAP_WRITER_THREAD", 0, 1, &w->thread) < 0 ||
	    env_digit("ALLOCTAP_ENCODERS", 1, ENCODERS_MAX, &w->encoders) < 0 ||
	    env_digit("ALLOCTAP_FRAME_EACH_RUN", 0, 1, &w->each_run) < 0)
		return -1;
	if (w->each_run)
		w->each_run = AT_SINK_FRAME_EACH_RUN;
	return 0;
}

/* The loop, and the writing thread it starts, at --nice's priority: they share the CPUs with
 * the traced threads, and a loop that waits for a CPU while the rings fill loses events. The
 * table builders set their own; a launched command gets the daemon's back. */
static void set_priority(struct at_session *d)
{
	if (at_launch_set_priority(&d->targets.child, d->opt.nice) < 0)
		DISPLAYLEVEL(d->opt.nice_given ? 2 : 3,
			     "%s: cannot set the priority to %d (%s): the loop runs at %d\n",
			     at_program_name, d->opt.nice, strerror(errno),
			     getpriority(PRIO_PROCESS, 0));
	/* the threads that close links keep the priority the daemon was started at */
	d->probes.closer.nice = d->targets.child.nice;
	d->probes.closer.nice_set = d->targets.child.nice_set;
}

int at_session_open(struct at_session *d)
{
	/* a binary trace is 2.x: event times always (times_wanted), stacks and mappings with
	 * --stacks (without, the NO_STACKS flag leaves the stack ids out; with, 2.5, whose stacks
	 * may hold Python frames); RSS records and process change records either way */
	struct at_sink_options out = {
		.format = d->opt.format,
		.atz = { .major = AT_ATZ_VERSION_MAJOR,
			 .minor = d->opt.stacks ? AT_ATZ_PYTHON_MINOR : AT_ATZ_V2_MINOR,
			 .flags = (times_wanted(d) ? 0 : AT_ATZ_FLAG_NO_TIMES) |
				  (d->opt.stacks ? 0 : AT_ATZ_FLAG_NO_STACKS),
			 .min_size = d->opt.min_size, .sample_bytes = d->opt.sample_bytes },
	};

	struct writing w;

	if (writing_wanted(&w) < 0) /* before anything is made: the output file too */
		return -1;
	d->pagesize = (uint64_t)sysconf(_SC_PAGESIZE);
	d->times = times_wanted(d);
	d->time_grain = times_grain(d);
	at_launch_raise_nofile(&d->targets.child);
	set_priority(d);
	if (wire_targets(d) < 0 ||
	    at_proctable_init(&d->table, at_format_records(d->opt.format)) < 0) {
		at_error("cannot allocate the daemon's buffers: %s", strerror(errno));
		return -1;
	}
	at_proctable_on_forget(&d->table, process_forgotten, d);
	/* the BPF program first: a run without the privileges leaves no empty output behind */
	if (load_bpf(d) < 0)
		return -1;
	if (at_dest_open(&d->opt.dest, &d->sink, &out) < 0)
		return -1;
	/* events are encoded and written by a thread of their own, beside the loop's merge */
	/* text is written fast enough by one thread, which at_sink_thread_start gives it anyway */
	unsigned encoders = d->opt.format == AT_SINK_ATZ ? w.encoders : 1;

	if (w.thread &&
	    at_sink_thread_start(&d->sink, encoders > 1 ? ENCODER_QUEUE_LOG2 : WRITER_QUEUE_LOG2,
				 encoders > 1 ? encoders | w.each_run : encoders) < 0) {
		at_error("cannot start the writing thread: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void reap_child(struct at_session *d)
{
	int status;

	if (d->targets.child.pid <= 0 || d->targets.child_done)
		return;
	if (waitpid(d->targets.child.pid, &status, WNOHANG) == d->targets.child.pid &&
	    (WIFEXITED(status) || WIFSIGNALED(status))) {
		d->targets.child_done = 1;
		d->targets.child_status =
			WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
}

int at_session_attach(struct at_session *d)
{
	sigset_t chld;

	/* the command is started first: it must not inherit our handlers, nor a blocked SIGCHLD */
	if (at_targets_attach(&d->targets) < 0)
		return -1;
	if (!d->opt.command) { /* a launched command was held until recording began */
		at_window_open(d->bpf, AT_WINDOW_SETTLE_MS);
		DISPLAYLEVEL(3, "%s: recording\n", at_program_name);
	}
	/* SIGCHLD (a followed process stopped or ended) is let in only while the loop waits */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (at_signals_install() < 0 || sigprocmask(SIG_BLOCK, &chld, NULL) < 0) {
		at_error("cannot install the signal handlers: %s", strerror(errno));
		return -1;
	}
	at_sig_child = 1; /* the command may have exited already, a process may wait in a stop */
	return 0;
}

/* Whether the processes the trace is about are gone: the command and every process followed
 * from it, or every --pid target and the processes followed from them. */
static int targets_gone(struct at_session *d)
{
	if (d->opt.all || d->table.traced)
		return 0;
	if (d->targets.following && at_follow_expected(&d->targets.follow))
		return 0; /* a process just created, not taken in yet */
	return d->opt.npids || d->targets.child_done || d->targets.child.pid <= 0;
}

/* Every tick: take what the ring holds (the BPF program wakes the daemon only past 1/8 of
 * the ring, so a slow target's events would wait there), give up on missing numbers, record
 * losses and process changes, write out: the file is never more than a tick or two behind. */
int at_session_tick(struct at_session *d)
{
	drain_rings(d);
	at_stacks_tick(&d->stacks); /* held threads whose tables are late go on */
	at_reorder_tick(&d->reorder);
	at_proctable_flush(&d->table, &d->sink, at_reorder_out_to(&d->reorder));
	at_lost_note(&d->lost, events_lost(d), &d->sink);
	at_sink_flush(&d->sink);
	if (!d->opt.all && (!d->targets.following || d->targets.late))
		at_targets_sweep(&d->targets); /* ends that ptrace does not report */
	if (targets_gone(d)) {
		DISPLAYLEVEL(3, "%s: every target has exited\n", at_program_name);
		return 1;
	}
	return 0;
}

void at_session_take_rss(struct at_session *d)
{
	at_proctable_forget(&d->table, at_reorder_out_to(&d->reorder));
	if (at_format_records(d->opt.format))
		d->rss_records += at_rss_sample(&d->table, d->pagesize, &d->sink);
	d->last_rss_ms = at_now_ms();
}

/* The signals the loop polls. 0 to go on, -1 after a failed reopen. */
static int take_signals(struct at_session *d)
{
	if (at_sig_reopen) {
		at_sig_reopen = 0;
		int rc = at_dest_reopen(&d->opt.dest, &d->sink);
		if (rc < 0) {
			d->output_reported = 1;
			return -1;
		}
		if (rc == 1) /* a new trace: its stacks and mappings are written again */
			at_stacks_new_file(&d->stacks);
	}
	if (at_sig_stats) {
		/* the mark goes after every event recorded before the signal */
		at_reorder_mark(&d->reorder, at_sig_stats_time);
		at_sig_stats = 0;
		at_session_take_rss(d);
	}
	if (at_sig_child) {
		at_sig_child = 0;
		if (d->targets.following)
			at_targets_reap(&d->targets); /* every child's status, the command's too */
		else
			reap_child(d);
	}
	return 0;
}

/* Waits up to 100 ms for the ring buffer's wakeup, a process event or a signal (SIGCHLD is
 * let in only here, so a stop that comes just before the wait still ends it), then takes what
 * the ring buffer holds. 0, or -1 after a message. */
static int wait_and_drain(struct at_session *d)
{
	struct pollfd fds[4] = { { at_bpf_ring_fd(d->bpf), POLLIN, 0 },
				 { at_stacks_fd(&d->stacks), POLLIN, 0 },
				 { at_stacks_news_fd(&d->stacks), POLLIN, 0 },
				 { d->targets.events.fd, POLLIN, 0 } };
	/* no wait when stops are left from the last round; a short one after news, which may
	 * come on without a wakeup */
	struct timespec timeout = { 0, at_sig_child ? 0
				       : d->news ? AT_PY_NEWS_WAKE_NS
						 : 100 * 1000000 };
	sigset_t open;

	sigprocmask(SIG_SETMASK, NULL, &open);
	sigdelset(&open, SIGCHLD);
	if (ppoll(fds, 4, &timeout, &open) < 0 && errno != EINTR) {
		at_error("waiting for events failed: %s", strerror(errno));
		return -1;
	}
	/* new Python stacks first: named before their events, which may be in this drain */
	d->news = at_stacks_news(&d->stacks) > 0;
	drain_rings(d);
	if (fds[1].revents) /* tables built off the loop: into the maps */
		at_stacks_built(&d->stacks);
	if (fds[3].revents)
		at_targets_procevents(&d->targets);
	return 0;
}

int at_session_run(struct at_session *d)
{
	uint64_t start = at_now_ms(), last_tick = start, last_progress = start;
	uint64_t progress_done = 0;

	while (!at_sig_stop) {
		if (wait_and_drain(d) < 0)
			return -1;
		uint64_t now = at_now_ms();

		if (now - d->last_rss_ms >= AT_RSS_PERIOD_MS)
			at_session_take_rss(d);
		if (now - last_tick >= TICK_MS) {
			last_tick = now;
			if (at_session_tick(d))
				break;
		}
		if (at_display_level >= 3 && now - last_progress >= PROGRESS_MS) {
			print_progress(d, progress_count(d) - progress_done, now - last_progress);
			progress_done = progress_count(d);
			last_progress = now;
		}
		if (take_signals(d) < 0)
			return -1;
		if (d->targets.child_done && targets_gone(d))
			break;
		if (at_sink_error(&d->sink))
			return -1;
		if (d->opt.duration > 0 && now - start >= (uint64_t)(d->opt.duration * 1000))
			break;
	}
	return 0;
}

/* The ring reservations that failed, ring by ring (the rings are the CPUs'). */
static void print_ring_losses(struct at_session *d)
{
	unsigned n = d->reorder.nrings;
	uint64_t per[n ? n : 1];
	char line[4096];
	size_t at = 0;

	if (at_bpf_lost_by_ring(d->bpf, AT_LOST_RECORDS, per, n) < 0)
		return;
	for (unsigned c = 0; c < n && at < sizeof(line) - 32; c++)
		if (per[c])
			at += (size_t)snprintf(line + at, sizeof(line) - at, " %u:%llu", c,
					       (unsigned long long)per[c]);
	DISPLAYLEVEL(2, "%s: ring reservations failed, by ring (CPU:count):%s\n",
		     at_program_name, line);
}

/* -v: what the links cost: attaching them for single processes, releasing those of ended
 * processes during the trace, and the rest at the end. */
static void print_links(const struct at_session *d)
{
	const struct at_probes *p = &d->probes;

	if (p->attached)
		DISPLAYLEVEL(3, "%s: %llu uprobe links attached for single processes, %.1f us "
			     "each\n", at_program_name, (unsigned long long)p->attached,
			     (double)p->attach_ns / 1e3 / (double)p->attached);
	DISPLAYLEVEL(3, "%s: %llu links of ended processes closed during the trace; detaching "
		     "at the end took %.1f ms\n", at_program_name,
		     (unsigned long long)p->released, (double)d->detach_ns / 1e6);
}

static void print_summary(struct at_session *d)
{
	struct at_sink_stats st;
	uint64_t lost = events_lost(d), counts[AT_COUNTS_COUNT];

	at_bpf_counts(d->bpf, counts);
	at_sink_stats(&d->sink, &st);
	if (d->opt.discard)
		DISPLAYLEVEL(2, "%s: %llu records discarded unread, %llu events lost\n",
			     at_program_name, (unsigned long long)d->reorder.discarded,
			     (unsigned long long)lost);
	else
		DISPLAYLEVEL(2, "%s: %llu events written, %llu events lost, %llu processes seen\n",
			     at_program_name, (unsigned long long)st.written,
			     (unsigned long long)lost, (unsigned long long)d->table.seen);
	DISPLAYLEVEL(3, "%s: %llu reallocs given up, %llu late records, %llu ring reservations "
		     "failed, %llu calls without per-thread state, %llu records out of order in "
		     "their ring\n", at_program_name, (unsigned long long)d->reorder.given_up,
		     (unsigned long long)d->reorder.late_returns,
		     (unsigned long long)d->lost.bpf[AT_LOST_RECORDS],
		     (unsigned long long)d->lost.bpf[AT_LOST_NO_STATE],
		     (unsigned long long)d->reorder.out_of_order);
	if (d->lost.bpf[AT_LOST_RECORDS])
		print_ring_losses(d);
	if (at_display_level >= 3) {
		uint64_t slots, storage;

		at_bpf_states_held(d->bpf, &slots, &storage);
		DISPLAY("%s: per-thread state: %llu threads in their slots, %llu in task storage "
			"(their slot was held); held now: %llu slots, %llu in storage\n",
			at_program_name, (unsigned long long)counts[AT_COUNT_STATE_SLOT],
			(unsigned long long)counts[AT_COUNT_STATE_STORAGE],
			(unsigned long long)slots, (unsigned long long)storage);
	}
	DISPLAYLEVEL(3, "%s: %llu ring wakeups (a CPU's ring holding %u bytes)\n", at_program_name,
		     (unsigned long long)counts[AT_COUNT_WAKEUPS], at_bpf_wakeup_bytes(d->bpf));
	if (d->targets.late_processes || d->targets.events.overflows)
		DISPLAYLEVEL(2, "%s: %llu processes and programs picked up late: their first calls "
			     "are missing%s\n", at_program_name,
			     (unsigned long long)d->targets.late_processes,
			     d->targets.events.overflows ? "; process events were lost too" : "");
	if (d->targets.unchecked)
		DISPLAYLEVEL(2, "%s: %llu programs ended before their allocator could be looked "
			     "at: their calls are missing if it was not probed already\n",
			     at_program_name, (unsigned long long)d->targets.unchecked);
	if (d->targets.unprobed)
		DISPLAYLEVEL(2, "%s: %llu programs whose allocator could not be probed\n",
			     at_program_name, (unsigned long long)d->targets.unprobed);
	print_links(d);
	if (d->targets.scrubbed)
		DISPLAYLEVEL(3, "%s: %llu untraced processes made by fork had their inherited "
			     "breakpoints taken out\n", at_program_name,
			     (unsigned long long)d->targets.scrubbed);
	if (d->targets.following)
		DISPLAYLEVEL(3, "%s: %llu ptrace stops handled, %llu signals passed on\n",
			     at_program_name, (unsigned long long)d->targets.follow.stops,
			     (unsigned long long)d->targets.follow.signals);
}

int at_session_finish(struct at_session *d, int rc)
{
	/* recording off at one instant and every call of the window finished; then let the
	 * processes go (they run on untraced), detach, and write out everything the rings still
	 * hold */
	at_stacks_release_all(&d->stacks); /* held threads finish their calls */
	at_window_close(d->bpf, &d->reorder, AT_WINDOW_WAIT_MS);
	at_targets_stop_loading(&d->targets);
	if (d->targets.following) {
		at_follow_detach_all(&d->targets.follow, 2000);
		reap_child(d);
	}
	uint64_t detach_start = at_now_ns();
	at_detach_all(&d->probes);
	d->detach_ns = at_now_ns() - detach_start;
	d->unfinished = at_window_unfinished(d->bpf);
	at_reorder_finish(&d->reorder);
	at_proctable_flush(&d->table, &d->sink, UINT64_MAX);
	at_lost_note(&d->lost, events_lost(d), &d->sink);
	if (at_sink_flush(&d->sink) < 0) {
		if (!d->output_reported)
			at_dest_report(&d->sink);
		d->output_reported = 1;
		rc = -1;
	}
	if (!at_reader_gone() || at_display_level >= 3) { /* `| head`: quiet, as cat is */
		print_summary(d);
		at_stacks_summary(&d->stacks);
	}
	if (d->targets.child.pid > 0 && rc == 0) {
		/* stopped by a signal or --duration: the command keeps running untraced */
		reap_child(d);
		return d->targets.child_done ? d->targets.child_status : 0;
	}
	return rc < 0 ? 1 : 0;
}

int at_session_close(struct at_session *d, int status)
{
	at_stacks_release_all(&d->stacks);
	if (d->targets.following) {
		at_follow_detach_all(&d->targets.follow, 2000);
		at_follow_free(&d->targets.follow);
		d->targets.following = 0;
	}
	at_procevents_close(&d->targets.events);
	at_proctable_free(&d->table);
	at_probes_free(&d->probes);
	at_targets_free(&d->targets);
	at_stacks_close(&d->stacks);
	at_bpf_close(d->bpf); /* and its ring buffer */
	d->bpf = NULL;
	at_reorder_free(&d->reorder);
	at_pidset_free(&d->targets.loading);
	if (at_sink_close(&d->sink) < 0 && status == 0 && !d->output_reported) {
		at_dest_report(&d->sink);
		status = 1;
	}
	return status;
}
