/* test_daemon_unwind.c: the unwind tables and the BPF walk compiled for user space against
 * libdw's own unwinder, on real processes.
 *
 * Each case runs a program under ptrace with breakpoints on malloc, calloc and realloc (in the
 * C library, or in the executable when it is static). At every compared stop it takes what the BPF program will
 * have (rip, rsp, rbp, a copy of the stack from rsp to the end of its mapping, the executable
 * mappings with their tables and load biases), walks the stack with daemon/stacks/unwind_walk.c, and
 * unwinds the same stopped thread with libdw (dwfl_linux_proc_attach, dwfl_getthread_frames).
 * A stop counts as identical when both reach the outermost frame with the same return addresses,
 * frame by frame, or when the walk is truncated at AT_BPF_MAX_FRAMES and its frames are
 * libdw's first ones.
 *
 * The fixtures (tests/fixtures/unwind_*.c, -O2 -fomit-frame-pointer; a chain through a library,
 * recursion, threads, a static program, a program linked by gold, an allocation in a signal
 * handler) must be identical at every stop; python3 (PYTHONMALLOC=malloc) is sampled and its fraction printed. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../daemon/probes/elfsym.h"
#include "procmaps.h"
#include "../../daemon/stacks/unwind_table.h"
#include "../../daemon/stacks/unwind_walk.h"

#define STACK_COPY_MAX (1u << 20)
#define LIBDW_MAX_FRAMES 512
#define MISMATCHES_SHOWN 3

extern char **environ;

static char fixtures[PATH_MAX];

/* --- the counts ---------------------------------------------------------------------------- */

struct counts {
	unsigned hits;        /* stops at an allocation function */
	unsigned samples;     /* stops compared */
	unsigned identical;   /* complete and identical to libdw */
	unsigned truncated;   /* truncated, identical to libdw's first frames */
	unsigned mismatched;
	unsigned ends[AT_UNWIND_BAD_FRAME + 1];
	unsigned libdw_incomplete;
	unsigned max_frames;
	unsigned thread_samples; /* in a thread other than the main one */
	unsigned marked_samples; /* with a frame in an object whose path contains the marker */
	unsigned fallback_frames;
	uint64_t max_stack_used; /* bytes of stack copy the deepest walk needed */
};

/* One traced run. */
struct oracle {
	pid_t pid;
	unsigned every;       /* compare one stop in every */
	unsigned max_samples;
	const char *marker;
	struct at_unwind_cache cache;
	struct at_stack_tables tables; /* the cache's tables as the BPF program's arrays hold them */
	Dwfl *dwfl;
	char *dwfl_maps;      /* the executable mappings dwfl was reported */
	struct counts c;
	int exit_status;
	const char *failure;
};

/* --- the process's mappings ---------------------------------------------------------------- */

struct process_maps {
	char *text;                         /* /proc/PID/maps */
	struct at_bpf_mappings m;
	char paths[AT_BPF_MAX_MAPPINGS][256];
	uint64_t stack_start, stack_end;    /* the mapping that holds rsp */
};

static char *read_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t n;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len - 1 == 0) {
			char *bigger = realloc(buf, cap *= 2);
			if (!bigger)
				break;
			buf = bigger;
		}
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* The mappings as the BPF program will have them: executable ones with their tables. Also
 * finds the mapping that holds rsp. 0, or -1. */
static int read_process_maps(struct oracle *o, uint64_t rsp, struct process_maps *pm)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)o->pid);
	pm->text = read_file(path);
	pm->m.count = 0;
	pm->stack_start = pm->stack_end = 0;
	if (!pm->text)
		return -1;
	char *copy = strdup(pm->text), *line = copy, *next;
	for (; line && *line; line = next) {
		struct at_procmaps_entry e;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (at_procmaps_parse_line(line, &e) < 0)
			continue;
		if (rsp >= e.start && rsp < e.end) {
			pm->stack_start = e.start;
			pm->stack_end = e.end;
		}
		/* as stack_procs.c gives them: [vsyscall], above user space, is none (the walk's
		 * search compares by the sign of a difference) */
		if (e.perms[2] != 'x' || pm->m.count == AT_BPF_MAX_MAPPINGS || e.start >= 1ull << 47)
			continue;
		struct at_bpf_mapping *m = &pm->m.m[pm->m.count];
		const char *why;
		*m = (struct at_bpf_mapping){ .start = e.start, .end = e.end, .table = AT_BPF_NO_TABLE };
		snprintf(pm->paths[pm->m.count], sizeof(pm->paths[0]), "%s", e.path);
		if (e.path[0] == '/') {
			const struct at_unwind_table *t = at_unwind_cache_get(&o->cache, e.path, &why);
			int64_t bias;
			if (t && at_unwind_table_bias(t, e.start, e.offset, &bias) == 0 &&
			    at_stack_tables_add(&o->tables, t, &m->table) == 0)
				m->bias = bias;
			else
				m->table = AT_BPF_NO_TABLE;
		}
		pm->m.count++;
	}
	free(copy);
	return 0;
}

/* The lines of the executable mappings: when they change, libdw's modules must be reported
 * again. */
static char *executable_lines(const char *maps)
{
	char *out = malloc(strlen(maps) + 1), *o = out;
	const char *line = maps;

	if (!out)
		return NULL;
	while (*line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line + 1) : strlen(line);
		const char *perms = strchr(line, ' ');

		if (perms && perms[3] == 'x') {
			memcpy(o, line, len);
			o += len;
		}
		line += len;
	}
	*o = '\0';
	return out;
}

/* --- libdw's unwinding --------------------------------------------------------------------- */

struct libdw_stack {
	unsigned count;
	uint64_t pcs[LIBDW_MAX_FRAMES];
};

static int collect_frame(Dwfl_Frame *state, void *arg)
{
	struct libdw_stack *s = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	s->pcs[s->count++] = pc;
	return s->count == LIBDW_MAX_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* A Dwfl attached to the (ptrace-stopped) process, reported again when its executable mappings
 * changed. 0, or -1. */
static int attach_libdw(struct oracle *o, const char *maps)
{
	char *lines = executable_lines(maps);

	if (!lines)
		return -1;
	if (o->dwfl && o->dwfl_maps && strcmp(o->dwfl_maps, lines) == 0) {
		free(lines);
		return 0;
	}
	if (o->dwfl)
		dwfl_end(o->dwfl);
	free(o->dwfl_maps);
	o->dwfl_maps = lines;
	o->dwfl = dwfl_begin(&proc_callbacks);
	if (!o->dwfl)
		return -1;
	dwfl_report_begin(o->dwfl);
	if (dwfl_linux_proc_report(o->dwfl, o->pid) != 0 ||
	    dwfl_report_end(o->dwfl, NULL, NULL) != 0 ||
	    dwfl_linux_proc_attach(o->dwfl, o->pid, true) != 0) {
		dwfl_end(o->dwfl);
		o->dwfl = NULL;
		return -1;
	}
	return 0;
}

/* --- one stop ------------------------------------------------------------------------------ */

static const char *object_of(const struct process_maps *pm, uint64_t pc)
{
	const struct at_bpf_mapping *m = at_unwind_find_mapping(&pm->m, pc);

	return m ? pm->paths[m - pm->m.m] : "?";
}

static void show_mismatch(const struct process_maps *pm, const struct at_unwind_result *r,
			  const struct libdw_stack *dw, int dw_rc)
{
	unsigned n = r->count > dw->count ? r->count : dw->count;

	print_message("mismatch: walk %u frames (%s), libdw %u frames (rc %d)\n", r->count,
		      at_unwind_end_name(r->end), dw->count, dw_rc);
	for (unsigned i = 0; i < n && i < 40; i++)
		print_message("  #%-3u %16llx %16llx %s %s\n", i,
			      i < r->count ? (unsigned long long)r->pcs[i] : 0ull,
			      i < dw->count ? (unsigned long long)dw->pcs[i] : 0ull,
			      (i < r->count && i < dw->count && r->pcs[i] == dw->pcs[i]) ? "  " : "!=",
			      object_of(pm, i < dw->count ? dw->pcs[i] : r->pcs[i]));
}

static int passes_marker(const struct oracle *o, const struct process_maps *pm,
			 const struct at_unwind_result *r)
{
	if (!o->marker)
		return 0;
	for (uint32_t i = 0; i < r->count; i++)
		if (strstr(object_of(pm, r->pcs[i]), o->marker))
			return 1;
	return 0;
}

/* Compares the walk and libdw at a stop of thread tid with registers regs. */
static void compare_stop(struct oracle *o, pid_t tid, const struct user_regs_struct *regs)
{
	struct process_maps *pm = calloc(1, sizeof(*pm));
	struct at_unwind_result *r = malloc(sizeof(*r));
	struct libdw_stack *dw = calloc(1, sizeof(*dw));
	uint8_t *copy = malloc(STACK_COPY_MAX);

	if (!pm || !r || !dw || !copy || read_process_maps(o, regs->rsp, pm) < 0) {
		o->failure = "cannot read the process's mappings";
		goto out;
	}
	/* the stack from rsp to the end of its mapping, as far as the copy goes */
	uint64_t len = pm->stack_end > regs->rsp ? pm->stack_end - regs->rsp : 0;
	if (len > STACK_COPY_MAX)
		len = STACK_COPY_MAX;
	struct iovec local = { copy, len }, remote = { (void *)regs->rsp, len };
	ssize_t got = process_vm_readv(o->pid, &local, 1, &remote, 1, 0);
	struct at_unwind_stack stack = { regs->rsp, got > 0 ? (uint64_t)got : 0, copy };
	struct at_unwind_regs uregs = { regs->rip, regs->rsp, regs->rbp };
	at_unwind_walk(&pm->m, &o->tables, &uregs, &stack, r);

	if (attach_libdw(o, pm->text) < 0) {
		o->failure = "libdw cannot attach";
		goto out;
	}
	int dw_rc = dwfl_getthread_frames(o->dwfl, tid, collect_frame, dw);

	struct counts *c = &o->c;
	c->samples++;
	c->ends[r->end]++;
	c->fallback_frames += r->fallback_frames;
	if (r->count > c->max_frames)
		c->max_frames = r->count;
	if (r->stack_used > c->max_stack_used)
		c->max_stack_used = r->stack_used;
	if (tid != o->pid)
		c->thread_samples++;
	if (passes_marker(o, pm, r))
		c->marked_samples++;
	if (dw_rc != 0)
		c->libdw_incomplete++;
	int same = r->count <= dw->count && memcmp(r->pcs, dw->pcs, r->count * 8) == 0;
	if (same && r->end == AT_UNWIND_END_OF_STACK && dw_rc == 0 && dw->count == r->count) {
		c->identical++;
	} else if (same && r->end == AT_UNWIND_TRUNCATED && dw->count > r->count) {
		c->truncated++;
	} else {
		if (c->mismatched++ < MISMATCHES_SHOWN)
			show_mismatch(pm, r, dw, dw_rc);
	}
out:
	if (pm)
		free(pm->text);
	free(pm);
	free(r);
	free(dw);
	free(copy);
}

/* --- ptrace -------------------------------------------------------------------------------- */

static uint64_t auxv_entry(pid_t pid)
{
	char path[64];
	uint64_t v[2], entry = 0;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (read(fd, v, sizeof(v)) == sizeof(v) && v[0] != 0)
		if (v[0] == 9 /* AT_ENTRY */)
			entry = v[1];
	close(fd);
	return entry;
}

/* Writes an int3 at addr; the word it replaced goes to *saved. */
static int insert_breakpoint(pid_t pid, uint64_t addr, long *saved)
{
	errno = 0;
	*saved = ptrace(PTRACE_PEEKTEXT, pid, (void *)addr, NULL);
	if (errno)
		return -1;
	if ((*saved & 0xff) == 0xcc) {
		/* the kernel takes a uprobe's stops: this oracle cannot run beside that tracer */
		print_error("an int3 is already at 0x%" PRIx64 " in process %d: another tracer's "
			    "uprobe or breakpoint is there (bpftrace, perf, another alloctapd); "
			    "stop it first\n", addr, (int)pid);
		return -1;
	}
	long word = (*saved & ~0xffL) | 0xcc;
	return ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)word) == 0 ? 0 : -1;
}

static int remove_breakpoint(pid_t pid, uint64_t addr, long saved)
{
	return ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)saved) == 0 ? 0 : -1;
}

/* Runs the stopped process to addr (a breakpoint removed on arrival). 0, or -1. */
static int run_to(pid_t pid, uint64_t addr)
{
	long saved;
	int status;
	struct user_regs_struct regs;

	if (insert_breakpoint(pid, addr, &saved) < 0 || ptrace(PTRACE_CONT, pid, NULL, NULL) < 0)
		return -1;
	if (waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status) ||
	    WSTOPSIG(status) != SIGTRAP || ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0 ||
	    regs.rip != addr + 1)
		return -1;
	regs.rip = addr;
	if (remove_breakpoint(pid, addr, saved) < 0 ||
	    ptrace(PTRACE_SETREGS, pid, NULL, &regs) < 0)
		return -1;
	return 0;
}

/* The allocation functions a breakpoint is set on, in the object that defines malloc. */
static const char *const allocation_functions[] = { "malloc", "calloc", "realloc" };
#define BREAKPOINTS (sizeof(allocation_functions) / sizeof(allocation_functions[0]))

struct breakpoints {
	uint64_t addr[BREAKPOINTS];
	long saved[BREAKPOINTS];
	int from_libc;
};

/* Looks for the allocation functions in one executable mapping: the C library's win over
 * another object's (a static executable). */
static int find_allocation_functions(const struct at_procmaps_entry *e, void *arg)
{
	struct breakpoints *b = arg;
	struct at_elf elf;
	const char *why;
	int libc = at_is_libc_path(e->path);

	if (e->perms[2] != 'x' || (b->addr[0] && (b->from_libc || !libc)))
		return 0;
	if (at_elf_open(&elf, e->path, &why) < 0)
		return 0;
	struct breakpoints found = { .from_libc = libc };
	for (size_t i = 0; i < BREAKPOINTS; i++) {
		uint64_t vaddr, offset;

		if (at_elf_find_function(&elf, allocation_functions[i], &vaddr) == 1 &&
		    at_elf_vaddr_to_offset(&elf, vaddr, &offset) == 0 && offset >= e->offset &&
		    offset < e->offset + (e->end - e->start))
			found.addr[i] = e->start + (offset - e->offset);
	}
	at_elf_close(&elf);
	if (found.addr[0])
		*b = found;
	return 0;
}

/* Sets a breakpoint on every allocation function found. 0, or -1 (no malloc, ptrace failed). */
static int insert_breakpoints(pid_t pid, struct breakpoints *b)
{
	char path[64];
	unsigned long bad;

	memset(b, 0, sizeof(*b));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (at_procmaps_for_each_file(path, find_allocation_functions, b, &bad) != 0 || !b->addr[0])
		return -1;
	for (size_t i = 0; i < BREAKPOINTS; i++)
		if (b->addr[i] && insert_breakpoint(pid, b->addr[i], &b->saved[i]) < 0)
			return -1;
	return 0;
}

/* Steps thread tid over the breakpoint at addr and lets it go on. */
static int step_over(pid_t tid, uint64_t addr, long saved)
{
	int status, sig = 0;

	if (remove_breakpoint(tid, addr, saved) < 0)
		return -1;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, (void *)(long)sig) < 0 ||
		    waitpid(tid, &status, __WALL) != tid)
			return -1;
		if (!WIFSTOPPED(status))
			return 1; /* gone */
		if (WSTOPSIG(status) == SIGTRAP)
			break;
		sig = WSTOPSIG(status) == SIGSTOP ? 0 : WSTOPSIG(status);
	}
	long ignored;
	if (insert_breakpoint(tid, addr, &ignored) < 0)
		return -1;
	return ptrace(PTRACE_CONT, tid, NULL, NULL) == 0 ? 0 : -1;
}

/* At a SIGTRAP stop of tid: a breakpoint hit is compared (one in o->every) and stepped over;
 * anything else goes on. */
static int on_trap(struct oracle *o, pid_t tid, const struct breakpoints *b)
{
	struct user_regs_struct regs;
	size_t i = 0;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
		return -1;
	while (i < BREAKPOINTS && !(b->addr[i] && regs.rip == b->addr[i] + 1))
		i++;
	if (i == BREAKPOINTS)
		return ptrace(PTRACE_CONT, tid, NULL, NULL) == 0 ? 0 : -1;
	regs.rip = b->addr[i];
	if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0)
		return -1;
	if (o->c.hits++ % o->every == 0 && o->c.samples < o->max_samples)
		compare_stop(o, tid, &regs);
	return step_over(tid, b->addr[i], b->saved[i]) < 0 ? -1 : 0;
}

/* Follows every thread of the process until it is gone. */
static void trace_until_exit(struct oracle *o, const struct breakpoints *b)
{
	int status;
	pid_t tid;

	while ((tid = waitpid(-1, &status, __WALL)) != -1 || errno == EINTR) {
		if (tid < 0)
			continue;
		if (!WIFSTOPPED(status)) {
			if (tid == o->pid)
				o->exit_status = status;
			continue;
		}
		int sig = WSTOPSIG(status), rc;
		if (status >> 16)
			rc = (int)ptrace(PTRACE_CONT, tid, NULL, NULL); /* a clone event */
		else if (sig == SIGSTOP)
			rc = (int)ptrace(PTRACE_CONT, tid, NULL, NULL); /* a new thread */
		else if (sig == SIGTRAP)
			rc = on_trap(o, tid, b);
		else
			rc = (int)ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig);
		if (rc < 0 && !o->failure)
			o->failure = "ptrace failed";
	}
}

/* Runs argv (with envp) under ptrace and compares stops at the allocation functions. Never
 * asserts: o->failure says what went wrong, and the process is gone when this returns. */
/* Arrays for the tables of every object the program maps, as large as the BPF program's. 0, or
 * -1 (ENOMEM). */
static int tables_open(struct at_stack_tables *t)
{
	enum { RULES = 1 << 18, PAGES = 1 << 17, ENTRIES = 1 << 22 };
	struct at_unwind_rule *rules = calloc(RULES, sizeof(*rules));
	struct at_unwind_page *pages = calloc(PAGES, sizeof(*pages));
	struct at_unwind_entry *entries = calloc(ENTRIES, sizeof(*entries));
	struct at_bpf_table *dir = calloc(AT_BPF_MAX_TABLES, sizeof(*dir));

	if (rules && pages && entries && dir &&
	    at_stack_tables_init(t, rules, RULES, pages, PAGES, entries, ENTRIES, dir,
				 AT_BPF_MAX_TABLES) == 0)
		return 0;
	free(rules);
	free(pages);
	free(entries);
	free(dir);
	return -1;
}

static void tables_close(struct at_stack_tables *t)
{
	free(t->rules);
	free(t->pages);
	free(t->entries);
	free(t->tables);
	at_stack_tables_free(t);
}

static void trace_program(struct oracle *o, char *const argv[], char *const envp[]);

static void run_oracle(struct oracle *o, char *const argv[], char *const envp[])
{
	if (tables_open(&o->tables) < 0) {
		o->failure = "no memory for the tables' arrays";
		return;
	}
	trace_program(o, argv, envp);
	tables_close(&o->tables);
}

/* Runs the program of argv, comparing the walk with libdw at its stops (struct oracle). */
static void trace_program(struct oracle *o, char *const argv[], char *const envp[])
{
	int status;
	struct breakpoints b;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	o->pid = pid;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
		o->failure = "cannot start the program";
		return;
	}
	/* at the entry point the dynamic loader has mapped every library */
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)) < 0 ||
	    run_to(pid, auxv_entry(pid)) < 0)
		o->failure = "cannot run the program to its entry point";
	else if (insert_breakpoints(pid, &b) < 0 || ptrace(PTRACE_CONT, pid, NULL, NULL) < 0)
		o->failure = "cannot set breakpoints on malloc";
	if (o->failure) {
		kill(pid, SIGKILL);
		while (waitpid(-1, &status, __WALL) != -1 || errno == EINTR)
			;
		return;
	}
	trace_until_exit(o, &b);
	if (o->dwfl)
		dwfl_end(o->dwfl);
	free(o->dwfl_maps);
	at_unwind_cache_free(&o->cache);
}

static void print_counts(const char *name, const struct counts *c)
{
	print_message("%s: %u stops, %u compared: %u complete and identical to libdw, "
		      "%u truncated at %u frames and identical, %u different; up to %u frames "
		      "and %llu bytes of stack, %u in threads, %u frame-pointer frames\n",
		      name, c->hits, c->samples, c->identical, c->truncated, AT_BPF_MAX_FRAMES,
		      c->mismatched, c->max_frames, (unsigned long long)c->max_stack_used,
		      c->thread_samples, c->fallback_frames);
	for (int e = 0; e <= AT_UNWIND_BAD_FRAME; e++)
		if (c->ends[e])
			print_message("  %s: %u\n", at_unwind_end_name((enum at_unwind_end)e),
				      c->ends[e]);
	if (c->libdw_incomplete)
		print_message("  libdw incomplete: %u\n", c->libdw_incomplete);
}

/* --- the cases ----------------------------------------------------------------------------- */

/* Runs a fixture with one argument, comparing every stop; all must be identical. */
static void run_fixture(struct oracle *o, const char *name, const char *arg)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	if (access(path, X_OK) != 0) {
		print_message("%s not built (make tests)\n", path);
		skip();
	}
	char *argv[] = { path, (char *)arg, NULL };
	o->every = 1;
	o->max_samples = 100000;
	run_oracle(o, argv, environ);
	print_counts(name, &o->c);
	if (o->failure)
		fail_msg("%s: %s", name, o->failure);
	assert_true(WIFEXITED(o->exit_status));
	assert_int_equal(WEXITSTATUS(o->exit_status), 0);
	assert_true(o->c.samples > 0);
	assert_int_equal(o->c.mismatched, 0);
	assert_int_equal(o->c.identical + o->c.truncated, o->c.samples);
}

static void test_chain_through_library(void **state)
{
	(void)state;
	struct oracle o = { .marker = "unwind_chain_lib.so" };

	run_fixture(&o, "unwind_chain", "8");
	/* malloc, calloc and realloc in each of 8 rounds, through the library */
	assert_true(o.c.samples >= 24);
	assert_int_equal(o.c.marked_samples, o.c.samples);
}

static void test_deep_recursion(void **state)
{
	(void)state;
	struct oracle o = { 0 };

	run_fixture(&o, "unwind_recursion", "110");
	assert_true(o.c.max_frames > 110);
	assert_int_equal(o.c.truncated, 0);
}

static void test_recursion_truncated(void **state)
{
	(void)state;
	struct oracle o = { 0 };

	run_fixture(&o, "unwind_recursion", "200");
	assert_true(o.c.truncated > 0);
	assert_int_equal(o.c.max_frames, AT_BPF_MAX_FRAMES);
}

static void test_threads(void **state)
{
	(void)state;
	struct oracle o = { 0 };

	run_fixture(&o, "unwind_thread", "3");
	/* four allocations in each thread, ending at the thread start */
	assert_true(o.c.thread_samples >= 12);
}

static void test_static(void **state)
{
	(void)state;
	struct oracle o = { 0 };

	run_fixture(&o, "unwind_static", "8");
	assert_true(o.c.samples >= 8);
}

/* python3 with its allocator set to malloc: a sample of its stops, the fraction printed. */
/* A program linked by GNU gold, its .eh_frame of type SHT_X86_64_UNWIND. */
static void test_gold(void **state)
{
	(void)state;
	struct oracle o = { 0 };

	run_fixture(&o, "unwind_gold", "4");
	assert_true(o.c.samples >= 4);
	assert_int_equal(o.c.fallback_frames, 0);
}

/* malloc in a signal handler: through the signal frame to the interrupted code and _start. */
static void test_signal_handler(void **state)
{
	(void)state;
	struct oracle o = { 0 };

	run_fixture(&o, "unwind_signal", "4");
	assert_true(o.c.samples >= 4);
	assert_true(o.c.max_frames >= 10); /* malloc, handler, the frame, raise's 2, ... _start */
}

static void test_python(void **state)
{
	(void)state;
	static char python[] = "/usr/bin/python3";
	static char opt[] = "-c";
	/* json's C encoder recurses on nested lists; the thread's stack ends at its start */
	static char code[] = "import json, re, threading\n"
			     "d = [{'k': str(i), 'v': [i] * 3} for i in range(1000)]\n"
			     "s = json.dumps(d)\n"
			     "assert len(json.loads(s)) == 1000\n"
			     "assert re.findall(r'\"k\": \"(\\d+)\"', s)[-1] == '999'\n"
			     "n = [1]\n"
			     "for i in range(60): n = [n, str(i)]\n"
			     "t = threading.Thread(target=lambda: json.dumps([n] * 20))\n"
			     "t.start(); t.join()\n";
	char *argv[] = { python, opt, code, NULL };
	size_t n = 0;

	if (access(python, X_OK) != 0)
		skip();
	while (environ[n])
		n++;
	char **envp = calloc(n + 2, sizeof(*envp));
	assert_non_null(envp);
	memcpy(envp, environ, n * sizeof(*envp));
	envp[n] = (char *)"PYTHONMALLOC=malloc";

	struct oracle o = { .every = 61, .max_samples = 2000 };
	run_oracle(&o, argv, envp);
	free(envp);
	print_counts("python3", &o.c);
	if (o.failure)
		fail_msg("python3: %s", o.failure);
	assert_true(WIFEXITED(o.exit_status));
	assert_int_equal(WEXITSTATUS(o.exit_status), 0);
	assert_true(o.c.samples >= 300);
	print_message("python3: %.2f%% of the compared stops complete and identical to libdw\n",
		      100.0 * o.c.identical / o.c.samples);
	assert_true(o.c.identical * 100 >= o.c.samples * 99);
}

/* The fixtures are in build/fixtures, next to build/tests and build/asan/tests. */
static int find_fixtures(void **state)
{
	(void)state;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	unsetenv("DEBUGINFOD_URLS"); /* libdw unwinds from the objects themselves, offline */
	char *dir = dirname(exe);
	snprintf(fixtures, sizeof(fixtures), "%s/../fixtures", dir);
	if (access(fixtures, X_OK) != 0)
		snprintf(fixtures, sizeof(fixtures), "%s/../../fixtures", dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_through_library),
		cmocka_unit_test(test_deep_recursion),
		cmocka_unit_test(test_recursion_truncated),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_gold),
		cmocka_unit_test(test_signal_handler),
		cmocka_unit_test(test_python),
	};

	return cmocka_run_group_tests(tests, find_fixtures, NULL);
}
