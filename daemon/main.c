/* alloctapd: traces the malloc family of running processes with eBPF and writes logalloc raw
 * lines (issue 3), in causal order with every lost event counted (issue 4). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloctap.h"
#include "alloctap.skel.h"
#include "attach.h"
#include "probe_site.h"
#include "convert.h"
#include "dest.h"
#include "elfsym.h"
#include "discover.h"
#include "display.h"
#include "launch.h"
#include "maps.h"
#include "pidset.h"
#include "reorder.h"
#include "signals.h"
#include "writer.h"

#define MAX_TARGETS 256
#define DEFAULT_RINGBUF (64u << 20)
#define WINDOW_LOG2 18      /* 256 Ki events in the reorder window */
#define MAX_HELD_REALLOCS 4096
#define TICK_MS 500         /* a missing number is given up after one to two ticks */
#define PROGRESS_MS 2000

static const char usage_text[] =
	"Usage: alloctapd [OPTIONS] --pid PID[,PID...]   attach to running processes\n"
	"       alloctapd [OPTIONS] --all                every process on the system\n"
	"       alloctapd [OPTIONS] -- COMMAND [ARG...]  start COMMAND, trace it from its first "
	"allocation\n"
	"\n"
	"Writes one logalloc raw line per malloc-family call (malloc, calloc, realloc, free,\n"
	"memalign, posix_memalign, aligned_alloc, valloc; pvalloc(n) is written as\n"
	"valloc(n rounded up to the page size), reallocarray(p,n,m) as realloc(p,n*m) with n*m\n"
	"saturated to 18446744073709551615 when it overflows). Lines are in causal order; events\n"
	"that could not be recorded are counted in the summary on stderr.\n"
	"\n"
	"Options:\n"
	"  -o, --output DEST     a decimal number below 10000 is a file descriptor, '-' stdout,\n"
	"                        anything else a path opened for append (default: stdout)\n"
	"  -f, --format FMT      text (logalloc raw lines, the default) or binary (an .atz\n"
	"                        trace: one lz4 frame, with lost-event records; a path is then\n"
	"                        truncated at start, not appended to)\n"
	"  -p, --pid LIST        comma-separated pids to trace; ends when they have all exited\n"
	"  -a, --all             trace every process using a C library (every process then pays\n"
	"                        the probe cost)\n"
	"  -l, --lib PATH        the object whose malloc family to probe (default: found per\n"
	"                        target: the executable if it defines malloc, else LD_PRELOAD,\n"
	"                        else the C library)\n"
	"  -d, --duration SECS   stop after this many seconds\n"
	"      --ringbuf-size N  ring buffer bytes, a power of two >= 4096 (default 67108864)\n"
	"      --probe-at-entry  put every probe at its function's first instruction (by default\n"
	"                        an entry probe without a return probe, free's, moves to the first\n"
	"                        instruction the kernel emulates, so its trap needs no single\n"
	"                        step; -v prints the chosen sites)\n"
	"      --floor           attach the same probes at the same sites but record nothing:\n"
	"                        the cost of the traps alone (for benchmarks)\n"
	"  -v, --verbose         more messages (a progress line every 2 s); -vv adds libbpf's\n"
	"  -q, --quiet           fewer messages (errors only)\n"
	"  -h, --help            this text\n"
	"\n"
	"Signals: SIGINT/SIGTERM detach, drain, flush and exit 0; SIGHUP reopens the output path;\n"
	"SIGUSR1 writes a 'PID PID jemalloc_stats()' line for every traced process.\n"
	"\n"
	"Exit status: 0 ok, 1 runtime error (BPF, attach, output), 2 usage error; with a COMMAND,\n"
	"the command's own status (128+N if killed by signal N), or 0 when SIGINT, SIGTERM or\n"
	"--duration ended the trace first (the command then goes on untraced).\n"
	"Needs root, or CAP_BPF and CAP_PERFMON.\n";

struct options {
	const char *dest;
	const char *lib;
	pid_t pids[MAX_TARGETS];
	unsigned npids;
	int all;
	double duration;
	unsigned long ringbuf_size;
	enum at_format format;
	int floor;      /* --floor: probes that record nothing (benchmark floor) */
	char **command;
};

/* Everything a running daemon holds. */
struct daemon {
	struct options opt;
	struct alloctap *skel;
	struct ring_buffer *ring;
	struct at_probes probes;
	struct at_reorder reorder;
	struct at_writer writer;
	struct at_pidset seen;
	struct at_dest dest;
	struct at_launch child;
	int child_status;
	int child_done;
	uint64_t pagesize;
	volatile uint64_t *ring_pos[2]; /* consumer, producer positions (for -v) */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", at_program_name);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'alloctapd --help'.\n");
	va_end(ap);
	return 2;
}

static int parse_pids(const char *s, struct options *o)
{
	while (*s) {
		char *end;
		long v;

		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || end == s || v <= 0 || v > 0x3fffffff || (*end && *end != ','))
			return -1;
		if (o->npids == MAX_TARGETS)
			return -1;
		o->pids[o->npids++] = (pid_t)v;
		s = *end ? end + 1 : end;
	}
	return o->npids ? 0 : -1;
}

/* Parses the command line; returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "lib", required_argument, NULL, 'l' },
		{ "duration", required_argument, NULL, 'd' },
		{ "ringbuf-size", required_argument, NULL, 'r' },
		{ "probe-at-entry", no_argument, NULL, 'E' },
		{ "floor", no_argument, NULL, 'F' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->ringbuf_size = DEFAULT_RINGBUF;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:f:p:al:d:vqh", longs, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'o':
			o->dest = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "text") == 0)
				o->format = AT_FORMAT_TEXT;
			else if (strcmp(optarg, "binary") == 0)
				o->format = AT_FORMAT_BINARY;
			else
				return usage_error("--format must be text or binary, not '%s'", optarg);
			break;
		case 'p':
			if (parse_pids(optarg, o) < 0)
				return usage_error("bad pid list '%s'", optarg);
			break;
		case 'a':
			o->all = 1;
			break;
		case 'l':
			o->lib = optarg;
			break;
		case 'd':
			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || *end || end == optarg || o->duration <= 0)
				return usage_error("bad duration '%s'", optarg);
			break;
		case 'r':
			errno = 0;
			o->ringbuf_size = strtoul(optarg, &end, 0);
			if (errno || *end || end == optarg || o->ringbuf_size < 4096 ||
			    (o->ringbuf_size & (o->ringbuf_size - 1)) || o->ringbuf_size > (1ul << 30))
				return usage_error("--ringbuf-size must be a power of two from 4096 "
						   "to 1073741824, not '%s'", optarg);
			break;
		case 'E':
			at_probe_placement = 0;
			break;
		case 'F':
			o->floor = 1;
			break;
		case 'v':
			at_display_level++;
			break;
		case 'q':
			at_display_level = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	int modes = (o->npids > 0) + o->all + (o->command != NULL);
	if (modes != 1)
		return usage_error(modes ? "give only one of --pid, --all and a COMMAND"
					 : "give --pid PID, --all or -- COMMAND");
	if (o->dest) {
		struct at_dest d;
		if (at_dest_parse(o->dest, &d) < 0)
			return usage_error("empty output");
	}
	return -1;
}

/* libbpf's own messages: only with -vv (our errors say what failed). */
static int libbpf_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (at_display_level < 4)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Opens the output named by DEST (a binary trace truncates its path at start; SIGHUP's
 * reopen always appends, so nothing is lost when the file was not rotated). 0, or -1 after a
 * message. */
static int open_output(struct daemon *d, int reopen)
{
	struct at_output *out = &d->writer.out;

	at_dest_parse(d->opt.dest ? d->opt.dest : "-", &d->dest);
	if (d->dest.path) {
		int rc = d->opt.format == AT_FORMAT_BINARY && !reopen
				 ? at_output_open(out, d->dest.path)
				 : at_output_open_append(out, d->dest.path);
		if (rc < 0) {
			at_error("cannot open output %s: %s", d->dest.path, strerror(errno));
			return -1;
		}
	} else {
		static char name[32];
		snprintf(name, sizeof(name), d->dest.fd == 1 ? "<stdout>" : "fd %d", d->dest.fd);
		int flags = fcntl(d->dest.fd, F_GETFL);
		if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
			at_error("cannot write to %s: %s", name,
				 flags < 0 ? "it is not open" : "it is open read-only");
			return -1;
		}
		if (at_output_open_fd(out, d->dest.fd, name) < 0) {
			at_error("cannot set up output: %s", strerror(errno));
			return -1;
		}
	}
	if (at_writer_init(&d->writer, d->opt.format) < 0) {
		at_error("cannot start the binary trace on %s: %s", out->name, strerror(errno));
		return -1;
	}
	return 0;
}

/* SIGHUP: the path is reopened (log rotation); a descriptor is kept. */
static int reopen_output(struct daemon *d)
{
	uint64_t events = d->writer.events;

	if (!d->dest.path)
		return at_writer_flush(&d->writer);
	if (at_writer_close(&d->writer) < 0)
		return -1;
	if (open_output(d, 1) < 0)
		return -1;
	d->writer.events = events;
	DISPLAYLEVEL(3, "%s: reopened %s\n", at_program_name, d->dest.path);
	return 0;
}

/* Reorder output: one record in causal order, to the writer. */
static void write_record(void *arg, const struct at_record *rec)
{
	struct daemon *d = arg;
	struct at_event ev;

	at_record_to_event(rec, d->pagesize, &ev);
	at_pidset_add(&d->seen, ev.pid);
	at_writer_put(&d->writer, &ev);
}

static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct daemon *d = ctx;

	if (size < sizeof(struct at_record))
		return 0;
	at_reorder_push(&d->reorder, data);
	return 0;
}

static void write_stats_markers(struct daemon *d)
{
	struct at_event ev = { .func = AT_JEMALLOC_STATS };

	for (uint32_t i = 0; i < AT_PIDSET_CAPACITY; i++) {
		if (!d->seen.slots[i])
			continue;
		ev.pid = ev.tid = d->seen.slots[i];
		at_writer_put(&d->writer, &ev);
	}
}

/* Sums the per-CPU lost counters into lost[AT_LOST_COUNT]. */
static void read_lost(struct daemon *d, uint64_t lost[AT_LOST_COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t values[ncpu > 0 ? ncpu : 1];

	for (uint32_t k = 0; k < AT_LOST_COUNT; k++) {
		lost[k] = 0;
		if (ncpu > 0 && bpf_map_lookup_elem(bpf_map__fd(d->skel->maps.lost), &k, values) == 0)
			for (int c = 0; c < ncpu; c++)
				lost[k] += values[c];
	}
}

static uint64_t events_lost(struct daemon *d)
{
	uint64_t lost[AT_LOST_COUNT];

	read_lost(d, lost);
	return at_reorder_lost_events(&d->reorder, lost[AT_LOST_REALLOCS]) + lost[AT_LOST_NO_STATE];
}

/* Maps the ring's position pages read-only, for the fill level in -v lines. */
static void map_ring_positions(struct daemon *d)
{
	int fd = bpf_map__fd(d->skel->maps.events);
	long page = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < 2; i++) {
		void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, i * page);
		d->ring_pos[i] = p == MAP_FAILED ? NULL : p;
	}
}

/* Tells the writer about events lost since the last call (a binary trace records where). */
static void note_lost(struct daemon *d)
{
	static uint64_t reported;
	uint64_t lost = events_lost(d);

	if (lost > reported)
		at_writer_lost(&d->writer, lost - reported);
	reported = lost;
}

static void print_progress(struct daemon *d, uint64_t events, uint64_t ms)
{
	unsigned fill = 0;

	if (d->ring_pos[0] && d->ring_pos[1])
		fill = (unsigned)((*d->ring_pos[1] - *d->ring_pos[0]) * 100 / d->opt.ringbuf_size);
	DISPLAYLEVEL(3, "%s: %llu events/s, %llu written, %llu lost so far, ring buffer %u%% full, "
		     "%llu in the reorder window\n", at_program_name,
		     (unsigned long long)(ms ? events * 1000 / ms : 0),
		     (unsigned long long)d->writer.events, (unsigned long long)events_lost(d), fill,
		     (unsigned long long)at_reorder_backlog(&d->reorder));
}

static int add_target(struct daemon *d, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;

	at_pidset_add(&d->seen, key);
	if (bpf_map_update_elem(bpf_map__fd(d->skel->maps.targets), &key, &one, BPF_ANY) < 0) {
		at_error("cannot add pid %d to the BPF target map: %s", (int)pid, strerror(errno));
		return -1;
	}
	return 0;
}

/* --pid: find each target's allocator and probe it for that pid only. */
static int attach_pids(struct daemon *d)
{
	for (unsigned i = 0; i < d->opt.npids; i++) {
		pid_t pid = d->opt.pids[i];
		char obj[4096], why[512];

		if (kill(pid, 0) < 0 && errno == ESRCH) {
			at_error("no process %d", (int)pid);
			return -1;
		}
		if (d->opt.lib)
			snprintf(obj, sizeof(obj), "%s", d->opt.lib);
		else if (at_discover_pid(pid, obj, sizeof(obj), why, sizeof(why)) < 0) {
			at_error("%s", why);
			return -1;
		}
		if (add_target(d, pid) < 0)
			return -1;
		if (at_attach_object(d->skel, &d->probes, obj, pid, why, sizeof(why)) < 0) {
			at_error("pid %d: %s", (int)pid, why);
			return -1;
		}
		DISPLAYLEVEL(3, "%s: pid %d: probing %s\n", at_program_name, (int)pid, obj);
	}
	return 0;
}

struct libc_list {
	struct {
		uint64_t dev, inode;
		char path[512];
	} objs[64];
	unsigned n;
	pid_t pid;
};

static int note_libc(const struct at_map_entry *e, void *arg)
{
	struct libc_list *l = arg;
	uint64_t dev = ((uint64_t)e->dev_major << 32) | e->dev_minor;

	if (!at_is_libc_path(e->path))
		return 0;
	for (unsigned i = 0; i < l->n; i++)
		if (l->objs[i].dev == dev && l->objs[i].inode == e->inode)
			return 0;
	if (l->n == sizeof(l->objs) / sizeof(l->objs[0]))
		return 0;
	l->objs[l->n].dev = dev;
	l->objs[l->n].inode = e->inode;
	snprintf(l->objs[l->n].path, sizeof(l->objs[0].path), "/proc/%d/root%s", (int)l->pid,
		 e->path);
	if (at_elf_defines_malloc(l->objs[l->n].path))
		l->n++;
	return 1; /* one C library per process is enough */
}

/* --all: every distinct C library mapped by any process (host and containers). */
static int attach_all(struct daemon *d)
{
	static struct libc_list libs;
	char why[512];

	if (d->opt.lib) {
		snprintf(libs.objs[0].path, sizeof(libs.objs[0].path), "%s", d->opt.lib);
		libs.n = 1;
	} else {
		DIR *proc = opendir("/proc");
		struct dirent *de;

		if (!proc) {
			at_error("cannot read /proc: %s", strerror(errno));
			return -1;
		}
		while ((de = readdir(proc))) {
			char maps[64];

			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			libs.pid = atoi(de->d_name);
			snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)libs.pid);
			at_maps_for_each(maps, note_libc, &libs, NULL);
		}
		closedir(proc);
	}
	if (libs.n == 0) {
		at_error("found no C library with malloc in any process");
		return -1;
	}
	for (unsigned i = 0; i < libs.n; i++) {
		if (at_attach_object(d->skel, &d->probes, libs.objs[i].path, -1, why,
				     sizeof(why)) < 0) {
			at_error("%s", why);
			return -1;
		}
		DISPLAYLEVEL(3, "%s: probing %s in every process\n", at_program_name,
			     libs.objs[i].path);
	}
	DISPLAYLEVEL(2, "%s: tracing every process: each one using %u C librar%s now pays the "
		     "probe cost on every allocation\n", at_program_name, libs.n,
		     libs.n == 1 ? "y" : "ies");
	return 0;
}

/* Launch: fork the held child, probe it, let it exec. */
static int attach_launch(struct daemon *d)
{
	char path[4096], obj[4096], why[512];
	extern char **environ;

	if (at_launch_resolve(d->opt.command[0], path, sizeof(path)) < 0) {
		at_error("cannot find command '%s'", d->opt.command[0]);
		return -1;
	}
	if (d->opt.lib)
		snprintf(obj, sizeof(obj), "%s", d->opt.lib);
	else if (at_discover_launch(path, environ, obj, sizeof(obj), why, sizeof(why)) < 0) {
		at_error("%s", why);
		return -1;
	}
	if (at_launch_start(&d->child, path, d->opt.command) < 0) {
		at_error("cannot start %s: %s", path, strerror(errno));
		return -1;
	}
	if (add_target(d, d->child.pid) < 0 ||
	    at_attach_object(d->skel, &d->probes, obj, d->child.pid, why, sizeof(why)) < 0) {
		if (why[0])
			at_error("%s", why);
		at_launch_abort(&d->child);
		d->child.pid = 0;
		return -1;
	}
	DISPLAYLEVEL(3, "%s: launched %s as pid %d, probing %s\n", at_program_name, path,
		     (int)d->child.pid, obj);
	if (at_launch_release(&d->child) < 0) {
		at_error("cannot release the command: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int load_bpf(struct daemon *d)
{
	int err;

	libbpf_set_print(libbpf_message);
	d->skel = alloctap__open();
	if (!d->skel) {
		at_error("cannot open the BPF program: %s", strerror(errno));
		return -1;
	}
	d->skel->rodata->trace_all = d->opt.all ? 1 : 0;
	d->skel->rodata->self_tgid = (uint32_t)getpid();
	d->skel->rodata->floor_only = d->opt.floor ? 1 : 0;
	d->skel->rodata->wakeup_bytes = d->opt.ringbuf_size / 8;
	bpf_map__set_max_entries(d->skel->maps.events, (uint32_t)d->opt.ringbuf_size);
	err = alloctap__load(d->skel);
	if (err) {
		at_error("cannot load the BPF program: %s%s", strerror(-err),
			 (err == -EPERM || err == -EACCES)
				 ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
		return -1;
	}
	d->skel->links.thread_exit = bpf_program__attach(d->skel->progs.thread_exit);
	if (!d->skel->links.thread_exit) {
		at_error("cannot attach the thread-exit tracepoint: %s", strerror(errno));
		return -1;
	}
	d->ring = ring_buffer__new(bpf_map__fd(d->skel->maps.events), on_ring_record, d, NULL);
	if (!d->ring) {
		at_error("cannot set up the ring buffer: %s", strerror(errno));
		return -1;
	}
	map_ring_positions(d);
	return 0;
}

/* Whether any --pid target is still running (a zombie counts as gone). */
static int targets_alive(struct daemon *d)
{
	for (unsigned i = 0; i < d->opt.npids; i++) {
		char path[64], buf[256];
		int fd;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)d->opt.pids[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		char *paren = strrchr(buf, ')');
		if (paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X')
			return 1;
	}
	return 0;
}

static void reap_child(struct daemon *d)
{
	int status;

	if (d->child.pid <= 0 || d->child_done)
		return;
	if (waitpid(d->child.pid, &status, WNOHANG) == d->child.pid) {
		d->child_done = 1;
		d->child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
}

/* The main loop: drain, tick, progress, signals. 0 when it should stop normally, -1 on an
 * output or ring error. */
static int run(struct daemon *d)
{
	uint64_t start = now_ms(), last_tick = start, last_progress = start;
	uint64_t progress_events = 0;

	while (!at_sig_stop) {
		int err = ring_buffer__poll(d->ring, 100);
		uint64_t now = now_ms();

		if (err < 0 && err != -EINTR) {
			at_error("reading the ring buffer failed: %s", strerror(-err));
			return -1;
		}
		if (now - last_tick >= TICK_MS) {
			at_reorder_tick(&d->reorder);
			note_lost(d);
			at_writer_flush(&d->writer);
			last_tick = now;
			if (d->opt.npids && !targets_alive(d)) {
				DISPLAYLEVEL(3, "%s: every target has exited\n", at_program_name);
				break;
			}
		}
		if (at_display_level >= 3 && now - last_progress >= PROGRESS_MS) {
			print_progress(d, d->writer.events - progress_events, now - last_progress);
			progress_events = d->writer.events;
			last_progress = now;
		}
		if (at_sig_reopen) {
			at_sig_reopen = 0;
			if (reopen_output(d) < 0 && !d->writer.out.err)
				return -1;
		}
		if (at_sig_stats) {
			at_sig_stats = 0;
			write_stats_markers(d);
		}
		if (at_sig_child) {
			at_sig_child = 0;
			reap_child(d);
		}
		if (d->child_done)
			break;
		if (d->writer.out.err)
			return -1;
		if (d->opt.duration > 0 && now - start >= (uint64_t)(d->opt.duration * 1000))
			break;
	}
	return 0;
}

/* Detach, then write out everything the ring buffer and the window still hold. */
static void drain_all(struct daemon *d)
{
	at_detach_all(&d->probes);
	ring_buffer__consume(d->ring);
	at_reorder_finish(&d->reorder, d->skel->bss->next_seq);
	note_lost(d);
}

static void print_summary(struct daemon *d)
{
	uint64_t lost[AT_LOST_COUNT];

	read_lost(d, lost);
	DISPLAYLEVEL(2, "%s: %llu events written, %llu events lost, %u processes seen\n",
		     at_program_name, (unsigned long long)d->writer.events,
		     (unsigned long long)events_lost(d), d->seen.count);
	DISPLAYLEVEL(3, "%s: %llu numbers missing, %llu late records, %llu ring reservations "
		     "failed, %llu calls without per-thread state\n", at_program_name,
		     (unsigned long long)d->reorder.missing, (unsigned long long)d->reorder.late,
		     (unsigned long long)lost[AT_LOST_RECORDS],
		     (unsigned long long)lost[AT_LOST_NO_STATE]);
}

int main(int argc, char **argv)
{
	static struct daemon d;
	int status = 1, attached;

	at_program_name = "alloctapd";
	int rc = parse_options(argc, argv, &d.opt);
	if (rc >= 0)
		return rc;
	d.pagesize = (uint64_t)sysconf(_SC_PAGESIZE);
	d.child.go_fd = -1;
	if (open_output(&d, 0) < 0)
		return 1;
	if (at_pidset_init(&d.seen) < 0 ||
	    at_reorder_init(&d.reorder, WINDOW_LOG2, MAX_HELD_REALLOCS, write_record, &d) < 0) {
		at_error("cannot allocate the daemon's buffers: %s", strerror(errno));
		goto cleanup;
	}
	if (load_bpf(&d) < 0)
		goto cleanup;
	if (d.opt.npids)
		attached = attach_pids(&d);
	else if (d.opt.all)
		attached = attach_all(&d);
	else
		attached = attach_launch(&d);
	if (attached < 0 || at_signals_install() < 0)
		goto cleanup;
	if (d.child.pid > 0)
		reap_child(&d); /* it may have exited already */

	rc = run(&d);
	drain_all(&d);
	if (at_writer_flush(&d.writer) < 0 || d.writer.out.err) {
		at_error("cannot write to %s: %s%s", d.writer.out.name, strerror(d.writer.out.err),
			 d.writer.out.err == EPIPE ? " (the reader closed the output)" : "");
		rc = -1;
	}
	print_summary(&d);
	status = rc < 0 ? 1 : 0;
	if (d.child.pid > 0 && rc == 0) {
		/* stopped by a signal or --duration: the command keeps running untraced */
		reap_child(&d);
		status = d.child_done ? d.child_status : 0;
	}
cleanup:
	at_detach_all(&d.probes);
	ring_buffer__free(d.ring);
	alloctap__destroy(d.skel);
	at_reorder_free(&d.reorder);
	at_pidset_free(&d.seen);
	if (d.writer.out.buf && at_writer_close(&d.writer) < 0 && status == 0) {
		at_error("cannot write to %s: %s", d.writer.out.name, strerror(d.writer.out.err));
		status = 1;
	}
	return status;
}
