/* targets.c: what the daemon traces and where its probes go. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "discover.h"
#include "display.h"
#include "libcs.h"
#include "caps.h"
#include "liveness.h"
#include "procfs.h"
#include "procmaps.h"
#include "session.h"
#include "signals.h"
#include "targets.h"
#include "window.h"

/* After a failed attach: which capabilities a permission error comes from (errno as the
 * attach left it). */
static const char *attach_hint(void)
{
	return errno == EPERM || errno == EACCES ? at_caps_hint(AT_CAPS_ATTACH) : "";
}

int at_targets_bound(const struct at_session *d)
{
	return !d->opt.follow && !d->opt.all;
}

int at_targets_probe(struct at_session *d, const char *path, pid_t pid, char *why,
		     size_t whylen)
{
	pid_t scope = at_targets_bound(d) ? pid : -1;
	struct stat st;

	if (stat(path, &st) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (at_probed_has(&d->probed, st.st_dev, st.st_ino, scope))
		return 0;
	if (d->probed.n == AT_PROBED_MAX) {
		snprintf(why, whylen, "cannot probe %s: %d objects are probed already", path,
			 AT_PROBED_MAX);
		return -1;
	}
	if (at_attach_object(d->skel, &d->probes, path, scope, why, whylen) < 0)
		return -1;
	at_probed_add(&d->probed, st.st_dev, st.st_ino, scope);
	return 1;
}

/* ---- following -------------------------------------------------------------------------- */

/* A process joins the trace: a target of the BPF program, in the table, its start recorded. */
static int take_in(struct at_session *d, pid_t pid, pid_t parent, unsigned flags,
		   uint64_t time_ns)
{
	if (at_session_add_target(d, pid) < 0)
		return -1;
	at_processes_add(&d->procs, pid, parent);
	at_processes_note(&d->procs, AT_ATZ_PROCESS_START, pid, parent, flags, 0, time_ns,
			  at_session_seq(d));
	return 0;
}

/* A traced process has ended: its target goes, its end is recorded. */
static void ended(void *arg, pid_t pid, int status)
{
	struct at_session *d = arg;

	if (pid == d->child.pid && !d->child_done) {
		d->child_done = 1;
		d->child_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	if (!at_processes_has(&d->procs, pid))
		return;
	at_processes_note(&d->procs, AT_ATZ_PROCESS_EXIT, pid, 0, 0, (uint64_t)status, 0,
			  at_session_seq(d));
	at_processes_remove(&d->procs, pid);
	at_stacks_forget(&d->stacks, pid);
	at_session_remove_target(d, pid);
}

/* A traced process runs a new program: its allocator is probed before it goes on. */
static void executed(void *arg, pid_t pid, pid_t former_tid)
{
	struct at_session *d = arg;
	char obj[4096], why[512];

	if (!at_processes_has(&d->procs, pid))
		return;
	at_processes_note(&d->procs, AT_ATZ_PROCESS_EXEC, pid, 0, d->late ? AT_ATZ_PROCESS_LATE : 0,
			  0, 0, at_session_seq(d));
	if (former_tid != pid && !d->opt.follow)
		at_probed_forget(&d->probed, pid); /* its probes went with the old leader thread */
	at_stacks_scan(&d->stacks, pid); /* the new program and its dynamic loader */
	if (d->opt.lib)
		snprintf(obj, sizeof(obj), "%s", d->opt.lib);
	else if (at_discover_exec(pid, obj, sizeof(obj), why, sizeof(why)) < 0)
		goto failed;
	int rc = at_targets_probe(d, obj, pid, why, sizeof(why));
	if (rc < 0)
		goto failed;
	if (rc > 0)
		DISPLAYLEVEL(3, "%s: pid %d executed a new program: probing %s\n", at_program_name,
			     (int)pid, obj);
	return;
failed:
	d->unprobed++;
	DISPLAYLEVEL(2, "%s: pid %d: %s: its calls are not recorded\n", at_program_name, (int)pid,
		     why);
}

/* A followed process created one: it is taken in while it waits at its first stop. */
static int started(void *arg, pid_t pid, pid_t parent)
{
	struct at_session *d = arg;

	if (take_in(d, pid, parent, 0, 0) < 0)
		return -1;
	at_stacks_scan(&d->stacks, pid);
	return 0;
}

/* A followed thread is about to receive a signal: the BPF program's AT_BPF_HOLD_SIGNAL that
 * holds a thread whose stack met a pc in no known mapping is --stacks's own (stacks.h). */
static int signalled(void *arg, pid_t tid, pid_t tgid, int sig)
{
	struct at_session *d = arg;

	return sig == AT_BPF_HOLD_SIGNAL && at_stacks_hold(&d->stacks, tid, tgid);
}

static const struct at_follow_calls follow_calls = { started, executed, ended, signalled };

/* Following through the connector, after ptrace failed: says so once. */
static void follow_late(struct at_session *d, pid_t pid, const char *why)
{
	if (!d->late)
		DISPLAYLEVEL(2, "%s: cannot follow pid %d with ptrace (%s): %s are picked up late, "
			     "after their first calls (counted in the summary)\n", at_program_name,
			     (int)pid, why, d->opt.follow ? "its new processes and programs"
							   : "the programs it executes");
	d->late = 1;
	if (d->events.fd < 0 && at_procevents_open(&d->events) < 0)
		DISPLAYLEVEL(2, "%s: cannot listen to process events either (%s): new processes "
			     "and programs are not followed\n", at_program_name, strerror(errno));
}

/* Follows pid's execs, and its new processes when the session follows them. */
static void follow(struct at_session *d, pid_t pid)
{
	if (!d->following) {
		if (at_follow_init(&d->follow, d->opt.follow ? AT_FOLLOW_TREE : AT_FOLLOW_EXECS,
				   &follow_calls, d) < 0) {
			follow_late(d, pid, strerror(errno));
			return;
		}
		d->following = 1;
		if (d->opt.follow)
			DISPLAYLEVEL(3, "%s: following new processes with ptrace; the probes are "
				     "planted in every process that maps a probed file, and only the "
				     "followed ones are recorded\n", at_program_name);
	}
	if (at_follow_seize(&d->follow, pid) < 0)
		follow_late(d, pid, strerror(errno));
	d->stacks.hold = d->following && !d->late; /* held threads need a tracer */
}

void at_targets_reap(struct at_session *d)
{
	if (d->following && at_follow_reap(&d->follow, 512) == 512)
		at_sig_child = 1; /* more wait: the loop comes back at once */
}

/* One connector event: a process or program picked up late, or (--all) a program whose
 * allocator may be new. */
static void on_procevent(void *arg, const struct at_procevent *e)
{
	struct at_session *d = arg;
	char obj[4096], why[512];

	if (e->pid == getpid())
		return;
	switch (e->kind) {
	case AT_PROCEVENT_FORK:
		if (e->pid != e->tid || at_processes_has(&d->procs, e->pid))
			break;
		if (d->opt.all) {
			at_processes_add(&d->procs, e->pid, e->parent);
			at_stacks_scan(&d->stacks, e->pid);
			at_processes_note(&d->procs, AT_ATZ_PROCESS_START, e->pid, e->parent, 0, 0, 0,
					  at_session_seq(d));
		} else if (d->late && d->opt.follow && at_processes_has(&d->procs, e->parent) &&
			   take_in(d, e->pid, e->parent, AT_ATZ_PROCESS_LATE, 0) == 0) {
			d->late_processes++;
		}
		break;
	case AT_PROCEVENT_EXEC:
		if (d->opt.all) {
			at_targets_first_seen(d, e->pid, at_session_seq(d));
			at_processes_note(&d->procs, AT_ATZ_PROCESS_EXEC, e->pid, 0, 0, 0, 0,
					  at_session_seq(d));
			at_stacks_scan(&d->stacks, e->pid); /* the new program's mappings */
			if (d->opt.lib || at_discover_exec(e->pid, obj, sizeof(obj), why,
							   sizeof(why)) < 0)
				break;
			int rc = at_targets_probe(d, obj, e->pid, why, sizeof(why));
			if (rc > 0) {
				d->late_processes++;
				DISPLAYLEVEL(3, "%s: pid %d executed a new program: probing %s\n",
					     at_program_name, (int)e->pid, obj);
			} else if (rc < 0) {
				d->unprobed++;
			}
		} else if (d->late && at_processes_has(&d->procs, e->pid)) {
			d->late_processes++;
			executed(d, e->pid, e->pid);
		}
		break;
	case AT_PROCEVENT_EXIT:
		if (e->pid == e->tid && (d->opt.all || d->late))
			ended(d, e->pid, e->status);
		break;
	}
}

void at_targets_procevents(struct at_session *d)
{
	if (d->events.fd >= 0 && at_procevents_read(&d->events, on_procevent, d) < 0)
		DISPLAYLEVEL(2, "%s: reading process events failed: %s\n", at_program_name,
			     strerror(errno));
}

void at_targets_first_seen(struct at_session *d, pid_t pid, uint64_t seq)
{
	if (!d->opt.all || !d->procs.records || at_processes_has(&d->procs, pid))
		return;
	pid_t parent = (pid_t)at_proc_status_field(pid, "PPid");
	at_processes_add(&d->procs, pid, parent);
	at_processes_note(&d->procs, AT_ATZ_PROCESS_START, pid, parent, AT_ATZ_PROCESS_BEFORE, 0,
			  at_proc_start_ns(pid), seq);
}

struct sweep {
	struct at_session *d;
	pid_t gone[64];
	unsigned n;
};

static void note_gone(void *arg, pid_t pid)
{
	struct sweep *s = arg;

	if (s->n < 64 && !at_any_running(&pid, 1))
		s->gone[s->n++] = pid;
}

void at_targets_sweep(struct at_session *d)
{
	struct sweep s = { .d = d };

	at_processes_each(&d->procs, note_gone, &s);
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

/* The object to probe in a running process: --lib (which it must map), or discovered. */
static int object_of_pid(struct at_session *d, pid_t pid, char *obj, size_t len)
{
	char why[512];

	if (!d->opt.lib) {
		if (at_discover_pid(pid, obj, len, why, sizeof(why)) == 0)
			return 0;
		at_error("%s", why);
		return -1;
	}
	if (!maps_file(pid, d->opt.lib)) {
		at_error("pid %d does not map %s (--lib names an object of the process)", (int)pid,
			 d->opt.lib);
		return -1;
	}
	snprintf(obj, len, "%s", d->opt.lib);
	return 0;
}

/* --pid: each target's allocator, for that pid alone, or for every process when following. */
static int attach_pids(struct at_session *d)
{
	for (unsigned i = 0; i < d->opt.npids; i++) {
		pid_t pid = d->opt.pids[i];
		char obj[4096], why[512];

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
		if (object_of_pid(d, pid, obj, sizeof(obj)) < 0)
			return -1;
		follow(d, pid);
		if (take_in(d, pid, (pid_t)at_proc_status_field(pid, "PPid"), AT_ATZ_PROCESS_BEFORE,
			    at_proc_start_ns(pid)) < 0)
			return -1;
		at_stacks_scan(&d->stacks, pid);
		if (at_targets_probe(d, obj, pid, why, sizeof(why)) < 0) {
			at_error("pid %d: %s%s", (int)pid, why, attach_hint());
			return -1;
		}
		DISPLAYLEVEL(3, "%s: pid %d: probing %s\n", at_program_name, (int)pid, obj);
	}
	return 0;
}

/* --all: every distinct C library mapped by any process (host and containers), or --lib; the
 * process events connector brings programs that start later with another allocator. */
static int attach_all(struct at_session *d)
{
	static struct at_libcs libs;
	char why[512];

	if (d->opt.lib) {
		snprintf(libs.objs[0].path, sizeof(libs.objs[0].path), "%s", d->opt.lib);
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
	if (!d->opt.lib && at_procevents_open(&d->events) < 0)
		DISPLAYLEVEL(2, "%s: cannot listen to process events (%s): programs started later "
			     "with another allocator are not probed\n", at_program_name,
			     strerror(errno));
	DISPLAYLEVEL(2, "%s: tracing every process: each one using %u C librar%s now pays the "
		     "probe cost on every allocation\n", at_program_name, libs.n,
		     libs.n == 1 ? "y" : "ies");
	return 0;
}

/* Probes the held child; on failure it is made to exit without exec. 0, or -1 after a
 * message. */
static int probe_child(struct at_session *d, const char *obj)
{
	char why[512];

	if (take_in(d, d->child.pid, getpid(), 0, 0) < 0)
		goto abort;
	if (at_targets_probe(d, obj, d->child.pid, why, sizeof(why)) < 0) {
		at_error("%s%s", why, attach_hint());
		goto abort;
	}
	return 0;
abort:
	if (d->following)
		at_follow_detach_all(&d->follow, 1000);
	at_launch_abort(&d->child);
	at_processes_remove(&d->procs, d->child.pid);
	d->child.pid = 0;
	return -1;
}

/* Launch: fork the held child, follow it, probe it, let it exec. */
static int attach_launch(struct at_session *d)
{
	char path[4096], obj[4096], why[512];
	extern char **environ;

	if (at_launch_resolve(d->opt.command[0], path, sizeof(path)) < 0) {
		if (errno == ENOENT)
			at_error("cannot find command '%s'", d->opt.command[0]);
		else
			at_error("cannot run '%s': %s", d->opt.command[0], strerror(errno));
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
	follow(d, d->child.pid);
	if (probe_child(d, obj) < 0)
		return -1;
	DISPLAYLEVEL(3, "%s: launched %s as pid %d, probing %s\n", at_program_name, path,
		     (int)d->child.pid, obj);
	at_window_open(d->skel, 0); /* it has not run yet: recording from its first call */
	DISPLAYLEVEL(3, "%s: recording\n", at_program_name);
	if (at_launch_release(&d->child) < 0) {
		at_error("cannot release the command: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int at_targets_attach(struct at_session *d)
{
	if (d->opt.npids)
		return attach_pids(d);
	if (d->opt.all)
		return attach_all(d);
	return attach_launch(d);
}
