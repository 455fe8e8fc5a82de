/* targets.c: what the daemon traces and where its probes go. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloctap.h"
#include "bpf.h"

#include "discover.h"
#include "display.h"
#include "libcs.h"
#include "caps.h"
#include "liveness.h"
#include "prim.h"
#include "procfs.h"
#include "procmaps.h"
#include "attach.h"
#include "stacks.h"
#include "signals.h"
#include "targets.h"
#include "window.h"

/* After a failed attach: which capabilities a permission error comes from (errno as the
 * attach left it). */
static const char *attach_hint(void)
{
	return errno == EPERM || errno == EACCES ? at_caps_hint(AT_CAPS_ATTACH) : "";
}

/* The time now on the records' clock. */
static uint64_t event_seq(struct at_targets *d)
{
	return d->ops->now(d->ctx);
}

int at_targets_bound(const struct at_targets *d)
{
	return !d->opt->all && !d->opt->shared_probes;
}

/* The id of the file probed for family (1 to AT_OBJECTS_MAX), given now if it has none; 0 when
 * the table is full. Once two objects have ids, a process may map both: the BPF program then
 * records a process's calls only at its allocators' probes. */
static uint32_t object_id(struct at_targets *d, uint64_t dev, uint64_t inode, unsigned family)
{
	for (unsigned i = 0; i < d->nobjects; i++)
		if (d->objects[i].dev == dev && d->objects[i].inode == inode &&
		    d->objects[i].family == family)
			return i + 1;
	if (d->nobjects == AT_OBJECTS_MAX)
		return 0;
	d->objects[d->nobjects].dev = dev;
	d->objects[d->nobjects].inode = inode;
	d->objects[d->nobjects].family = family;
	if (++d->nobjects == 2)
		at_bpf_check_allocators(d->bpf);
	return d->nobjects;
}

int at_targets_probe_family(struct at_targets *d, const char *path, unsigned family, pid_t pid,
			    char *why, size_t whylen)
{
	pid_t scope = at_targets_bound(d) ? pid : -1;
	struct stat st;

	if (family >= AT_FAMILY_COUNT) {
		snprintf(why, whylen, "cannot probe %s: no family %u", path, family);
		return -1;
	}
	if (stat(path, &st) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	uint32_t object = object_id(d, st.st_dev, st.st_ino, family);
	int rc = 0;
	struct at_probed *probed = &d->probed[family];
	if (!at_probed_has(probed, st.st_dev, st.st_ino, scope)) {
		if (object == 0) {
			snprintf(why, whylen, "cannot probe %s: %d objects are probed already",
				 path, AT_OBJECTS_MAX);
			return -1;
		}
		if (at_attach_object(d->bpf, d->probes, path, scope, family, object,
				     &d->objects[object - 1].funcs, why, whylen) < 0)
			return -1;
		if (at_probed_add(probed, st.st_dev, st.st_ino, scope) < 0) {
			at_release_pid(d->probes, scope);
			snprintf(why, whylen, "cannot probe %s: out of memory", path);
			return -1;
		}
		if (!d->objects[object - 1].probed_ns)
			d->objects[object - 1].probed_ns = at_now_ns();
		rc = 1;
	}
	if (pid > 0)
		d->ops->set_allocator(d->ctx, pid, object);
	return rc;
}

int at_targets_probe(struct at_targets *d, const char *path, pid_t pid, char *why,
		     size_t whylen)
{
	return at_targets_probe_family(d, path, AT_FAMILY_C, pid, why, whylen);
}

/* ---- following -------------------------------------------------------------------------- */

/* A process joins the trace: a target of the BPF program, in the table, its start recorded. */
static int take_in(struct at_targets *d, pid_t pid, pid_t parent, unsigned flags,
		   uint64_t time_ns)
{
	if (d->ops->add_target(d->ctx, pid, at_proctable_allocator(d->table, parent)) < 0)
		return -1;
	at_proctable_trace(d->table, pid, parent);
	at_proctable_note(d->table, AT_ATZ_PROCESS_START, pid, flags, 0, time_ns,
			  event_seq(d));
	return 0;
}

/* A program whose allocator could not be probed: counted, and said. */
static void not_probed(struct at_targets *d, pid_t pid, const char *why)
{
	d->unprobed++;
	DISPLAYLEVEL(2, "%s: pid %d: %s: its calls are not recorded\n", at_program_name, (int)pid,
		     why);
}

/* pid no longer waits for its dynamic loader. */
static void loading_done(struct at_targets *d, pid_t pid)
{
	uint32_t key = (uint32_t)pid;

	if (!at_pidset_remove(&d->loading, key))
		return;
	at_bpf_clear_loading(d->bpf, pid);
}

/* Forgets what was probed for pid alone, of every family, and its dynamic loader. */
static void forget_probed(struct at_targets *d, pid_t pid)
{
	for (unsigned f = 0; f < AT_FAMILY_COUNT; f++)
		at_probed_forget(&d->probed[f], pid);
	at_probed_forget(&d->loaders, pid);
}

void at_targets_free(struct at_targets *d)
{
	for (unsigned f = 0; f < AT_FAMILY_COUNT; f++)
		at_probed_free(&d->probed[f]);
	at_probed_free(&d->loaders);
}

/* The files probed for a process (device, inode), read before any is added for another. */
struct probed_files {
	uint64_t (*files)[2];
	unsigned n;
};

static void note_file(void *arg, uint64_t dev, uint64_t inode)
{
	struct probed_files *c = arg;

	c->files[c->n][0] = dev;
	c->files[c->n++][1] = inode;
}

/* Probes for pid, a process its creator parent made (fork, vfork, clone), the files probed for
 * parent: pid maps what parent mapped. 0, or -1 after a message (then its calls from those
 * files are not recorded). */
static int copy_probes(struct at_targets *d, pid_t pid, pid_t parent)
{
	for (unsigned f = 0; f < AT_FAMILY_COUNT; f++) {
		struct at_probed *probed = &d->probed[f];
		uint64_t files[probed->n + 1][2];
		struct probed_files c = { files, 0 };

		at_probed_each(probed, parent, note_file, &c);
		for (unsigned i = 0; i < c.n; i++) {
			uint32_t object = object_id(d, files[i][0], files[i][1], f);
			char why[1536];

			if (at_probed_has(probed, files[i][0], files[i][1], pid))
				continue;
			if (at_attach_again(d->bpf, d->probes, object, pid, why, sizeof(why)) < 0 ||
			    at_probed_add(probed, files[i][0], files[i][1], pid) < 0) {
				not_probed(d, pid, why);
				return -1;
			}
		}
	}
	return 0;
}

/* A traced process has ended: its target goes, its end is recorded, and what was probed for
 * it alone is forgotten (those probes went with it). */
static void ended(void *arg, pid_t pid, int status)
{
	struct at_targets *d = arg;

	if (pid == d->child.pid && !d->child_done) {
		d->child_done = 1;
		d->child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	int traced = at_proctable_traced(d->table, pid);
	if (traced && at_pidset_has(&d->loading, (uint32_t)pid)) {
		loading_done(d, pid);
		not_probed(d, pid, "ended before its dynamic loader had mapped its libraries");
	}
	/* seen and written until the output passes its end; its exit record when traced */
	at_proctable_depart(d->table, pid, status, event_seq(d));
	d->ops->remove_target(d->ctx, pid); /* --all: its allocator's id */
	forget_probed(d, pid);
	at_release_pid(d->probes, pid); /* closed off the loop: each close waits */
	if (traced)
		at_stacks_forget(d->stacks, pid);
}

/* The ELF symbol that the C family's objects define (malloc): the C family's allocator is the
 * one every target has, found by the rule that follows its program (exec stop, loader). */
#define C_FIRST at_family_symbol(AT_FAMILY_C)

/* Probes for pid the allocator of each family after the C family's (which the caller found
 * and probed): each one found among the objects pid maps now; a family that none of them
 * defines is passed over (a program without C++ has no operator new). */
static void probe_other_families(struct at_targets *d, pid_t pid)
{
	for (unsigned f = AT_FAMILY_C + 1; f < AT_FAMILY_COUNT; f++) {
		char obj[4096], why[4608];

		if (at_discover_pid(pid, at_family_symbol(f), obj, sizeof(obj), why, sizeof(why)) < 0)
			continue;
		int rc = at_targets_probe_family(d, obj, f, pid, why, sizeof(why));
		if (rc < 0)
			not_probed(d, pid, why);
		else if (rc > 0)
			DISPLAYLEVEL(3, "%s: pid %d: probing %s for %s\n", at_program_name, (int)pid,
				     obj, at_family_symbol(f));
	}
}

/* Probes obj, the C family's allocator of pid's new program, then the other families'. */
static void probe_program(struct at_targets *d, pid_t pid, const char *obj)
{
	char why[512];
	int rc = at_targets_probe(d, obj, pid, why, sizeof(why));

	if (rc < 0)
		not_probed(d, pid, why);
	else if (rc > 0)
		DISPLAYLEVEL(3, "%s: pid %d executed a new program: probing %s\n", at_program_name,
			     (int)pid, obj);
	if (rc >= 0)
		probe_other_families(d, pid);
}

void at_targets_stop_loading(struct at_targets *d)
{
	/* a removal may move a later pid back into slot i: it is taken there too */
	for (uint32_t i = 0; d->loading.slots && i < AT_PIDSET_CAPACITY; i++)
		while (d->loading.slots[i])
			loading_done(d, (pid_t)d->loading.slots[i]);
}

/* pid, held at its exec stop, runs a program whose libraries its dynamic loader (at path
 * loader) is about to map: it will be held again at the loader's _dl_debug_state, where what it
 * maps tells its allocator. 0, or -1 with why. */
static int await_libraries(struct at_targets *d, pid_t pid, const char *loader, char *why,
			   size_t whylen)
{
	pid_t scope = at_targets_bound(d) ? pid : -1;
	uint32_t key = (uint32_t)pid;
	struct stat st;

	if (stat(loader, &st) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", loader, strerror(errno));
		return -1;
	}
	if (!at_probed_has(&d->loaders, st.st_dev, st.st_ino, scope)) {
		if (at_attach_loader(d->bpf, d->probes, loader, scope, why, whylen) < 0)
			return -1;
		if (at_probed_add(&d->loaders, st.st_dev, st.st_ino, scope) < 0) {
			snprintf(why, whylen, "cannot probe %s: out of memory", loader);
			return -1;
		}
	}
	if (at_bpf_set_loading(d->bpf, pid) < 0) {
		snprintf(why, whylen, "cannot add pid %d to the BPF loading map: %s", (int)pid,
			 strerror(errno));
		return -1;
	}
	at_pidset_add(&d->loading, key);
	return 0;
}

/* pid is held at its dynamic loader's _dl_debug_state once its libraries are mapped (or, when
 * the BPF program cannot read the loader's state, also before). Its allocator is found among
 * what it maps and probed. While the loader is still at work (LD_AUDIT: the auditors' namespace
 * is consistent first, before the program's libraries are listed), pid waits for the loader's
 * next consistent state; one that never lists a library is counted when it ends (ended). */
static void libraries_mapped(struct at_targets *d, pid_t pid)
{
	char obj[4096], loader[4096], why[512];
	int rc = at_discover_loaded(pid, C_FIRST, obj, sizeof(obj), loader, sizeof(loader), why,
				    sizeof(why));

	if (rc > 0) {
		DISPLAYLEVEL(4, "%s: pid %d: %s: held at its next consistent state\n",
			     at_program_name, (int)pid, why);
		return;
	}
	if (rc < 0) {
		if (!at_discover_libraries_mapped(pid))
			return; /* held before the libraries were mapped: the next call */
		loading_done(d, pid);
		not_probed(d, pid, why);
		return;
	}
	loading_done(d, pid);
	at_stacks_scan(d->stacks, pid);
	probe_program(d, pid, obj);
}

/* The allocator of pid's new program at its exec stop: the executable (0, its path in obj), or
 * later, what its dynamic loader maps (1: held at the loader, await_libraries); a loader
 * alloctapd cannot hold at gives the C library found by name (0). -1 with why. */
static int allocator_at_exec_stop(struct at_targets *d, pid_t pid, char *obj, size_t objlen,
				  char *why, size_t whylen)
{
	char loader[4096];
	int rc = at_discover_exec_stop(pid, C_FIRST, obj, objlen, loader, sizeof(loader), why,
				       whylen);

	if (rc != 1)
		return rc;
	if (await_libraries(d, pid, loader, why, whylen) == 0)
		return 1;
	DISPLAYLEVEL(3, "%s: pid %d: %s: its C library is looked for by name\n", at_program_name,
		     (int)pid, why);
	return at_discover_exec(pid, C_FIRST, obj, objlen, why, whylen);
}

/* A traced process runs a new program: its allocator is probed before its first call. held:
 * the process waits at its exec stop (ptrace), so the allocator can be taken from what its
 * dynamic loader maps; else (picked up late) it is found by name. */
static int executed_program(struct at_targets *d, pid_t pid, pid_t former_tid, int held)
{
	char obj[4096], why[4608];

	if (!at_proctable_exec(d->table, pid, d->late ? AT_ATZ_PROCESS_LATE : 0,
			       event_seq(d)))
		return 0;
	if (former_tid != pid) { /* its probes went with the old leader thread */
		forget_probed(d, pid);
		at_detach_pid(d->probes, pid); /* they still run for it: gone before it goes on */
	}
	loading_done(d, pid); /* an exec again before the last program's libraries were mapped */
	at_stacks_exec(d->stacks, pid);
	at_stacks_scan(d->stacks, pid); /* the new program and its dynamic loader */
	int rc = 0;
	if (d->opt->lib)
		snprintf(obj, sizeof(obj), "%s", d->opt->lib);
	else if (held)
		rc = allocator_at_exec_stop(d, pid, obj, sizeof(obj), why, sizeof(why));
	else
		rc = at_discover_exec(pid, C_FIRST, obj, sizeof(obj), why, sizeof(why));
	if (rc == 0)
		probe_program(d, pid, obj);
	else if (rc < 0)
		not_probed(d, pid, why);
	return rc;
}

/* A followed process executed a new program and waits at its exec stop: 1 when it stays
 * stopped there until the tables of its program are built (a program whose dynamic loader is
 * not held at: a static one), 0 to resume it. */
static int executed(void *arg, pid_t pid, pid_t former_tid)
{
	struct at_targets *d = arg;

	if (executed_program(d, pid, former_tid, 1) == 1)
		return 0; /* held again at its loader: the tables wait for there */
	return at_stacks_park(d->stacks, pid, pid);
}

/* A followed process created one: it is taken in while it waits at its first stop. */
static int started(void *arg, pid_t pid, pid_t parent)
{
	struct at_targets *d = arg;

	if (take_in(d, pid, parent, 0, 0) < 0)
		return -1;
	copy_probes(d, pid, parent); /* before it runs: its first call is recorded */
	at_stacks_scan(d->stacks, pid);
	return 0;
}

/* A followed thread is about to receive a signal: the BPF program's AT_BPF_HOLD_SIGNAL is the
 * session's own when it holds a process at its dynamic loader's _dl_debug_state (loading; a
 * SIGSTOP there when the thread blocks the hold signal), or a thread whose stack met a pc in no
 * known mapping (--stacks, stacks.h). */
static int signalled(void *arg, pid_t tid, pid_t tgid, int sig)
{
	struct at_targets *d = arg;

	if ((sig == AT_BPF_HOLD_SIGNAL || sig == SIGSTOP) &&
	    at_pidset_has(&d->loading, (uint32_t)tgid)) {
		libraries_mapped(d, tgid);
		/* its first calls wait for the tables of its mappings: their stacks are whole */
		return at_stacks_park(d->stacks, tid, tgid) ? 2 : 1;
	}
	return sig == AT_BPF_HOLD_SIGNAL ? at_stacks_hold(d->stacks, tid, tgid) : 0;
}

static const struct at_follow_calls follow_calls = { started, executed, ended, signalled };

/* Following through the connector, after ptrace failed: says so once. */
static void follow_late(struct at_targets *d, pid_t pid, const char *why)
{
	if (!d->late)
		DISPLAYLEVEL(2, "%s: cannot follow pid %d with ptrace (%s): %s are picked up late, "
			     "after their first calls (counted in the summary)\n", at_program_name,
			     (int)pid, why, d->opt->follow ? "its new processes and programs"
							   : "the programs it executes");
	d->late = 1;
	if (d->events.fd < 0 && at_procevents_open(&d->events) < 0)
		DISPLAYLEVEL(2, "%s: cannot listen to process events either (%s): new processes "
			     "and programs are not followed\n", at_program_name, strerror(errno));
}

/* What ptrace follows: new processes when the session follows them; else only the programs
 * the traced threads execute, and new threads only when --stacks may hold them (a held thread
 * needs its tracer). Nothing else stops: a thread's creation waits for the daemon only then. */
static enum at_follow_scope follow_scope(const struct at_targets *d)
{
	if (d->opt->follow)
		return AT_FOLLOW_TREE;
	return d->opt->stacks ? AT_FOLLOW_THREADS : AT_FOLLOW_EXECS;
}

/* Follows pid's execs, and its new processes when the session follows them. */
static void follow(struct at_targets *d, pid_t pid)
{
	if (!d->following) {
		if (at_follow_init(&d->follow, follow_scope(d), &follow_calls, d) < 0) {
			follow_late(d, pid, strerror(errno));
			return;
		}
		d->following = 1;
		if (d->opt->follow)
			DISPLAYLEVEL(3, "%s: following new processes with ptrace; each gets probes "
				     "of its own while it is held at its first stop\n",
				     at_program_name);
	}
	if (at_follow_seize(&d->follow, pid) < 0)
		follow_late(d, pid, strerror(errno));
	/* a program executed by a thread created later is picked up through process events, and
	 * a process made by fork is told of there (its inherited breakpoints go) */
	if (d->following && d->follow.scope != AT_FOLLOW_TREE && d->events.fd < 0 &&
	    at_procevents_open(&d->events) < 0)
		DISPLAYLEVEL(2, "%s: cannot listen to process events (%s): a program executed by a "
			     "thread created after the attach is not followed, and a process made "
			     "by fork takes the trap on every call\n", at_program_name,
			     strerror(errno));
	d->ops->hold_threads(d->ctx, d->following && !d->late); /* held threads need a tracer */
}

void at_targets_reap(struct at_targets *d)
{
	if (d->following && at_follow_reap(&d->follow, 512) == 512)
		at_sig_child = 1; /* more wait: the loop comes back at once */
}

/* --pid alone: whether traced process pid executed a program from a thread ptrace does not
 * follow (created after the attach): no exec stop comes, and the new program runs untraced. */
static int untraced_exec(struct at_targets *d, pid_t pid)
{
	return d->following && d->follow.scope == AT_FOLLOW_EXECS &&
	       at_proctable_traced(d->table, pid) &&
	       at_proc_status_field(pid, "TracerPid") != (long)getpid();
}

/* --all: a program was executed (event e, read after the fact): its allocator, found from what
 * it maps once its libraries are mapped (else by name), is probed if it is new. A program that
 * ran before its allocator's probes went in (probed now, or a moment ago for another process)
 * is counted as picked up late; one that ended before it could be looked at, as unchecked:
 * either may have calls missing. */
static void all_executed(struct at_targets *d, const struct at_procevent *e)
{
	char obj[4096], why[4608];

	if (at_discover_pid(e->pid, C_FIRST, obj, sizeof(obj), why, sizeof(why)) < 0 &&
	    at_discover_exec(e->pid, C_FIRST, obj, sizeof(obj), why, sizeof(why)) < 0) {
		if (at_process_state(e->pid) != AT_PROCESS_RUNNING) /* gone, or a zombie */
			d->unchecked++;
		else
			not_probed(d, e->pid, why);
		return;
	}
	int rc = at_targets_probe(d, obj, e->pid, why, sizeof(why));
	if (rc < 0) {
		not_probed(d, e->pid, why);
		return;
	}
	if (rc > 0)
		DISPLAYLEVEL(3, "%s: pid %d executed a new program: probing %s\n", at_program_name,
			     (int)e->pid, obj);
	uint32_t object = AT_TARGET_OBJECT(
		AT_TARGET_OF(AT_FAMILY_C, at_proctable_allocator(d->table, e->pid)));
	if (object && d->objects[object - 1].probed_ns > e->time_ns)
		d->late_processes++;
	probe_other_families(d, e->pid);
}

/* pid, a new process that traced process creator made and that is not traced (not
 * following): its inherited breakpoints are taken out, so that it takes no trap (scrub.h). */
static void scrub(struct at_targets *d, pid_t pid, pid_t creator)
{
	int n = at_probes_scrub(d->probes, pid, creator);

	if (n > 0)
		d->scrubbed++;
	if (n < 0 && errno != ENOENT && errno != ESRCH)
		DISPLAYLEVEL(3, "%s: pid %d, made by a traced process: cannot take out the "
			     "breakpoints it inherited (%s): it takes the trap on every call, "
			     "unrecorded\n", at_program_name, (int)pid, strerror(errno));
}

/* One connector event: a process or program picked up late, or (--all) a program whose
 * allocator may be new. */
static void on_procevent(void *arg, const struct at_procevent *e)
{
	struct at_targets *d = arg;

	if (e->pid == getpid())
		return;
	switch (e->kind) {
	case AT_PROCEVENT_FORK:
		if (e->pid != e->tid || at_proctable_traced(d->table, e->pid))
			break;
		if (d->opt->all) {
			/* a new process, also under the number of one that ended */
			at_proctable_appear(d->table, e->pid, e->parent, AT_PROC_TRACED);
			d->ops->inherit_allocator(d->ctx, e->pid, e->parent);
			at_stacks_scan(d->stacks, e->pid);
			at_proctable_note(d->table, AT_ATZ_PROCESS_START, e->pid, 0, 0, 0,
					  event_seq(d));
		} else if (d->late && d->opt->follow && at_proctable_traced(d->table, e->parent) &&
			   take_in(d, e->pid, e->parent, AT_ATZ_PROCESS_LATE, 0) == 0) {
			copy_probes(d, e->pid, e->parent);
			d->late_processes++;
		} else if (!d->opt->follow && at_proctable_traced(d->table, e->parent)) {
			scrub(d, e->pid, e->parent);
		}
		break;
	case AT_PROCEVENT_EXEC:
		if (d->opt->all) {
			at_targets_first_seen(d, e->pid, event_seq(d));
			at_proctable_exec(d->table, e->pid, 0, event_seq(d));
			at_stacks_exec(d->stacks, e->pid);
			at_stacks_scan(d->stacks, e->pid); /* the new program's mappings */
			if (!d->opt->lib)
				all_executed(d, e);
		} else if (d->late && at_proctable_traced(d->table, e->pid)) {
			d->late_processes++;
			executed_program(d, e->pid, e->pid, 0);
		} else if (untraced_exec(d, e->pid)) {
			d->late_processes++;
			executed_program(d, e->pid, e->pid, 0);
			at_follow_seize(&d->follow, e->pid); /* its next exec is held */
		}
		break;
	case AT_PROCEVENT_EXIT:
		if (e->pid == e->tid && (d->opt->all || d->late))
			ended(d, e->pid, e->status);
		break;
	}
}

void at_targets_procevents(struct at_targets *d)
{
	if (d->events.fd >= 0 && at_procevents_read(&d->events, on_procevent, d) < 0)
		DISPLAYLEVEL(2, "%s: reading process events failed: %s\n", at_program_name,
			     strerror(errno));
}

void at_targets_first_seen(struct at_targets *d, pid_t pid, uint64_t seq)
{
	if (!d->opt->all || !at_proctable_records(d->table) || at_proctable_traced(d->table, pid))
		return;
	pid_t parent = (pid_t)at_proc_status_field(pid, "PPid");
	at_proctable_trace(d->table, pid, parent);
	at_proctable_note(d->table, AT_ATZ_PROCESS_START, pid, AT_ATZ_PROCESS_BEFORE, 0,
			  at_proc_start_ns(pid), seq);
}

struct sweep {
	struct at_targets *d;
	pid_t gone[64];
	unsigned n;
};

static void note_gone(void *arg, pid_t pid)
{
	struct sweep *s = arg;

	if (s->n < 64 && !at_any_running(&pid, 1))
		s->gone[s->n++] = pid;
}

void at_targets_sweep(struct at_targets *d)
{
	struct sweep s = { .d = d };

	at_proctable_each(d->table, AT_PROC_TRACED, note_gone, &s);
	for (unsigned i = 0; i < s.n; i++)
		ended(d, s.gone[i], 0);
}

/* ---- the first targets ------------------------------------------------------------------- */

struct mapped_file {
	uint64_t dev, inode;
	int found;
};

static int is_the_file(const struct at_procmaps_entry *e, void *arg)
{
	struct mapped_file *m = arg;

	if (makedev(e->dev_major, e->dev_minor) == m->dev && e->inode == m->inode)
		m->found = 1;
	return m->found;
}

/* Whether pid maps the file at path (its device and inode in /proc/PID/maps). */
static int maps_file(pid_t pid, const char *path)
{
	struct mapped_file m = { 0 };
	struct stat st;
	char maps[64];

	if (stat(path, &st) < 0)
		return 0;
	m.dev = st.st_dev;
	m.inode = st.st_ino;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	at_procmaps_for_each_file(maps, is_the_file, &m, NULL);
	return m.found;
}

/* The object to probe in a running process: --lib (which it must map), or discovered (0, its
 * path in obj); 1 when its dynamic loader is still at work (attached in the middle of an exec),
 * with the loader's path in loader: the process is to be held there. -1 after a message. */
static int object_of_pid(struct at_targets *d, pid_t pid, char *obj, size_t len, char *loader,
			 size_t loaderlen)
{
	char why[512];

	if (!d->opt->lib) {
		int rc = at_discover_loaded(pid, C_FIRST, obj, len, loader, loaderlen, why,
					    sizeof(why));
		if (rc >= 0)
			return rc;
		at_error("%s", why);
		return -1;
	}
	if (!maps_file(pid, d->opt->lib)) {
		at_error("pid %d does not map %s (--lib names an object of the process)", (int)pid,
			 d->opt->lib);
		return -1;
	}
	snprintf(obj, len, "%s", d->opt->lib);
	return 0;
}

/* --pid of a process whose dynamic loader is still at work (pid, seized; loader, its path): it
 * is held at the loader's _dl_debug_state as at an exec stop, and its allocator probed there
 * (libraries_mapped); 1 when so. When the loader finished meanwhile (0), obj names its
 * allocator. -1 after a message (not followed by ptrace, or nothing to probe). */
static int hold_at_loader(struct at_targets *d, pid_t pid, const char *loader, char *obj,
			  size_t objlen)
{
	char why[512], again[4096];

	if (!d->following || d->late) {
		if (at_discover_pid(pid, C_FIRST, obj, objlen, why, sizeof(why)) == 0)
			return 0;
		at_error("%s", why);
		return -1;
	}
	if (await_libraries(d, pid, loader, why, sizeof(why)) < 0) {
		at_error("pid %d: %s", (int)pid, why);
		return -1;
	}
	/* the loader may have become consistent before pid was in the loading map */
	int rc = at_discover_loaded(pid, C_FIRST, obj, objlen, again, sizeof(again), why,
				    sizeof(why));
	if (rc > 0) {
		DISPLAYLEVEL(3, "%s: pid %d: %s: held at its dynamic loader until they are\n",
			     at_program_name, (int)pid, why);
		return 1;
	}
	loading_done(d, pid);
	if (rc < 0)
		at_error("%s", why);
	return rc;
}

/* --pid: each target's allocator, for that pid alone, or for every process when following. */
static int attach_pids(struct at_targets *d)
{
	for (unsigned i = 0; i < d->opt->npids; i++) {
		pid_t pid = d->opt->pids[i];
		char obj[4096], loader[4096], why[512];

		switch (at_process_state(pid)) {
		case AT_PROCESS_GONE:
			at_error("no process %d", (int)pid);
			return -1;
		case AT_PROCESS_ZOMBIE:
			at_error("process %d has exited (a zombie its parent has not reaped yet): "
				 "nothing left to trace", (int)pid);
			return -1;
		case AT_PROCESS_KERNEL_THREAD:
			at_error("process %d is a kernel thread: it has no user space to trace",
				 (int)pid);
			return -1;
		case AT_PROCESS_RUNNING:
			break;
		}
		int found = object_of_pid(d, pid, obj, sizeof(obj), loader, sizeof(loader));
		if (found < 0)
			return -1;
		follow(d, pid);
		if (take_in(d, pid, (pid_t)at_proc_status_field(pid, "PPid"), AT_ATZ_PROCESS_BEFORE,
			    at_proc_start_ns(pid)) < 0)
			return -1;
		at_stacks_scan(d->stacks, pid);
		if (found == 1 && (found = hold_at_loader(d, pid, loader, obj, sizeof(obj))) != 0) {
			if (found < 0)
				return -1;
			continue; /* probed at its loader's next consistent state */
		}
		if (at_targets_probe(d, obj, pid, why, sizeof(why)) < 0) {
			at_error("pid %d: %s%s", (int)pid, why, attach_hint());
			return -1;
		}
		DISPLAYLEVEL(3, "%s: pid %d: probing %s\n", at_program_name, (int)pid, obj);
		probe_other_families(d, pid);
	}
	return 0;
}

/* --all: every distinct C library mapped by any process (host and containers), or --lib; the
 * process events connector brings programs that start later with another allocator. */
static int attach_all(struct at_targets *d)
{
	static struct at_libcs libs;
	char why[512];

	if (d->opt->lib) {
		snprintf(libs.objs[0].path, sizeof(libs.objs[0].path), "%s", d->opt->lib);
		libs.n = 1;
	} else if (at_libcs_scan("/proc", &libs) < 0) {
		at_error("cannot read /proc: %s", strerror(errno));
		return -1;
	}
	if (libs.n == 0) {
		at_error("found no C library with malloc in any process");
		return -1;
	}
	for (unsigned i = 0; i < libs.n; i++) {
		if (at_targets_probe(d, libs.objs[i].path, -1, why, sizeof(why)) < 0) {
			at_error("%s%s", why, attach_hint());
			return -1;
		}
		DISPLAYLEVEL(3, "%s: probing %s in every process\n", at_program_name,
			     libs.objs[i].path);
	}
	if (!d->opt->lib && at_procevents_open(&d->events) < 0)
		DISPLAYLEVEL(2, "%s: cannot listen to process events (%s): programs started later "
			     "with another allocator are not probed\n", at_program_name,
			     strerror(errno));
	DISPLAYLEVEL(2, "%s: tracing every process: each one using %u C librar%s now pays the "
		     "probe cost on every allocation\n", at_program_name, libs.n,
		     libs.n == 1 ? "y" : "ies");
	return 0;
}

/* Takes in the held child and probes obj for it (NULL: nothing yet, its exec stop will);
 * on failure it is made to exit without exec. 0, or -1 after a message. */
static int probe_child(struct at_targets *d, const char *obj)
{
	char why[512];

	if (take_in(d, d->child.pid, getpid(), 0, 0) < 0)
		goto abort;
	if (obj && at_targets_probe(d, obj, d->child.pid, why, sizeof(why)) < 0) {
		at_error("%s%s", why, attach_hint());
		goto abort;
	}
	return 0;
abort:
	if (d->following)
		at_follow_detach_all(&d->follow, 1000);
	at_launch_abort(&d->child);
	at_proctable_untrace(d->table, d->child.pid);
	d->child.pid = 0;
	return -1;
}

/* Launch: fork the held child, follow it, probe it, let it exec. The allocator of a child held
 * by ptrace is found at its exec stop, among what its dynamic loader maps (LD_LIBRARY_PATH,
 * RUNPATH, the loader's cache, all as the loader resolves them); without ptrace it is found
 * before the fork, by name. */
static int attach_launch(struct at_targets *d)
{
	char path[4096], obj[4096], why[512];
	extern char **environ;
	int found = 1;

	if (at_launch_resolve(d->opt->command[0], path, sizeof(path)) < 0) {
		if (errno == ENOENT)
			at_error("cannot find command '%s'", d->opt->command[0]);
		else
			at_error("cannot run '%s': %s", d->opt->command[0], strerror(errno));
		return -1;
	}
	if (d->opt->lib)
		snprintf(obj, sizeof(obj), "%s", d->opt->lib);
	else
		found = at_discover_launch(path, environ, C_FIRST, obj, sizeof(obj), why,
					   sizeof(why)) == 0;
	if (at_launch_start(&d->child, path, d->opt->command) < 0) {
		at_error("cannot start %s: %s", path, strerror(errno));
		return -1;
	}
	follow(d, d->child.pid);
	int at_exec = d->following && !d->late && !d->opt->lib;
	if (probe_child(d, at_exec || !found ? NULL : obj) < 0)
		return -1;
	if (!at_exec && !found) /* found at its exec stop otherwise, or said there */
		not_probed(d, d->child.pid, why);
	DISPLAYLEVEL(3, "%s: launched %s as pid %d, probing %s\n", at_program_name, path,
		     (int)d->child.pid, at_exec ? "its allocator at its exec" : obj);
	at_window_open(d->bpf, 0); /* it has not run yet: recording from its first call */
	DISPLAYLEVEL(3, "%s: recording\n", at_program_name);
	if (at_launch_release(&d->child) < 0) {
		at_error("cannot release the command: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int at_targets_attach(struct at_targets *d)
{
	if (d->opt->npids)
		return attach_pids(d);
	if (d->opt->all)
		return attach_all(d);
	return attach_launch(d);
}
