/* test_daemon_targets.c: unit tests of the targets policy (daemon/procs/targets.c, and the
 * target operations of daemon/session.c it calls) over the fake BPF program
 * (tests/unit/fake_bpf.c): what the BPF program is told when a process is added, given an
 * allocator, inherits its parent's, has its allocator probed, and departs; a target's
 * allocators of two families, and the family in the probes' cookies. The targets work on the
 * session's context (d->targets), wired by at_session_open. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloctap.h"
#include "fake_bpf.h"
#include "proctable.h"
#include "session.h"
#include "targets.h"

#define LIBC "/lib/" AT_MULTIARCH "/libc.so.6"
#define JEMALLOC "/usr/lib/" AT_MULTIARCH "/libjemalloc.so.2"

static struct at_session session;

/* A session over the fake program, writing a binary trace into a memory file: --pid (one
 * process, bound probes), or following new processes, or --all. */
static struct at_session *open_session_shared(int follow, int all, int shared)
{
	struct at_session *d = &session;

	fake_bpf_reset();
	memset(d, 0, sizeof(*d));
	d->opt.dest.fd = memfd_create("trace", 0);
	d->opt.format = AT_SINK_ATZ;
	d->opt.ringbuf_size = 1 << 16;
	d->opt.npids = all ? 0 : 1;
	d->opt.follow = follow;
	d->opt.all = all;
	d->opt.shared_probes = shared;
	assert_int_equal(at_session_open(d), 0);
	return d;
}

static struct at_session *open_session(int follow, int all)
{
	return open_session_shared(follow, all, 0);
}

static void close_session(struct at_session *d)
{
	assert_int_equal(at_session_close(d, 0), 0);
	assert_int_equal(fake_bpf.closed, 1);
	close(d->opt.dest.fd); /* the output's descriptor is ours */
}

/* The probes are bound to one process, following or not, unless it traces every one or
 * shares a followed tree's probes. */
static void test_bound(void **state)
{
	(void)state;
	static const struct {
		int follow, all, shared, bound;
	} cases[] = { { 0, 0, 0, 1 }, { 1, 0, 0, 1 }, { 0, 1, 0, 0 }, { 1, 0, 1, 0 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_session *d = open_session_shared(cases[i].follow, cases[i].all,
							   cases[i].shared);

		assert_int_equal(at_targets_bound(&d->targets), cases[i].bound);
		assert_int_equal(fake_bpf.options.bound, cases[i].bound);
		assert_int_equal(fake_bpf.options.all, cases[i].all);
		assert_int_equal(fake_bpf.options.max_targets, AT_MAX_TRACED);
		assert_int_equal(fake_bpf.options.self_tgid, (uint32_t)getpid());
		close_session(d);
	}
}

/* A target goes into the program's map with its allocator, and out again. */
static void test_add_remove(void **state)
{
	(void)state;
	struct at_session *d = open_session(0, 0);

	assert_int_equal(at_session_add_target(d, 100, 0), 0);
	assert_int_equal(fake_bpf_target(100), 0);
	assert_int_equal(at_session_add_target(d, 101, AT_TARGET(2, 0x9)), 0);
	assert_int_equal(fake_bpf_target(101), AT_TARGET(2, 0x9));
	assert_int_equal(at_session_allocator(d, 101), AT_TARGET(2, 0x9));
	assert_int_equal(d->table.seen, 2);
	assert_int_equal(at_session_add_target(d, 101, AT_TARGET(2, 0x9)), 0);
	assert_int_equal(d->table.seen, 2); /* the same process */

	at_session_remove_target(d, 101);
	assert_int_equal(fake_bpf_target(101), -1);
	assert_int_equal(at_session_allocator(d, 101), 0);
	assert_int_equal(fake_bpf.ntargets, 1);
	assert_int_equal(at_session_allocator(d, 0), 0);
	assert_int_equal(at_session_allocator(d, -1), 0);

	fake_bpf.target_errno = E2BIG; /* the map is full */
	assert_int_equal(at_session_add_target(d, 102, 0), -1);
	assert_int_equal(fake_bpf_target(102), -1);
	close_session(d);
}

/* An allocator is an object id of the session: the target gets it with the functions probed
 * in that object, and the program's threads look theirs up again; an id the session has not
 * given changes nothing. */
static void test_set_allocator(void **state)
{
	(void)state;
	static const struct {
		uint32_t object;
		int64_t target;   /* pid 100's allocator after, -1: no target */
		uint64_t changes; /* allocators_gen */
	} cases[] = {
		{ 1, AT_TARGET(1, 0x9), 1 },
		{ 2, AT_TARGET(2, 0x3ff), 1 },
		{ 0, -1, 0 },
		{ 3, -1, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_session *d = open_session(0, 0);

		d->targets.nobjects = 2;
		d->targets.objects[0].funcs = 0x9;
		d->targets.objects[1].funcs = 0x3ff;
		at_session_set_allocator(d, 100, cases[i].object);
		assert_int_equal(fake_bpf_target(100), cases[i].target);
		assert_int_equal(fake_bpf.allocators_gen, cases[i].changes);
		close_session(d);
	}
}

/* --all: a new process has its parent's allocator, if the parent has one. */
static void test_inherit(void **state)
{
	(void)state;
	struct at_session *d = open_session(0, 1);

	assert_int_equal(at_session_add_target(d, 100, AT_TARGET(1, 0x9)), 0);
	at_session_inherit_allocator(d, 200, 100);
	assert_int_equal(fake_bpf_target(200), AT_TARGET(1, 0x9));
	assert_int_equal(fake_bpf.allocators_gen, 1);
	at_session_inherit_allocator(d, 201, 300); /* a parent the program does not know */
	assert_int_equal(fake_bpf_target(201), -1);
	assert_int_equal(at_session_add_target(d, 101, 0), 0);
	at_session_inherit_allocator(d, 202, 101); /* a parent without an allocator yet */
	assert_int_equal(fake_bpf_target(202), -1);
	assert_int_equal(fake_bpf.allocators_gen, 1);
	close_session(d);
}

/* A target holds one allocator per family: setting one family's keeps the others', an id the
 * session has not given changes nothing, a new process inherits them all, and the end takes
 * them out. The C family's is the low half of the map's value; the other half is the place of
 * a second family (C++'s operator new and delete) that the function list does not have yet. */
static void test_families(void **state)
{
	(void)state;
	const unsigned second = AT_TARGET_FAMILIES - 1;
	static const struct {
		uint32_t object;
		uint64_t target;   /* pid 100's allocators after */
		uint64_t changes;  /* allocators_gen */
	} steps[] = {
		{ 1, AT_TARGET_IN(AT_FAMILY_C, AT_TARGET(1, 0x9)), 1 },
		{ 2, AT_TARGET_IN(AT_FAMILY_C, AT_TARGET(1, 0x9)) |
			     AT_TARGET_IN(AT_TARGET_FAMILIES - 1, AT_TARGET(2, 0x30)), 2 },
		{ 3, AT_TARGET_IN(AT_FAMILY_C, AT_TARGET(3, 0x3ff)) |
			     AT_TARGET_IN(AT_TARGET_FAMILIES - 1, AT_TARGET(2, 0x30)), 3 },
		{ 4, AT_TARGET_IN(AT_FAMILY_C, AT_TARGET(3, 0x3ff)) |
			     AT_TARGET_IN(AT_TARGET_FAMILIES - 1, AT_TARGET(2, 0x30)), 3 },
	};
	struct at_session *d = open_session(0, 1);

	d->targets.nobjects = 3;
	d->targets.objects[0].funcs = 0x9;
	d->targets.objects[1].family = second;
	d->targets.objects[1].funcs = 0x30;
	d->targets.objects[2].funcs = 0x3ff;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		at_session_set_allocator(d, 100, steps[i].object);
		assert_int_equal(fake_bpf_target(100), steps[i].target);
		assert_int_equal(at_session_allocator(d, 100), steps[i].target);
		assert_int_equal(fake_bpf.allocators_gen, steps[i].changes);
	}
	at_session_inherit_allocator(d, 200, 100);
	assert_int_equal(fake_bpf_target(200), steps[2].target);
	assert_int_equal(AT_TARGET_OF(second, at_session_allocator(d, 200)), AT_TARGET(2, 0x30));
	at_session_remove_target(d, 100);
	assert_int_equal(fake_bpf_target(100), -1);
	assert_int_equal(at_session_allocator(d, 100), 0);
	close_session(d);
}

/* The links of one probed object: the return probes first, for the scope (following with
 * links of each process's own, one link of every entry follows: test_one_link). */
static void check_links(unsigned first, pid_t scope)
{
	assert_true(fake_bpf.nlinks >= first + 2);
	assert_int_equal(fake_bpf.links[first].prog, AT_BPF_ALLOC_RETURN);
	assert_int_equal(fake_bpf.links[first].retprobe, 1);
	for (unsigned i = first; i < fake_bpf.nlinks; i++) {
		assert_int_equal(fake_bpf.links[i].pid, scope);
		assert_string_equal(fake_bpf.links[i].path, LIBC);
		assert_int_equal(fake_bpf.links[i].cookies[0] >> AT_COOKIE_OBJECT_SHIFT,
				 fake_bpf.links[i].prog == AT_BPF_INTERNAL_CALL ? 0 : 1);
	}
}

/* Probing a process's allocator: the object gets id 1, its probes go in for the process
 * (following a tree too; for every process with --all or --shared-probes), once per scope, and it becomes the
 * process's allocator, with the functions it defines. */
static void test_probe(void **state)
{
	(void)state;
	static const struct {
		int follow, all, shared;
		int again;       /* at_targets_probe's result for a second process */
		pid_t scope;     /* the links' pid for the first */
	} cases[] = { { 0, 0, 0, 1, 100 }, { 1, 0, 0, 1, 100 }, { 0, 1, 0, 0, -1 },
		      { 1, 0, 1, 0, -1 } };
	char why[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_session *d = open_session_shared(cases[i].follow, cases[i].all,
							   cases[i].shared);

		assert_int_equal(at_targets_probe(&d->targets, LIBC, 100, why, sizeof(why)), 1);
		assert_int_equal(d->targets.nobjects, 1);
		uint32_t funcs = d->targets.objects[0].funcs;
		assert_true(funcs & (1u << AT_PROBE_MALLOC));
		assert_true(funcs & (1u << AT_PROBE_FREE));
		assert_int_equal(fake_bpf_target(100), AT_TARGET(1, funcs));
		assert_int_equal(fake_bpf.allocators_gen, 1);
		check_links(0, cases[i].scope);
		unsigned links = fake_bpf.nlinks;
		assert_int_equal(d->probes.nlinks, links);

		assert_int_equal(at_targets_probe(&d->targets, LIBC, 101, why, sizeof(why)), cases[i].again);
		assert_int_equal(d->targets.nobjects, 1); /* the same file, the same id */
		assert_int_equal(fake_bpf_target(101), AT_TARGET(1, funcs));
		assert_int_equal(fake_bpf.nlinks, cases[i].again ? 2 * links : links);
		assert_int_equal(fake_bpf.allocator_check, 0);
		close_session(d);
	}
}

/* Whether offset is one of the sites of a link of prog among the n links, with cookie (any
 * cookie when match_cookie is 0). */
static int site_of(const struct fake_bpf_link *links, unsigned n, enum at_bpf_prog prog,
		   uint64_t offset, uint64_t cookie, int match_cookie)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < links[i].n && k < 16; k++)
			if (links[i].prog == prog && links[i].offsets[k] == offset &&
			    (!match_cookie || links[i].cookies[k] == cookie))
				return 1;
	return 0;
}

/* Following with links of each process's own, every entry probe of an object is in one link
 * of alloc_entry: the allocation functions' sites with their cookies, then free's with the
 * code AT_PROBE_FREE, then the internal call sites with AT_COOKIE_INTERNAL_CALL; the return
 * probes are the same link as in the usual plan, which has the same sites spread over links
 * of their programs. */
static void test_one_link(void **state)
{
	(void)state;
	char why[512];
	static struct fake_bpf_link usual[8];
	unsigned nusual, entries = 0, frees = 0, calls = 0;
	struct at_session *d = open_session(1, 0);

	at_attach_prepare(d->bpf, 0, 0); /* the usual plan: a link per program */
	assert_int_equal(at_targets_probe(&d->targets, LIBC, 100, why, sizeof(why)), 1);
	nusual = fake_bpf.nlinks;
	assert_true(nusual >= 3 && nusual <= 8);
	memcpy(usual, fake_bpf.links, nusual * sizeof(usual[0]));
	for (unsigned i = 1; i < nusual; i++)
		entries += usual[i].n;
	close_session(d);

	d = open_session(1, 0);
	at_attach_prepare(d->bpf, 0, 1);
	assert_int_equal(at_targets_probe(&d->targets, LIBC, 100, why, sizeof(why)), 1);
	assert_int_equal(fake_bpf.nlinks, 2);
	assert_int_equal(fake_bpf.links[0].prog, AT_BPF_ALLOC_RETURN);
	assert_int_equal(fake_bpf.links[0].n, usual[0].n);
	assert_memory_equal(fake_bpf.links[0].offsets, usual[0].offsets, sizeof(usual[0].offsets));
	assert_memory_equal(fake_bpf.links[0].cookies, usual[0].cookies, sizeof(usual[0].cookies));
	const struct fake_bpf_link *one = &fake_bpf.links[1];

	assert_int_equal(one->prog, AT_BPF_ALLOC_ENTRY);
	assert_int_equal(one->retprobe, 0);
	assert_int_equal(one->n, entries);
	assert_true(entries <= 16);
	for (unsigned k = 0; k < one->n; k++) {
		uint64_t c = one->cookies[k], o = one->offsets[k];
		uint32_t code = (uint32_t)(c & AT_COOKIE_FUNC_MASK);

		if (code == AT_COOKIE_INTERNAL_CALL) {
			assert_true(site_of(usual, nusual, AT_BPF_INTERNAL_CALL, o, 0, 0));
			assert_int_equal(c, AT_COOKIE_INTERNAL_CALL);
			calls++;
		} else if (code == AT_PROBE_FREE) {
			assert_int_equal(calls, 0); /* the call sites last */
			assert_true(site_of(usual, nusual, AT_BPF_FREE_ENTRY, o, 0, 0));
			assert_int_equal(c >> AT_COOKIE_OBJECT_SHIFT, 1);
			frees++;
		} else {
			assert_int_equal(frees + calls, 0); /* the functions first */
			assert_true(site_of(usual, nusual, AT_BPF_ALLOC_ENTRY, o, c, 1) ||
				    site_of(usual, nusual, AT_BPF_MALLOC_ENTRY, o, c, 1) ||
				    site_of(usual, nusual, AT_BPF_CALLOC_ENTRY, o, c, 1) ||
				    site_of(usual, nusual, AT_BPF_REALLOC_ENTRY, o, c, 1));
		}
	}
	assert_int_equal(frees, 1);
	assert_true(calls >= 1); /* Debian's libc calls its own free and malloc */
	close_session(d);
}

/* The descriptor of a fake link's path /proc/self/fd/N, or -1 for any other path. */
static int path_fd(const char *path)
{
	int fd;

	return sscanf(path, "/proc/self/fd/%d", &fd) == 1 ? fd : -1;
}

/* A new process in a followed tree gets its creator's links again, for itself, at the file
 * the first links named (a descriptor of it, kept: the creator may be gone by then); its end
 * hands its links to the closing threads, and the others' stay. */
static void test_probe_again(void **state)
{
	(void)state;
	char why[512];
	struct at_session *d = open_session(1, 0);
	struct stat libc, named;

	assert_int_equal(at_targets_probe(&d->targets, LIBC, 100, why, sizeof(why)), 1);
	unsigned links = fake_bpf.nlinks;
	assert_int_equal(at_attach_again(d->bpf, &d->probes, 1, 200, why, sizeof(why)), 0);
	assert_int_equal(fake_bpf.nlinks, 2 * links);
	for (unsigned i = 0; i < links; i++) {
		const struct fake_bpf_link *first = &fake_bpf.links[i], *again = &fake_bpf.links[links + i];
		int fd = path_fd(again->path);

		assert_int_equal(again->pid, 200);
		assert_int_equal(again->prog, first->prog);
		assert_int_equal(again->retprobe, first->retprobe);
		assert_int_equal(again->n, first->n);
		assert_memory_equal(again->offsets, first->offsets, sizeof(first->offsets));
		assert_memory_equal(again->cookies, first->cookies, sizeof(first->cookies));
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &named), 0);
		assert_int_equal(stat(LIBC, &libc), 0);
		assert_int_equal(named.st_ino, libc.st_ino);
		assert_int_equal(named.st_dev, libc.st_dev);
	}
	assert_int_equal(at_attach_again(d->bpf, &d->probes, 2, 200, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "object 2 was never probed"));

	int fd100 = d->probes.links[0].fd;
	assert_int_equal(at_release_pid(&d->probes, 200), links);
	assert_int_equal(d->probes.nlinks, links);
	assert_int_equal(at_release_pid(&d->probes, 300), 0);
	at_link_closer_finish(&d->probes.closer);
	assert_int_equal(d->probes.closer.closed, links);
	assert_int_equal(fcntl(fd100, F_GETFD), FD_CLOEXEC); /* pid 100's stay */
	close_session(d);
}

/* An object is probed for a family: every probe of it carries the family with its id, and
 * the process's allocator of that family is the object; a family the list lacks is refused. */
static void test_probe_family(void **state)
{
	(void)state;
	char why[512];
	struct at_session *d = open_session(0, 0);

	assert_int_equal(at_targets_probe_family(&d->targets, LIBC, AT_FAMILY_C, 100, why,
						 sizeof(why)), 1);
	assert_int_equal(d->targets.objects[0].family, AT_FAMILY_C);
	assert_true(fake_bpf.nlinks >= 3);
	for (unsigned i = 0; i < fake_bpf.nlinks; i++) {
		if (fake_bpf.links[i].prog == AT_BPF_INTERNAL_CALL)
			continue;
		for (unsigned k = 0; k < fake_bpf.links[i].n && k < 16; k++) {
			uint64_t cookie = fake_bpf.links[i].cookies[k];
			assert_int_equal(cookie >> AT_COOKIE_OBJECT_SHIFT, 1);
			assert_int_equal(cookie >> AT_COOKIE_FAMILY_SHIFT & AT_COOKIE_FAMILY_MASK,
					 AT_FAMILY_C);
		}
	}
	assert_int_equal(AT_TARGET_OF(AT_FAMILY_C, fake_bpf_target(100)),
			 AT_TARGET(1, d->targets.objects[0].funcs));
	assert_int_equal(at_targets_probe_family(&d->targets, LIBC, AT_FAMILY_COUNT, 100, why,
						 sizeof(why)), -1);
	assert_non_null(strstr(why, "no family"));
	assert_int_equal(d->targets.nobjects, 1);
	close_session(d);
}

/* A second object probed makes the program record each process's calls only at its
 * allocator's probes. */
static void test_second_allocator(void **state)
{
	(void)state;
	char why[512];
	struct stat st;

	if (stat(JEMALLOC, &st) < 0)
		skip();
	struct at_session *d = open_session(1, 0);
	assert_int_equal(at_targets_probe(&d->targets, LIBC, 100, why, sizeof(why)), 1);
	assert_int_equal(fake_bpf.allocator_check, 0);
	assert_int_equal(at_targets_probe(&d->targets, JEMALLOC, 101, why, sizeof(why)), 1);
	assert_int_equal(fake_bpf.allocator_check, 1);
	assert_int_equal(d->targets.nobjects, 2);
	assert_int_equal(AT_TARGET_OBJECT(fake_bpf_target(100)), 1);
	assert_int_equal(AT_TARGET_OBJECT(fake_bpf_target(101)), 2);
	close_session(d);
}

/* A refused attach leaves no link and no allocator, and says why. */
static void test_probe_refused(void **state)
{
	(void)state;
	char why[512];
	struct at_session *d = open_session(0, 0);

	fake_bpf.attach_errno = EPERM;
	assert_int_equal(at_targets_probe(&d->targets, LIBC, 100, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "cannot attach a uprobe to " LIBC));
	assert_int_equal(d->probes.nlinks, 0);
	assert_int_equal(fake_bpf_target(100), -1);
	assert_int_equal(at_targets_probe(&d->targets, "/nonexistent/libc.so.6", 100, why,
					  sizeof(why)), -1);
	assert_non_null(strstr(why, "cannot read /nonexistent/libc.so.6"));
	close_session(d);
}

/* A pid no process has: a child that has exited and been reaped. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* A traced process found gone departs: out of the program's targets and loading map, out of
 * the table, its end queued at the counter now; a running one stays. */
static void test_departs(void **state)
{
	(void)state;
	struct at_session *d = open_session(0, 0);
	pid_t gone = gone_pid(), self = getpid();

	fake_bpf.clock = 42;
	assert_int_equal(at_session_add_target(d, gone, AT_TARGET(1, 0x9)), 0);
	assert_int_equal(at_session_add_target(d, self, AT_TARGET(1, 0x9)), 0);
	assert_int_equal(at_proctable_trace(&d->table, gone, self), 1);
	assert_int_equal(at_proctable_trace(&d->table, self, 1), 1);
	at_pidset_add(&d->targets.loading, (uint32_t)gone); /* held at its dynamic loader */
	assert_int_equal(at_bpf_set_loading(d->bpf, gone), 0);

	at_targets_sweep(&d->targets);
	assert_int_equal(fake_bpf_target(gone), -1);
	assert_int_equal(fake_bpf_target(self), AT_TARGET(1, 0x9));
	assert_false(at_proctable_traced(&d->table, gone));
	assert_true(at_proctable_traced(&d->table, self));
	assert_int_equal(fake_bpf.nloading, 0);
	assert_false(at_pidset_has(&d->targets.loading, (uint32_t)gone));
	assert_int_equal(d->targets.unprobed, 1); /* ended before its libraries were mapped */
	assert_int_equal(d->table.ndepartures, 1);
	assert_int_equal(d->table.departures[d->table.first].pid, gone);
	assert_int_equal(d->table.departures[d->table.first].seq, 42);
	const struct at_proc *p = at_proctable_find(&d->table, gone);
	assert_non_null(p); /* seen until the output passes its end */
	assert_true(p->flags & AT_PROC_DEPARTED);
	assert_int_equal(p->departed, 42);
	close_session(d);
}

/* At the end, no process is held at its loader any more, in the program's map either. */
static void test_stop_loading(void **state)
{
	(void)state;
	struct at_session *d = open_session(0, 0);

	for (pid_t pid = 500; pid < 505; pid++) {
		at_pidset_add(&d->targets.loading, (uint32_t)pid);
		assert_int_equal(at_bpf_set_loading(d->bpf, pid), 0);
	}
	at_targets_stop_loading(&d->targets);
	assert_int_equal(fake_bpf.nloading, 0);
	for (pid_t pid = 500; pid < 505; pid++)
		assert_false(at_pidset_has(&d->targets.loading, (uint32_t)pid));
	close_session(d);
}

/* --all: a process first seen through its events joins the table (started before the trace);
 * otherwise the table is left alone. */
static void test_first_seen(void **state)
{
	(void)state;
	static const struct {
		int all, joins;
	} cases[] = { { 1, 1 }, { 0, 0 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_session *d = open_session(0, cases[i].all);

		at_targets_first_seen(&d->targets, getpid(), 7);
		assert_int_equal(at_proctable_traced(&d->table, getpid()), cases[i].joins);
		at_targets_first_seen(&d->targets, getpid(), 8); /* once */
		assert_int_equal(d->table.traced, (unsigned)cases[i].joins);
		close_session(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound),         cmocka_unit_test(test_add_remove),
		cmocka_unit_test(test_set_allocator), cmocka_unit_test(test_inherit),
		cmocka_unit_test(test_families),      cmocka_unit_test(test_probe_family),
		cmocka_unit_test(test_probe),         cmocka_unit_test(test_probe_again),
		cmocka_unit_test(test_one_link),
		cmocka_unit_test(test_second_allocator),
		cmocka_unit_test(test_probe_refused), cmocka_unit_test(test_departs),
		cmocka_unit_test(test_stop_loading),  cmocka_unit_test(test_first_seen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
