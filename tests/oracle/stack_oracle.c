/* stack_oracle: the user call stack of every outermost allocation call of a program, unwound by
 * libdw under ptrace; the reference alloctapd --stacks is compared with.
 *
 * Usage: stack_oracle [-v] [--objects] [--out FILE] -- COMMAND [ARGS...]
 * --objects prints every PC as OBJECT+0xOFFSET (the basename of the object /proc/PID/maps
 * shows at the address, and the file offset), so that runs whose objects were mapped at other
 * addresses compare (`atz_tool stacks --objects` prints a trace's stacks the same way).
 *
 * COMMAND runs with ASLR disabled (ADDR_NO_RANDOMIZE). Its threads are followed, not its child
 * processes. A breakpoint stops every entry of the allocation functions (the probed functions
 * of lib/functions.h but those that free) of the C library it maps, or of the executable when
 * no C library defines them (a static program); names aliasing one address get one
 * breakpoint, named as alloctapd names them (its order: glibc's aligned_alloc is memalign).
 * The breakpoints are set when the dynamic loader reports its libraries mapped
 * (_dl_debug_state), before any constructor runs; in a static program, at its exec.
 *
 * Per thread a depth counts the calls in progress: a breakpoint on each call's return address
 * (checked against the stack pointer) takes it down. A call at depth 0 is outermost and prints
 *     FUNC FLAGS PC0 PC1 ... PCn
 * FLAGS complete (libdw reached the outermost frame), truncated (more than 128 frames: the
 * first 128) or incomplete (libdw stopped with an error); PC0 the entry address, PC1... the
 * return addresses as libdw gives them. A tail jump from one entry to another (glibc's
 * reallocarray to realloc) is one call.
 *
 * The allocator's own calls, as alloctapd decides them (daemon/probes/attach.c, callsites.h): in a
 * shared C library, every `call rel32` straight to one of the family's entry points (free
 * included) from outside every entry point's body is the library's own (glibc's thread exit
 * flushing its cache: 2 such sites in Debian 12's libc.so.6); an outermost call whose return
 * address follows one of them counts in the depth but is not printed. A program that links
 * its malloc statically is left alone: all its calls are printed.
 *
 * When a thread stops at a breakpoint every other thread is stopped too (PTRACE_INTERRUPT)
 * while it is stepped over it, so no thread runs past a breakpoint lifted for the step. A
 * forked child gets the breakpoints out of its memory and is let go; a vfork child shares its
 * parent's memory and is let go as it is (it must not allocate before its exec). After an exec
 * the new program is followed the same way (a wrapper script, `env`): its lines follow.
 * A breakpoint on a return address goes when no call in progress needs it; a thread that hit
 * it just before (its stop not yet seen) runs the original instruction.
 *
 * A uprobe on the same entry (alloctapd or another tracer running at the same time) takes the
 * stops: the kernel handles the trap of a uprobe's int3 itself, so ptrace never sees it. An
 * int3 already there when the breakpoints go in is an error naming the function, the object
 * and the address (the oracle cannot run beside that tracer); one gone when the program exits
 * is an error too; a uprobe that comes after and stays to the end goes unnoticed. Run the two
 * one after the other.
 *
 * Exit status: the command's (128 + N when killed by signal N); 1 on an error, 2 on bad
 * usage. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "display.h"
#include "event.h"
#include "procmaps.h"
#include "stack.h"
#include "../../daemon/probes/callsites.h"
#include "../../daemon/probes/elfsym.h"

#define MAX_THREADS 1024
#define MAX_DEPTH 64
#define MAX_BREAKPOINTS 4096
#define MAX_INTERNAL 4096
#define LOADER_STOPS_MAX 64

/* --- the functions --------------------------------------------------------------------------- */

/* alloctapd's probed functions in its order (daemon/probes/attach.c). free gets no breakpoint (it
 * allocates nothing); it is here because its body counts as inside an entry point. */
#define FUNCTION_NAME(code, word, symbol, ...) #symbol,
static const char *const probed_names[] = { AT_FUNCTIONS(FUNCTION_NAME, AT_FUNC_SKIP,
							 FUNCTION_NAME) };
#define PROBED_COUNT (sizeof(probed_names) / sizeof(probed_names[0]))

/* Whether probed function i (its enum at_probe_func code) allocates: every kind but a free. */
static int is_allocation(unsigned i)
{
	return !at_probe_frees(i);
}

/* The allocation functions of one object, their addresses in the process. */
struct allocator {
	char path[4096];
	int is_libc;
	uint64_t bias;                         /* process address - file vaddr */
	uint64_t vaddr[PROBED_COUNT], size[PROBED_COUNT];
	uint64_t internal[MAX_INTERNAL];       /* return addresses (file vaddr) of its own calls */
	unsigned ninternal;
};

/* --- the traced threads --------------------------------------------------------------------- */

struct frame {
	uint64_t ret, sp; /* the return address, the stack pointer once returned */
};

struct thread {
	pid_t tid;
	int running;        /* resumed, no stop collected since */
	int has_pending;    /* a stop collected while stopping threads, not yet handled */
	int pending_status;
	unsigned depth;
	struct frame frames[MAX_DEPTH];
};

struct breakpoint {
	uint64_t addr;
	uint8_t saved;      /* the byte the int3 replaced */
	int function;       /* index in probed_names of an entry, -1 if none */
	unsigned returns;   /* calls in progress returning here */
};

struct oracle {
	pid_t pid;
	FILE *out;
	struct allocator alloc;
	struct thread threads[MAX_THREADS];
	unsigned nthreads;
	struct breakpoint bps[MAX_BREAKPOINTS];
	unsigned nbps;
	uint64_t lifted[MAX_BREAKPOINTS]; /* addresses breakpoints were lifted from */
	unsigned nlifted;
	Dwfl *dwfl;
	char *dwfl_maps;
	int exit_status;    /* the wait status of the process, -1 before it ends */
	pid_t stopped;      /* a thread stopped now, through which memory is read and written */
	const char *failure;
	char failure_text[4608]; /* a failure that names its place */
	unsigned long lines, traps, nested, internal;
	int objects;        /* --objects */
};

static struct thread *thread_of(struct oracle *o, pid_t tid)
{
	for (unsigned i = 0; i < o->nthreads; i++)
		if (o->threads[i].tid == tid)
			return &o->threads[i];
	return NULL;
}

static struct thread *add_thread(struct oracle *o, pid_t tid)
{
	struct thread *t = thread_of(o, tid);

	if (t)
		return t;
	if (o->nthreads == MAX_THREADS)
		return NULL;
	t = &o->threads[o->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

static void drop_thread(struct oracle *o, pid_t tid)
{
	struct thread *t = thread_of(o, tid);

	if (t)
		*t = o->threads[--o->nthreads];
}

/* --- breakpoints ---------------------------------------------------------------------------- */

/* Writes byte at addr of pid (the word around it read and written back); 0, or -1. */
static int poke_byte(pid_t pid, uint64_t addr, uint8_t byte, uint8_t *old)
{
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)addr, NULL);
	if (errno)
		return -1;
	if (old)
		*old = (uint8_t)(word & 0xff);
	word = (word & ~0xffL) | byte;
	return ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)word) == 0 ? 0 : -1;
}

static struct breakpoint *breakpoint_at(struct oracle *o, uint64_t addr)
{
	for (unsigned i = 0; i < o->nbps; i++)
		if (o->bps[i].addr == addr)
			return &o->bps[i];
	return NULL;
}

/* The breakpoint at addr, planted if new (function -1, no returns). NULL on failure. */
static struct breakpoint *plant(struct oracle *o, uint64_t addr)
{
	struct breakpoint *b = breakpoint_at(o, addr);

	if (b)
		return b;
	if (o->nbps == MAX_BREAKPOINTS)
		return NULL;
	b = &o->bps[o->nbps];
	*b = (struct breakpoint){ .addr = addr, .function = -1 };
	if (poke_byte(o->stopped, addr, 0xcc, &b->saved) < 0)
		return NULL;
	o->nbps++;
	return b;
}

static int was_lifted(const struct oracle *o, uint64_t addr)
{
	for (unsigned i = 0; i < o->nlifted; i++)
		if (o->lifted[i] == addr)
			return 1;
	return 0;
}

/* Lifts b when nothing needs it any more. Other threads run meanwhile: one may have hit it
 * just before, its stop not yet seen (on_trap knows such stale stops by the address). */
static int lift_if_unused(struct oracle *o, struct breakpoint *b)
{
	if (b->function >= 0 || b->returns > 0)
		return 0;
	int rc = poke_byte(o->stopped, b->addr, b->saved, NULL);
	if (!was_lifted(o, b->addr)) {
		if (o->nlifted == MAX_BREAKPOINTS)
			return -1;
		o->lifted[o->nlifted++] = b->addr;
	}
	*b = o->bps[--o->nbps];
	return rc;
}

/* Takes every breakpoint out of pid's memory (a forked copy of the traced process). */
static void lift_all_in(struct oracle *o, pid_t pid)
{
	for (unsigned i = 0; i < o->nbps; i++)
		poke_byte(pid, o->bps[i].addr, o->bps[i].saved, NULL);
}

/* --- the allocator and its own calls -------------------------------------------------------- */

static int function_at(const struct allocator *a, uint64_t vaddr, int inside)
{
	for (unsigned i = 0; i < PROBED_COUNT; i++)
		if (a->vaddr[i] && (vaddr == a->vaddr[i] ||
				    (inside && vaddr > a->vaddr[i] &&
				     vaddr < a->vaddr[i] + a->size[i])))
			return (int)i;
	return -1;
}

/* As daemon/probes/attach.c's note_internal_call: a call (not a jump) from outside every entry
 * point's body; its return address is kept. */
static int note_internal_call(void *arg, const struct at_direct_call *c)
{
	struct allocator *a = arg;

	if (!c->is_call || function_at(a, c->site, 1) >= 0)
		return 0;
	if (a->ninternal == MAX_INTERNAL)
		return 1;
	a->internal[a->ninternal++] = c->site + 5;
	return 0;
}

static int is_internal_return(const struct allocator *a, uint64_t ret)
{
	uint64_t vaddr = ret - a->bias;

	for (unsigned i = 0; i < a->ninternal; i++)
		if (a->internal[i] == vaddr)
			return 1;
	return 0;
}

/* Reads the functions of the object of mapping e into a; the C library's win over another
 * object's. Returns 1 when a now holds this object. */
static int find_allocator(const struct at_procmaps_entry *e, void *arg)
{
	struct allocator *a = arg;
	struct at_elf elf;
	const char *why;
	int libc = at_is_libc_path(e->path);
	uint64_t offset;

	if (e->perms[2] != 'x' || (a->path[0] && (a->is_libc || !libc)))
		return 0;
	if (at_elf_open(&elf, e->path, &why) < 0)
		return 0;
	struct allocator found = { .is_libc = libc };
	for (unsigned i = 0; i < PROBED_COUNT; i++)
		if (at_elf_find_function_extent(&elf, probed_names[i], &found.vaddr[i],
						&found.size[i]) != 1)
			found.vaddr[i] = found.size[i] = 0;
	if (found.vaddr[0] && at_elf_vaddr_to_offset(&elf, found.vaddr[0], &offset) == 0 &&
	    offset >= e->offset && offset < e->offset + (e->end - e->start)) {
		found.bias = e->start + (offset - e->offset) - found.vaddr[0];
		snprintf(found.path, sizeof(found.path), "%s", e->path);
		if (!at_elf_is_program(&elf)) {
			uint64_t targets[PROBED_COUNT];
			unsigned n = 0;
			for (unsigned i = 0; i < PROBED_COUNT; i++)
				if (found.vaddr[i])
					targets[n++] = found.vaddr[i];
			at_elf_find_direct_calls(&elf, targets, n, note_internal_call, &found);
		}
		*a = found;
	}
	at_elf_close(&elf);
	return 0;
}

/* Finds the allocator in the process's mappings and plants a breakpoint on each allocation
 * entry (one per address). 1 when planted, 0 when no mapped object defines malloc yet, -1 on a
 * ptrace failure. */
static int plant_entries(struct oracle *o)
{
	char path[64];
	unsigned long bad;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)o->pid);
	memset(&o->alloc, 0, sizeof(o->alloc));
	o->stopped = o->pid;
	if (at_procmaps_for_each_file(path, find_allocator, &o->alloc, &bad) != 0 ||
	    !o->alloc.path[0])
		return 0;
	for (unsigned i = 0; i < PROBED_COUNT; i++) {
		if (!o->alloc.vaddr[i] || !is_allocation(i))
			continue;
		struct breakpoint *b = plant(o, o->alloc.vaddr[i] + o->alloc.bias);
		if (!b)
			return -1;
		if (b->saved == 0xcc) {
			snprintf(o->failure_text, sizeof(o->failure_text),
				 "an int3 is already at %s's entry (%s, address 0x%" PRIx64 " of the "
				 "file): another tracer's uprobe or breakpoint is there (bpftrace, perf, "
				 "another alloctapd); the kernel takes the stops of a uprobe, so ptrace "
				 "cannot stop there and the oracle cannot run beside that tracer: stop it "
				 "first",
				 probed_names[i], o->alloc.path, o->alloc.vaddr[i]);
			o->failure = o->failure_text;
			return -1;
		}
		if (b->function < 0)
			b->function = (int)i;
	}
	return 1;
}

/* Says (-v) where the breakpoints are and how many of the allocator's own calls it knows. */
static void report_allocator(const struct oracle *o)
{
	if (o->alloc.is_libc)
		at_verbose("%u breakpoints in %s; %u calls it makes straight to its entry points "
			   "are its own", o->nbps, o->alloc.path, o->alloc.ninternal);
	else
		at_verbose("%u breakpoints in %s, a program: all its calls are printed", o->nbps,
			   o->alloc.path);
}

/* --- libdw ---------------------------------------------------------------------------------- */

struct unwound {
	unsigned count;
	uint64_t pcs[AT_STACK_MAX_FRAMES + 1];
};

static int collect_frame(Dwfl_Frame *state, void *arg)
{
	struct unwound *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	u->pcs[u->count++] = pc;
	return u->count == AT_STACK_MAX_FRAMES + 1 ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static char *read_text(const char *path)
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

/* The executable lines of /proc/PID/maps: when they change, libdw's modules are reported
 * again (a dlopen). NULL if unreadable. */
static char *executable_maps(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	char *maps = read_text(path), *o = maps;
	const char *line = maps;
	if (!maps)
		return NULL;
	while (*line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line + 1) : strlen(line);
		const char *perms = strchr(line, ' ');

		if (perms && perms[3] == 'x') {
			memmove(o, line, len);
			o += len;
		}
		line += len;
	}
	*o = '\0';
	return maps;
}

/* A Dwfl attached to the process (its threads ptrace-stopped when unwound), reported again
 * when its executable mappings changed. 0, or -1. */
static int attach_libdw(struct oracle *o)
{
	char *maps = executable_maps(o->pid);

	if (!maps)
		return -1;
	if (o->dwfl && o->dwfl_maps && strcmp(o->dwfl_maps, maps) == 0) {
		free(maps);
		return 0;
	}
	if (o->dwfl)
		dwfl_end(o->dwfl);
	free(o->dwfl_maps);
	o->dwfl_maps = maps;
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

/* Prints " 0xPC", or with --objects " OBJECT+0xOFFSET" through the executable mappings
 * libdw was last attached with (the raw address when none holds pc). */
static void print_pc(struct oracle *o, uint64_t pc)
{
	const char *line = o->objects ? o->dwfl_maps : NULL;

	while (line && *line) {
		unsigned long long start, end, offset;
		int path_at = 0;
		const char *eol = strchr(line, '\n');
		int len = eol ? (int)(eol - line) : (int)strlen(line);

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &offset,
			   &path_at) >= 3 && path_at > 0 && path_at < len && pc >= start &&
		    pc < end) {
			const char *path = line + path_at, *slash = path;
			for (const char *c = path; c < line + len; c++)
				if (*c == '/')
					slash = c + 1;
			fprintf(o->out, " %.*s+0x%llx", (int)(line + len - slash), slash,
				pc - start + offset);
			return;
		}
		line = eol ? eol + 1 : NULL;
	}
	fprintf(o->out, " 0x%" PRIx64, pc);
}

/* Prints the line of an outermost call of function f by thread tid, stopped at its entry. */
static int print_stack(struct oracle *o, pid_t tid, int f)
{
	struct unwound u = { 0 };

	if (attach_libdw(o) < 0) {
		o->failure = "libdw cannot attach to the process";
		return -1;
	}
	int rc = dwfl_getthread_frames(o->dwfl, tid, collect_frame, &u);
	const char *flags = u.count > AT_STACK_MAX_FRAMES ? "truncated"
			    : rc == 0			  ? "complete"
							  : "incomplete";
	if (u.count > AT_STACK_MAX_FRAMES)
		u.count = AT_STACK_MAX_FRAMES;
	fprintf(o->out, "%s %s", probed_names[f], flags);
	for (unsigned i = 0; i < u.count; i++)
		print_pc(o, u.pcs[i]);
	fputc('\n', o->out);
	o->lines++;
	return 0;
}

/* --- stopping and resuming ------------------------------------------------------------------ */

static int is_event(int status, int event)
{
	return (status >> 8) == (SIGTRAP | (event << 8));
}

/* Records a stop of tid collected while other threads were being stopped. */
static void keep_stop(struct oracle *o, pid_t tid, int status)
{
	struct thread *t = add_thread(o, tid);

	if (!t)
		return;
	t->running = 0;
	t->has_pending = 1;
	t->pending_status = status;
}

/* Stops every running thread but except; their stops are kept for later. */
static void stop_others(struct oracle *o, pid_t except)
{
	unsigned waiting = 0;

	for (unsigned i = 0; i < o->nthreads; i++) {
		struct thread *t = &o->threads[i];
		if (t->tid != except && t->running) {
			ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
			waiting++;
		}
	}
	while (waiting > 0) {
		int status;
		pid_t tid = waitpid(-1, &status, __WALL);

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		struct thread *t = thread_of(o, tid);
		if (t && t->running)
			waiting--;
		keep_stop(o, tid, status);
	}
}

/* Resumes the threads stopped by stop_others whose only stop was the interruption. */
static void resume_others(struct oracle *o)
{
	for (unsigned i = 0; i < o->nthreads; i++) {
		struct thread *t = &o->threads[i];
		if (t->has_pending && is_event(t->pending_status, PTRACE_EVENT_STOP) &&
		    WSTOPSIG(t->pending_status) == SIGTRAP) {
			t->has_pending = 0;
			if (ptrace(PTRACE_CONT, t->tid, NULL, NULL) == 0)
				t->running = 1;
		}
	}
}

static void resume(struct oracle *o, struct thread *t, int sig)
{
	if (ptrace(PTRACE_CONT, t->tid, NULL, (void *)(long)sig) == 0)
		t->running = 1;
	else if (errno != ESRCH && !o->failure)
		o->failure = "ptrace cannot resume a thread";
}

/* A thread stopped by stop_others (with an interruption or another stop), or NULL. */
static struct thread *first_stopped(struct oracle *o)
{
	for (unsigned i = 0; i < o->nthreads; i++)
		if (!o->threads[i].running && o->threads[i].has_pending &&
		    WIFSTOPPED(o->threads[i].pending_status))
			return &o->threads[i];
	return NULL;
}

/* Steps t over the breakpoint at addr (the others stopped meanwhile) and resumes it. */
static void step_over(struct oracle *o, struct thread *t, struct breakpoint *b)
{
	int status, sig = 0;
	uint64_t addr = b->addr;
	uint8_t saved = b->saved;

	stop_others(o, t->tid);
	if (poke_byte(t->tid, addr, saved, NULL) < 0)
		goto failed;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, t->tid, NULL, (void *)(long)sig) < 0)
			goto failed;
		pid_t got = waitpid(t->tid, &status, __WALL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got != t->tid)
			goto failed;
		if (!WIFSTOPPED(status)) {
			keep_stop(o, t->tid, status); /* gone (killed by a signal) */
			struct thread *other = first_stopped(o);
			if (other)
				poke_byte(other->tid, addr, 0xcc, NULL);
			resume_others(o);
			return;
		}
		if (WSTOPSIG(status) == SIGTRAP && !(status >> 16))
			break;
		sig = (status >> 16) || WSTOPSIG(status) == SIGSTOP ? 0 : WSTOPSIG(status);
	}
	if (poke_byte(t->tid, addr, 0xcc, NULL) < 0)
		goto failed;
	resume(o, t, 0);
	resume_others(o);
	return;
failed:
	if (errno != ESRCH && !o->failure)
		o->failure = "ptrace cannot step a thread over a breakpoint";
	resume_others(o);
}

/* --- the stops ------------------------------------------------------------------------------ */

/* A SIGTRAP stop of t: a return or an entry at one of the breakpoints, or a real SIGTRAP. */
static void on_trap(struct oracle *o, struct thread *t)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &regs) < 0) {
		if (errno != ESRCH && !o->failure)
			o->failure = "ptrace cannot read a thread's registers";
		return;
	}
	uint64_t addr = regs.rip - 1;
	o->stopped = t->tid;
	o->traps++;
	struct breakpoint *b = breakpoint_at(o, addr);
	if (!b && was_lifted(o, addr)) {
		/* hit before another thread's stop lifted it: run the original instruction */
		errno = 0;
		long word = ptrace(PTRACE_PEEKTEXT, t->tid, (void *)addr, NULL);
		if (errno == 0 && (word & 0xff) != 0xcc) {
			regs.rip = addr;
			if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs) < 0)
				o->failure = "ptrace cannot set a thread's registers";
			else
				resume(o, t, 0);
			return;
		}
	}
	if (!b) {
		resume(o, t, SIGTRAP);
		return;
	}
	regs.rip = addr;
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &regs) < 0) {
		o->failure = "ptrace cannot set a thread's registers";
		return;
	}
	if (b->returns > 0 && t->depth > 0 && t->frames[t->depth - 1].ret == addr &&
	    t->frames[t->depth - 1].sp == regs.rsp) {
		/* a return; a tail jump to another entry (reallocarray to realloc) pushed a
		 * second frame with the same return: both end here */
		while (t->depth > 0 && t->frames[t->depth - 1].ret == addr &&
		       t->frames[t->depth - 1].sp == regs.rsp) {
			t->depth--;
			b->returns--;
		}
	} else if (b->function >= 0) {
		errno = 0;
		uint64_t ret = (uint64_t)ptrace(PTRACE_PEEKDATA, t->tid, (void *)regs.rsp, NULL);
		if (errno) {
			o->failure = "ptrace cannot read a return address";
			return;
		}
		if (t->depth > 0)
			o->nested++;
		else if (o->alloc.is_libc && is_internal_return(&o->alloc, ret))
			o->internal++;
		else if (print_stack(o, t->tid, b->function) < 0)
			return;
		if (t->depth == MAX_DEPTH) {
			o->failure = "allocation calls nested too deep";
			return;
		}
		struct breakpoint *r = plant(o, ret);
		if (!r) {
			o->failure = "cannot plant a breakpoint on a return address";
			return;
		}
		r->returns++;
		t->frames[t->depth++] = (struct frame){ ret, regs.rsp + 8 };
	}
	if (b->function < 0 && b->returns == 0) {
		if (lift_if_unused(o, b) < 0 && !o->failure)
			o->failure = "cannot lift a breakpoint (or too many return addresses)";
		resume(o, t, 0);
		return;
	}
	step_over(o, t, b);
}

/* A fork or vfork child of the traced process: let go (the breakpoints out of a fork child's
 * memory first). */
static void let_child_go(struct oracle *o, pid_t child, int is_fork)
{
	int status;

	while (waitpid(child, &status, __WALL) < 0)
		if (errno != EINTR)
			return;
	if (!WIFSTOPPED(status))
		return;
	if (is_fork)
		lift_all_in(o, child);
	ptrace(PTRACE_DETACH, child, NULL, NULL);
}

/* At the main thread's exit, whether every entry breakpoint is still there: a uprobe
 * registered on the same function by someone else while the program ran finds the oracle's
 * int3 there and keeps it as its own, the kernel handling its traps from then on (ptrace sees
 * none); removed, it puts the original byte back. One that stays to the end leaves no trace
 * the oracle can see: the kernel maps no "[uprobes]" area for a probed instruction it
 * emulates (malloc's push), and a uprobe's existence says nothing of the processes it
 * filters. */
static void check_entries(struct oracle *o, pid_t tid)
{
	for (unsigned i = 0; i < o->nbps; i++) {
		if (o->bps[i].function < 0)
			continue;
		errno = 0;
		long word = ptrace(PTRACE_PEEKTEXT, tid, (void *)o->bps[i].addr, NULL);
		if (errno == 0 && (word & 0xff) != 0xcc && !o->failure)
			o->failure = "a breakpoint at an allocation function's entry was removed "
				     "behind the oracle's back: another tracer's uprobe came there "
				     "while the program ran (the kernel took its stops) and went (it "
				     "put the original byte back), so calls were missed; the oracle "
				     "cannot run beside that tracer";
	}
}

static int plant_when_mapped(struct oracle *o);

/* The process ran exec (a wrapper script or `env` becoming the program): its old image, its
 * breakpoints and its other threads are gone; the new image is followed from its start. */
static void follow_exec(struct oracle *o)
{
	unsigned long former = 0;

	ptrace(PTRACE_GETEVENTMSG, o->pid, NULL, &former);
	at_verbose("%d (thread %lu) ran exec: following its new program", (int)o->pid, former);
	o->nthreads = 0;
	o->nbps = 0;
	o->nlifted = 0;
	if (o->dwfl)
		dwfl_end(o->dwfl);
	o->dwfl = NULL;
	free(o->dwfl_maps);
	o->dwfl_maps = NULL;
	struct thread *t = add_thread(o, o->pid);
	if (plant_when_mapped(o) == 0)
		resume(o, t, 0);
}

/* Handles one stop (or end) of tid. */
static void on_status(struct oracle *o, pid_t tid, int status)
{
	struct thread *t = thread_of(o, tid);

	if (!WIFSTOPPED(status)) {
		if (tid == o->pid)
			o->exit_status = status;
		drop_thread(o, tid);
		return;
	}
	if (!t && !(t = add_thread(o, tid))) {
		o->failure = "too many threads";
		return;
	}
	t->running = 0;
	int sig = WSTOPSIG(status);
	unsigned long msg = 0;
	if (is_event(status, PTRACE_EVENT_CLONE)) {
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0)
			add_thread(o, (pid_t)msg); /* it starts with its own stop */
		resume(o, t, 0);
	} else if (is_event(status, PTRACE_EVENT_FORK) || is_event(status, PTRACE_EVENT_VFORK)) {
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0)
			let_child_go(o, (pid_t)msg, is_event(status, PTRACE_EVENT_FORK));
		resume(o, t, 0);
	} else if (is_event(status, PTRACE_EVENT_EXIT)) {
		if (tid == o->pid)
			check_entries(o, tid);
		resume(o, t, 0);
	} else if (is_event(status, PTRACE_EVENT_EXEC)) {
		follow_exec(o);
		} else if (status >> 16) {
		resume(o, t, 0); /* an interruption, a new thread's first stop, a group stop */
	} else if (sig == SIGTRAP) {
		on_trap(o, t);
	} else {
		resume(o, t, sig);
	}
}

/* The next stop to handle: one kept by stop_others, else the next from waitpid. 1, or 0 when
 * every thread is gone. */
static int next_stop(struct oracle *o, pid_t *tid, int *status)
{
	for (unsigned i = 0; i < o->nthreads; i++) {
		struct thread *t = &o->threads[i];
		if (t->has_pending) {
			t->has_pending = 0;
			*tid = t->tid;
			*status = t->pending_status;
			return 1;
		}
	}
	for (;;) {
		*tid = waitpid(-1, status, __WALL);
		if (*tid >= 0)
			return 1;
		if (errno != EINTR)
			return 0;
	}
}

/* --- starting the program ------------------------------------------------------------------- */

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

/* The dynamic loader's _dl_debug_state in the process, 0 when none is mapped (static). */
static int find_loader_hook(const struct at_procmaps_entry *e, void *arg)
{
	uint64_t *hook = arg, vaddr, offset;
	struct at_elf elf;
	const char *why;

	if (*hook || e->perms[2] != 'x' || at_elf_open(&elf, e->path, &why) < 0)
		return 0;
	if (at_elf_find_function(&elf, "_dl_debug_state", &vaddr) == 1 &&
	    at_elf_vaddr_to_offset(&elf, vaddr, &offset) == 0 && offset >= e->offset &&
	    offset < e->offset + (e->end - e->start))
		*hook = e->start + (offset - e->offset);
	at_elf_close(&elf);
	return 0;
}

/* Says in o->failure_text why run_to stopped short of addr: what, and where the thread was
 * (a SIGTRAP elsewhere: an int3 left at that address by another tracer's uprobe going away as
 * the thread hit it, which the kernel then delivers as a signal). Returns -1. */
static int run_to_failed(struct oracle *o, const char *what, uint64_t addr, int status)
{
	struct user_regs_struct regs;

	if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP &&
	    ptrace(PTRACE_GETREGS, o->pid, NULL, &regs) == 0)
		snprintf(o->failure_text, sizeof(o->failure_text),
			 "%s: a SIGTRAP at 0x%llx, not at the oracle's breakpoint at 0x%" PRIx64
			 " (an int3 of another tracer's uprobe, left as the uprobe went away while "
			 "the program hit it? the oracle cannot run beside that tracer)",
			 what, (unsigned long long)regs.rip - 1, addr);
	else if (WIFEXITED(status))
		snprintf(o->failure_text, sizeof(o->failure_text), "%s: it exited with status %d",
			 what, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(o->failure_text, sizeof(o->failure_text), "%s: it was killed by signal %d",
			 what, WTERMSIG(status));
	else
		snprintf(o->failure_text, sizeof(o->failure_text), "%s: ptrace failed (%s)", what,
			 strerror(errno));
	o->failure = o->failure_text;
	return -1;
}

/* Runs the stopped main thread to addr (the breakpoint lifted on arrival). 0, or -1 with
 * o->failure saying why, after what (the step's name). */
static int run_to(struct oracle *o, uint64_t addr, const char *what)
{
	uint8_t saved;
	int status;
	struct user_regs_struct regs;

	status = 0;
	/* already there (the loader's hook, again): one step off it first */
	if (ptrace(PTRACE_GETREGS, o->pid, NULL, &regs) < 0)
		return run_to_failed(o, what, addr, status);
	if (regs.rip == addr && (ptrace(PTRACE_SINGLESTEP, o->pid, NULL, NULL) < 0 ||
				 waitpid(o->pid, &status, __WALL) != o->pid || !WIFSTOPPED(status)))
		return run_to_failed(o, what, addr, status);
	if (poke_byte(o->pid, addr, 0xcc, &saved) < 0)
		return run_to_failed(o, what, addr, 0);
	if (saved == 0xcc) { /* its stop would never come: the kernel takes a uprobe's trap */
		snprintf(o->failure_text, sizeof(o->failure_text),
			 "%s: an int3 is already at 0x%" PRIx64 ": another tracer's uprobe or "
			 "breakpoint is there, whose stop ptrace never sees; the oracle cannot run "
			 "beside that tracer", what, addr);
		o->failure = o->failure_text;
		return -1;
	}
	if (ptrace(PTRACE_CONT, o->pid, NULL, NULL) < 0)
		return run_to_failed(o, what, addr, 0);
	for (;;) {
		if (waitpid(o->pid, &status, __WALL) != o->pid || !WIFSTOPPED(status))
			return run_to_failed(o, what, addr, status);
		if (WSTOPSIG(status) == SIGTRAP && !(status >> 16))
			break;
		/* the program's own signals before its libraries are there go on */
		int sig = (status >> 16) ? 0 : WSTOPSIG(status);
		if (ptrace(PTRACE_CONT, o->pid, NULL, (void *)(long)sig) < 0)
			return run_to_failed(o, what, addr, 0);
	}
	if (ptrace(PTRACE_GETREGS, o->pid, NULL, &regs) < 0 || regs.rip != addr + 1)
		return run_to_failed(o, what, addr, status);
	regs.rip = addr;
	if (poke_byte(o->pid, addr, saved, NULL) < 0 ||
	    ptrace(PTRACE_SETREGS, o->pid, NULL, &regs) < 0)
		return run_to_failed(o, what, addr, 0);
	return 0;
}

/* Runs the process to where its libraries are mapped and plants the entry breakpoints. */
static int plant_when_mapped(struct oracle *o)
{
	char path[64];
	uint64_t hook = 0;
	unsigned long bad;

	int planted = plant_entries(o); /* a static program has its malloc already */
	if (planted > 0)
		report_allocator(o);
	if (planted != 0) {
		if (planted < 0)
			o->failure = o->failure ? o->failure : "cannot plant the breakpoints";
		return planted > 0 ? 0 : -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)o->pid);
	at_procmaps_for_each_file(path, find_loader_hook, &hook, &bad);
	if (!hook) {
		if (run_to(o, auxv_entry(o->pid), "cannot run the program to its entry point") < 0)
			return -1;
		int rc = plant_entries(o);
		if (rc > 0)
			report_allocator(o);
		if (rc <= 0)
			o->failure = o->failure ? o->failure
				     : rc < 0  ? "cannot plant the breakpoints"
					       : "the program maps no object defining malloc";
		return rc > 0 ? 0 : -1;
	}
	for (unsigned i = 0; i < LOADER_STOPS_MAX; i++) {
		if (run_to(o, hook, "the program did not come back to its dynamic loader's hook "
				    "(_dl_debug_state) before its libraries were mapped") < 0)
			return -1;
		int rc = plant_entries(o);
		if (rc < 0) {
			o->failure = o->failure ? o->failure : "cannot plant the breakpoints";
			return -1;
		}
		if (rc > 0) {
			report_allocator(o);
			return 0;
		}
	}
	o->failure = "the dynamic loader mapped no object defining malloc";
	return -1;
}

/* Forks and execs argv under PTRACE_SEIZE, without ASLR; stops it at its exec. 0, or -1
 * (o->failure set). */
static int start(struct oracle *o, char *const argv[])
{
	int errpipe[2], status, err = 0;

	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		o->failure = "cannot create a pipe";
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		o->failure = "cannot fork";
		return -1;
	}
	if (pid == 0) {
		close(errpipe[0]);
		if (personality(ADDR_NO_RANDOMIZE) < 0) {
			err = errno;
		} else {
			raise(SIGSTOP);
			execvp(argv[0], argv);
			err = errno;
		}
		if (write(errpipe[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(errpipe[1]);
	o->pid = pid;
	if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SEIZE, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
				  PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_EXITKILL)) < 0 ||
	    kill(pid, SIGCONT) < 0) {
		close(errpipe[0]);
		o->failure = "cannot trace the program";
		kill(pid, SIGKILL);
		waitpid(pid, &status, __WALL);
		return -1;
	}
	for (;;) {
		if (waitpid(pid, &status, __WALL) != pid)
			break;
		if (!WIFSTOPPED(status))
			break;
		if (is_event(status, PTRACE_EVENT_EXEC)) {
			close(errpipe[0]);
			return 0;
		}
		/* the SIGCONT, the stops of the group stop ending */
		ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	ssize_t n = read(errpipe[0], &err, sizeof(err));
	close(errpipe[0]);
	at_error("cannot run %s: %s", argv[0], n == sizeof(err) ? strerror(err) : "it ended");
	o->failure = "";
	return -1;
}

/* Kills the process and reaps its threads. A thread the kill finds in a ptrace stop still
 * stops once more at its exit (PTRACE_EVENT_EXIT): every stop is resumed. */
static void kill_all(struct oracle *o)
{
	pid_t tid;
	int status;

	kill(o->pid, SIGKILL);
	while (next_stop(o, &tid, &status)) {
		if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, tid, NULL, NULL);
		else if (tid == o->pid)
			o->exit_status = status;
	}
}

/* Runs the command and prints its stacks. The process is gone when this returns. */
static void run(struct oracle *o, char *const argv[])
{
	pid_t tid;
	int status;

	o->exit_status = -1;
	if (start(o, argv) < 0)
		return;
	if (plant_when_mapped(o) < 0) {
		kill_all(o);
		return;
	}
	add_thread(o, o->pid);
	resume(o, &o->threads[0], 0);
	while (next_stop(o, &tid, &status)) {
		on_status(o, tid, status);
		if (o->failure) {
			kill_all(o);
			break;
		}
	}
	at_verbose("%lu lines, %lu breakpoint stops; calls not printed: %lu nested in another, "
		   "%lu the C library's own", o->lines, o->traps, o->nested, o->internal);
	if (o->dwfl)
		dwfl_end(o->dwfl);
	free(o->dwfl_maps);
}

static void usage(void)
{
	DISPLAY("Usage: %s [-v] [--objects] [--out FILE] -- COMMAND [ARGS...]\n"
		"Runs COMMAND without ASLR and prints the call stack of each of its outermost\n"
		"allocation calls, unwound by libdw: FUNC FLAGS PC0 PC1 ... PCn.\n"
		"--objects: each PC as OBJECT+0xOFFSET (basename and file offset).\n",
		at_program_name);
}

int main(int argc, char **argv)
{
	static const struct option options[] = { { "out", required_argument, NULL, 'o' },
						 { "objects", no_argument, NULL, 'O' },
						 { "help", no_argument, NULL, 'h' },
						 { NULL, 0, NULL, 0 } };
	const char *out_path = NULL;
	int c, objects = 0;

	at_program_name = "stack_oracle";
	while ((c = getopt_long(argc, argv, "+o:hv", options, NULL)) != -1) {
		if (c == 'v') {
			at_display_step(1);
		} else if (c == 'o') {
			out_path = optarg;
		} else if (c == 'O') {
			objects = 1;
		} else if (c == 'h') {
			usage();
			return AT_EXIT_OK;
		} else {
			return at_usage_error("unknown option");
		}
	}
	if (optind >= argc)
		return at_usage_error("no command given");
	unsetenv("DEBUGINFOD_URLS"); /* libdw unwinds from the objects themselves, offline */

	static struct oracle o;
	o.objects = objects;
	o.out = out_path ? fopen(out_path, "w") : stdout;
	if (!o.out) {
		at_error("cannot open %s: %s", out_path, strerror(errno));
		return AT_EXIT_FAILURE;
	}
	run(&o, argv + optind);
	if (fflush(o.out) != 0 || (out_path && fclose(o.out) != 0)) {
		at_error("cannot write %s: %s", out_path ? out_path : "the standard output",
			 strerror(errno));
		return AT_EXIT_FAILURE;
	}
	if (o.failure) {
		if (o.failure[0])
			at_error("%s: %s", argv[optind], o.failure);
		return AT_EXIT_FAILURE;
	}
	if (o.exit_status == -1) {
		at_error("%s: its end was not seen", argv[optind]);
		return AT_EXIT_FAILURE;
	}
	if (WIFSIGNALED(o.exit_status))
		return 128 + WTERMSIG(o.exit_status);
	return WEXITSTATUS(o.exit_status);
}
