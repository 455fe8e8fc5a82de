/* attach.c: planting the probes of one object. */
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "alloctap.h"
#include "alloctap.skel.h"
#include "attach.h"
#include "callsites.h"
#include "display.h"
#include "event.h"
#include "probe_site.h"
#include "x86_insn.h"

struct probed_function {
	const char *name;
	struct bpf_program *entry;
	int has_return;
	uint16_t reads; /* argument registers the entry program reads */
	uint64_t site_offset, function_offset; /* both probes' site; the first instruction */
	uint64_t function_vaddr, function_size;
	const char *site_insn, *site_why;
};

/* The registers of the first n integer arguments (System V x86-64: rdi, rsi, rdx). */
#define ARG_REGS(n)                                                                            \
	(((n) >= 1 ? AT_REG_BIT(AT_RDI) : 0) | ((n) >= 2 ? AT_REG_BIT(AT_RSI) : 0) |          \
	 ((n) >= 3 ? AT_REG_BIT(AT_RDX) : 0))

/* The probed functions are the F and P entries of AT_FUNCTIONS (lib/event.h), in its order,
 * which must be enum at_probe_func's (the codes the BPF programs write); a function of the
 * format keeps its enum at_func code there. */
#define PROBE_POSITION(code, name, ...) PROBE_AT_##code,
enum { AT_FUNCTIONS(PROBE_POSITION, AT_FUNC_SKIP, PROBE_POSITION) PROBED_COUNT };
#define SAME_PROBE_CODE(code, name, ...)                                                       \
	_Static_assert((int)PROBE_AT_##code == (int)AT_PROBE_##code, #name " is in place");
#define SAME_CODES(code, name, ...)                                                            \
	SAME_PROBE_CODE(code, name)                                                            \
	_Static_assert((int)AT_##code == (int)AT_PROBE_##code, #name " has one code");
AT_FUNCTIONS(SAME_CODES, AT_FUNC_SKIP, SAME_PROBE_CODE)
_Static_assert((int)PROBED_COUNT == (int)AT_PROBE_FUNC_COUNT, "every probed function is listed");

#define PROBED(code, fn, regs)                                                                 \
	{ .name = #fn,                                                                          \
	  .entry = skel->progs.fn##_entry,                                                      \
	  .has_return = AT_PROBE_##code != AT_PROBE_FREE,                                       \
	  .reads = ARG_REGS(regs) },
#define PROBED_F(code, name, nargs, regs) PROBED(code, name, regs)

/* The family, in the order aliases are named (glibc's memalign == aligned_alloc). */
static unsigned list_functions(struct alloctap *skel, struct probed_function *f)
{
	const struct probed_function all[] = { AT_FUNCTIONS(PROBED_F, AT_FUNC_SKIP, PROBED) };

	memcpy(f, all, sizeof(all));
	return sizeof(all) / sizeof(all[0]);
}

/* Finds the sites of every function the object defines; drops aliases. Returns how many
 * remain, or -1 (why set). */
static int locate(struct at_elf *e, const char *path, struct probed_function *f, unsigned n,
		  char *why, size_t whylen)
{
	unsigned kept = 0;
	int have_malloc = 0;

	for (unsigned i = 0; i < n; i++) {
		struct at_probe_choice c = { 0 };
		int rc = at_probe_site(e, f[i].name, f[i].reads, &c);

		f[i].site_offset = c.site_offset;
		f[i].function_offset = c.function_offset;
		f[i].function_vaddr = c.function_vaddr;
		f[i].function_size = c.function_size;
		f[i].site_insn = c.insn;
		f[i].site_why = c.why;
		if (rc < 0) {
			snprintf(why, whylen, "%s: %s is outside every executable segment", path,
				 f[i].name);
			return -1;
		}
		if (rc == 0)
			continue;
		int alias = 0;
		for (unsigned j = 0; j < kept; j++)
			alias |= f[j].function_offset == f[i].function_offset;
		if (alias)
			continue;
		have_malloc |= strcmp(f[i].name, "malloc") == 0;
		DISPLAYLEVEL(3, "alloctapd: probe %s: %s+0x%llx, %s at +%llu (%s: %s)\n",
			     f[i].name, path, (unsigned long long)f[i].function_offset,
			     f[i].has_return ? "entry and return probes" : "entry probe",
			     (unsigned long long)(f[i].site_offset - f[i].function_offset),
			     f[i].site_insn, f[i].site_why);
		f[kept++] = f[i];
	}
	if (!have_malloc) {
		snprintf(why, whylen, "%s defines no malloc", path);
		return -1;
	}
	return (int)kept;
}

/* The scan of one object for its internal calls. */
struct internal_scan {
	struct at_elf *e;
	const char *path;
	const struct probed_function *f;
	unsigned n;
	struct at_scanned_object *o;
	unsigned calls, nested, jumps, unprobed;
};

/* Index in f of the function at vaddr (its entry), or of the one whose body holds vaddr when
 * inside is set; -1 if none. */
static int function_at(const struct internal_scan *s, uint64_t vaddr, int inside)
{
	for (unsigned i = 0; i < s->n; i++) {
		const struct probed_function *f = &s->f[i];

		if (vaddr == f->function_vaddr ||
		    (inside && vaddr > f->function_vaddr &&
		     vaddr < f->function_vaddr + f->function_size))
			return (int)i;
	}
	return -1;
}

/* One direct call or tail jump into an entry point. A call from inside an entry point's own
 * body (glibc's realloc calling malloc and free) is nested under that entry's call already;
 * any other call instruction gets a probe of its own (internal_call), which tells the entry
 * that the call is not the program's. A tail jump needs nothing: the entry then sees the stack
 * of the call that reached the jumping function (glibc's are inside malloc and realloc). */
static int note_internal_call(void *arg, const struct at_direct_call *c)
{
	struct internal_scan *s = arg;
	struct at_scanned_object *o = s->o;
	int target = function_at(s, c->target, 0), within = function_at(s, c->site, 1);
	uint64_t offset;

	DISPLAYLEVEL(3, "alloctapd: %s: %s at 0x%llx straight to %s%s%s: %s\n", s->path,
		     c->is_call ? "call" : "tail jump", (unsigned long long)c->site,
		     target >= 0 ? s->f[target].name : "?", within >= 0 ? ", inside " : "",
		     within >= 0 ? s->f[within].name : "",
		     !c->is_call ? "a jump, nothing to do"
				 : within >= 0 ? "nested, nothing to do" : "probed, not recorded");
	if (!c->is_call) {
		s->jumps++;
		return 0;
	}
	if (within >= 0) {
		s->nested++;
		return 0;
	}
	s->calls++;
	if (o->ncalls == AT_MAX_CALL_SITES || at_elf_vaddr_to_offset(s->e, c->site, &offset) < 0) {
		s->unprobed++;
		return 0;
	}
	o->call_offsets[o->ncalls++] = offset;
	return 0;
}

/* The numbers given to the file of st (same device and inode), or NULL. */
static const struct at_scanned_object *known_object(const struct at_probes *p,
						     const struct stat *st)
{
	for (unsigned i = 0; i < p->nscanned; i++)
		if (p->scanned[i].dev == st->st_dev && p->scanned[i].ino == st->st_ino)
			return &p->scanned[i];
	return NULL;
}

/* Scans the object for its direct calls to its own entry points from outside them, and lists
 * the file offsets of those call instructions in o. */
static void scan_internal_calls(struct at_elf *e, const char *path,
				const struct probed_function *f, unsigned n,
				struct at_scanned_object *o)
{
	uint64_t targets[16];
	struct internal_scan s = { .e = e, .path = path, .f = f, .n = n, .o = o };

	o->ncalls = 0;
	for (unsigned i = 0; i < n; i++)
		targets[i] = f[i].function_vaddr;
	if (at_elf_find_direct_calls(e, targets, n, note_internal_call, &s) < 0)
		DISPLAYLEVEL(2, "alloctapd: %s: cannot read its code: the calls it makes to its "
			     "own entry points will be recorded\n", path);
	DISPLAYLEVEL(3, "alloctapd: %s: %u direct calls to its own entry points from outside "
		     "them (probed, not recorded), %u from inside (nested), %u tail jumps\n", path,
		     s.calls, s.nested, s.jumps);
	if (s.unprobed)
		DISPLAYLEVEL(2, "alloctapd: %s: %u of its internal call sites cannot be probed "
			     "(more than %u, or outside its segments): calls from there will be "
			     "recorded\n", path, s.unprobed, AT_MAX_CALL_SITES);
}

/* The call instructions of the object that need a probe (o->call_offsets). A file is scanned
 * once, however many processes map it. A program is left alone: its own calls to a malloc it
 * links statically are direct calls too, and nothing tells them from the allocator's. */
static void note_internal_calls(struct at_probes *p, struct at_elf *e, const char *path,
				const struct probed_function *f, unsigned n,
				struct at_scanned_object *o)
{
	struct stat st;
	const struct at_scanned_object *known;

	o->ncalls = 0;
	if (at_elf_is_program(e)) {
		DISPLAYLEVEL(3, "alloctapd: %s is a program: its calls to its own malloc are all "
			     "recorded\n", path);
		return;
	}
	if (fstat(e->fd, &st) < 0) {
		scan_internal_calls(e, path, f, n, o);
		return;
	}
	if ((known = known_object(p, &st))) {
		*o = *known;
		return;
	}
	scan_internal_calls(e, path, f, n, o);
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	if (p->nscanned < AT_MAX_SCANNED)
		p->scanned[p->nscanned++] = *o;
}

static int attach_one(struct at_probes *p, struct bpf_program *prog, int retprobe, pid_t pid,
		      const char *path, uint64_t offset)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe);
	struct bpf_link *link;

	if (p->nlinks == AT_MAX_LINKS) {
		errno = E2BIG;
		return -1;
	}
	link = bpf_program__attach_uprobe_opts(prog, pid, path, (size_t)offset, &opts);
	if (!link)
		return -1;
	p->links[p->nlinks++] = link;
	return 0;
}

int at_attach_object(struct alloctap *skel, struct at_probes *p, const char *path, pid_t pid,
		     char *why, size_t whylen)
{
	struct probed_function f[16];
	struct at_elf e;
	const char *reason;
	unsigned first = p->nlinks;

	if (at_elf_open(&e, path, &reason) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, reason);
		return -1;
	}
	static struct at_scanned_object internal;
	int n = locate(&e, path, f, list_functions(skel, f), why, whylen);
	internal.ncalls = 0;
	if (n > 0)
		note_internal_calls(p, &e, path, f, (unsigned)n, &internal);
	at_elf_close(&e);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (f[i].has_return && attach_one(p, skel->progs.alloc_return, 1, pid, path,
						  f[i].site_offset) < 0)
			goto fail;
	for (int i = 0; i < n; i++)
		if (attach_one(p, f[i].entry, 0, pid, path, f[i].site_offset) < 0)
			goto fail;
	/* after the entries: a call site marked before its entry probe exists would stay marked */
	for (unsigned i = 0; i < internal.ncalls; i++)
		if (attach_one(p, skel->progs.internal_call, 0, pid, path,
			       internal.call_offsets[i]) < 0)
			goto fail;
	p->functions += (unsigned)n;
	return 0;
fail:;
	int err = errno;
	int gone = pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;

	snprintf(why, whylen, "cannot attach a uprobe to %s%s: %s", path,
		 gone ? " (the process exited during attach)" : "", strerror(err));
	while (p->nlinks > first)
		bpf_link__destroy(p->links[--p->nlinks]);
	return -1;
}

void at_detach_all(struct at_probes *p)
{
	while (p->nlinks)
		bpf_link__destroy(p->links[--p->nlinks]);
	p->functions = 0;
}
