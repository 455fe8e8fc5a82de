/* attach.c: planting the probes of one object. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/types.h>

#include "alloctap.h"
#include "attach.h"
#include "bpf.h"
#include "probe_conflict.h"
#include "callsites.h"
#include "display.h"
#include "elfsym.h"
#include "event.h"
#include "prim.h"
#include "probe_site.h"
#include "scrub.h"
#include "arch.h"

struct probed_function {
	const char *name; /* its ELF symbol */
	uint32_t code;  /* enum at_probe_func: the entry program's cookie */
	unsigned family; /* enum at_family */
	int has_return;
	uint16_t reads; /* argument registers the entry program reads */
	uint64_t site_offset, function_offset; /* both probes' site; the first instruction */
	uint8_t arg_reg[AT_ARCH_ARGS]; /* where the arguments are at the site */
	uint64_t function_vaddr, function_size;
	const char *site_insn, *site_why;
};

/* The registers of the first n integer arguments (arch.h). */
#define ARG_REGS(n) at_arch_arg_mask(n)

/* The probed functions are the F and P entries of AT_FUNCTIONS (lib/functions.h), in its
 * order, which is enum at_probe_func's (the codes the BPF programs write): each is probed at its
 * ELF symbol, and one that frees gets no return probe. */
#define PROBED(c, word, symbol, kind, nargs, regs, fam)                                        \
	{ .name = #symbol,                                                                      \
	  .code = AT_PROBE_##c,                                                                 \
	  .family = AT_FAMILY_##fam,                                                            \
	  .has_return = !at_probe_frees(AT_PROBE_##c),                                          \
	  .reads = ARG_REGS(regs) },

/* The functions of family (enum at_family), in the order aliases are named (glibc's memalign
 * == aligned_alloc). */
static unsigned list_functions(struct probed_function *f, unsigned family)
{
	const struct probed_function all[] = { AT_FUNCTIONS(PROBED, AT_FUNC_SKIP, PROBED) };
	unsigned n = 0;

	_Static_assert(sizeof(all) / sizeof(all[0]) == AT_PROBE_FUNC_COUNT,
		       "every probed function is listed");
	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i].family == family)
			f[n++] = all[i];
	return n;
}

/* Whether the site lies past moves that copied f's arguments out of their own registers. */
static int args_moved(const struct probed_function *f)
{
	return memcmp(f->arg_reg, at_arch_arg_regs, sizeof(f->arg_reg)) != 0;
}

/* ", arguments in R1, R2, ...": where the arguments the entry program reads are at the site. */
static void describe_args(const struct probed_function *f, char *out, size_t outlen)
{
	size_t n = (size_t)snprintf(out, outlen, ", arguments in");

	for (int a = 0; a < AT_ARCH_ARGS && n < outlen; a++)
		if (f->reads & AT_REG_BIT(at_arch_arg_regs[a]))
			n += (size_t)snprintf(out + n, outlen - n, "%s %s", a ? "," : "",
					      at_arch_reg_name(f->arg_reg[a] & 15));
}

/* The index in f (n functions of one family) of the family's first function, which an object
 * of the family must define (lib/functions.h's AT_FAMILIES); 0 when it is not there. */
static unsigned first_of_family(const struct probed_function *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (f[i].code == at_family_first(f[i].family))
			return i;
	return 0;
}

/* What every probe of an object carries in its cookie: its id and its family (alloctap.h). */
static uint64_t object_cookie(unsigned family, uint32_t object)
{
	return (uint64_t)object << AT_COOKIE_OBJECT_SHIFT |
	       (uint64_t)(family & AT_COOKIE_FAMILY_MASK) << AT_COOKIE_FAMILY_SHIFT;
}

/* Finds the sites of every function the object defines (f: the n functions of one family);
 * drops aliases. Returns how many remain, or -1 (why set: an object that lacks its family's
 * first function, malloc for the C family, is not an allocator of the family). */
static int locate(struct at_elf *e, const char *path, struct probed_function *f, unsigned n,
		  char *why, size_t whylen)
{
	unsigned kept = 0;
	const char *first = n ? f[first_of_family(f, n)].name : "";
	int have_first = 0;

	for (unsigned i = 0; i < n; i++) {
		struct at_probe_choice c = { 0 };
		/* alloc_entry reads the arguments where its cookie says; free_entry only the first */
		int rc = at_probe_site(e, f[i].name, f[i].reads, f[i].has_return, &c);

		memcpy(f[i].arg_reg, c.arg_reg, sizeof(f[i].arg_reg));
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
		have_first |= strcmp(f[i].name, first) == 0;
		char moved[64] = "";
		if (args_moved(&f[i]))
			describe_args(&f[i], moved, sizeof(moved));
		DISPLAYLEVEL(3, "%s: probe %s: %s+0x%llx, %s at +%llu (%s: %s)%s\n",
			     at_program_name, f[i].name, path,
			     (unsigned long long)f[i].function_offset,
			     f[i].has_return ? "entry and return probes" : "entry probe",
			     (unsigned long long)(f[i].site_offset - f[i].function_offset),
			     f[i].site_insn, f[i].site_why, moved);
		f[kept++] = f[i];
	}
	if (!have_first) {
		snprintf(why, whylen, "%s defines no %s", path, first);
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

	DISPLAYLEVEL(3, "%s: %s: %s at 0x%llx straight to %s%s%s: %s\n", at_program_name, s->path,
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
		DISPLAYLEVEL(2, "%s: %s: cannot read its code: the calls it makes to its "
			     "own entry points will be recorded\n", at_program_name, path);
	DISPLAYLEVEL(3, "%s: %s: %u direct calls to its own entry points from outside "
		     "them (probed, not recorded), %u from inside (nested), %u tail jumps\n",
		     at_program_name, path,
		     s.calls, s.nested, s.jumps);
	if (s.unprobed)
		DISPLAYLEVEL(2, "%s: %s: %u of its internal call sites cannot be probed "
			     "(more than %u, or outside its segments): calls from there will be "
			     "recorded\n", at_program_name, path, s.unprobed, AT_MAX_CALL_SITES);
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
		DISPLAYLEVEL(3, "%s: %s is a program: its calls to its own malloc are all "
			     "recorded\n", at_program_name, path);
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

/* The cookie of a function's entry site: its code, and where its arguments are when they are
 * not in their own registers (alloctap.h). */
static uint64_t entry_cookie(const struct probed_function *f, uint32_t object)
{
	uint64_t cookie = f->code | object_cookie(f->family, object);

	if (!args_moved(f))
		return cookie;
	cookie |= AT_COOKIE_ARGS_MOVED;
	for (int a = 0; a < AT_ARCH_ARGS; a++)
		cookie |= (uint64_t)(f->arg_reg[a] & 15) << (AT_COOKIE_ARG_SHIFT + 4 * a);
	return cookie;
}

/* Links per object: the return probes, an entry program for each of up to four kinds, free,
 * the internal calls. */
#define PLAN_LINKS 8
#define PLAN_SITES (AT_MAX_CALL_SITES + 16) /* one link: the functions and the call sites */

/* One link of an object: a program at its sites. */
struct plan_link {
	enum at_bpf_prog prog;
	int retprobe;
	unsigned n;
	uint64_t offsets[PLAN_SITES], cookies[PLAN_SITES];
};

/* An object's links, worked out once from its ELF, and a descriptor of the file they are for. */
struct at_plan {
	int fd;
	unsigned nlinks;
	struct plan_link link[PLAN_LINKS];
	unsigned functions;  /* functions probed */
	uint32_t defined;    /* bit 1 << enum at_probe_func of each */
	struct {
		const char *name;
		uint64_t site, function;
	} sites[16]; /* the functions' sites, for naming one in a refusal's message */
	unsigned nsites;
	struct at_site_byte bytes[PLAN_LINKS * PLAN_SITES]; /* every site, its original byte */
	unsigned nbytes;
};

/* Adds to plan a link of prog at the n sites (none: nothing); cookies NULL: every cookie 0. */
static void plan_add(struct at_plan *plan, enum at_bpf_prog prog, int retprobe,
		     const uint64_t *offsets, const uint64_t *cookies, unsigned n)
{
	if (n == 0)
		return;
	struct plan_link *l = &plan->link[plan->nlinks++];

	l->prog = prog;
	l->retprobe = retprobe;
	l->n = n;
	for (unsigned i = 0; i < n; i++) {
		l->offsets[i] = offsets[i];
		l->cookies[i] = cookies ? cookies[i] : 0;
	}
}

/* Keeps fd as the link of pid. 0, or -1 with errno set (the link is closed). */
static int keep_link(struct at_probes *p, int fd, pid_t pid)
{
	if (p->nlinks == p->cap) {
		unsigned cap = p->cap ? 2 * p->cap : 64;
		struct at_link *links = realloc(p->links, cap * sizeof(*links));

		if (!links) {
			close(fd);
			errno = ENOMEM;
			return -1;
		}
		p->links = links;
		p->cap = cap;
	}
	p->links[p->nlinks++] = (struct at_link){ fd, pid };
	return 0;
}

/* Adds a link of prog at the n sites (none: nothing). 0, or -1 with errno set. */
static int add_link(struct at_bpf *bpf, struct at_probes *p, enum at_bpf_prog prog, int retprobe,
		    pid_t pid, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		    unsigned n)
{
	if (n == 0)
		return 0;
	int fd = at_bpf_attach_uprobes(bpf, prog, retprobe, pid, path, offsets, cookies, n);
	if (fd < 0)
		return -1;
	if (!p->closer.hold) /* no link closes while a traced process's leader is gone */
		p->closer.hold = at_bpf_leaders_gone(bpf);
	return keep_link(p, fd, pid);
}

/* The entry program of its own of function code, or AT_BPF_ALLOC_ENTRY when it has none (see
 * the BPF program). */
static enum at_bpf_prog own_entry_program(uint32_t code)
{
	switch (code) {
	case AT_PROBE_MALLOC:
		return AT_BPF_MALLOC_ENTRY;
	case AT_PROBE_CALLOC:
		return AT_BPF_CALLOC_ENTRY;
	case AT_PROBE_REALLOC:
		return AT_BPF_REALLOC_ENTRY;
	default:
		return AT_BPF_ALLOC_ENTRY;
	}
}

void at_attach_prepare(struct at_bpf *bpf, int stacks, int one_link)
{
	/* with stacks, the one alloc_entry: each program that walks is verified on its own */
	for (uint32_t code = 0; code < AT_PROBE_FUNC_COUNT; code++)
		if (own_entry_program(code) != AT_BPF_ALLOC_ENTRY)
			at_bpf_set_loaded(bpf, own_entry_program(code), !stacks && !one_link);
	at_bpf_set_loaded(bpf, AT_BPF_FREE_ENTRY, !one_link);
	at_bpf_set_loaded(bpf, AT_BPF_INTERNAL_CALL, !one_link);
}

/* The program for the entry of function f: its own when it has one (loaded) and the arguments
 * are in their registers at the site, else alloc_entry, told by the cookie. */
static enum at_bpf_prog entry_program(struct at_bpf *bpf, const struct probed_function *f)
{
	enum at_bpf_prog own = own_entry_program(f->code);

	if (at_bpf_loaded(bpf, own) && !args_moved(f))
		return own;
	return AT_BPF_ALLOC_ENTRY;
}

/* Plans entry programs at the nallocs allocation functions of f (indexed by allocs_of): one
 * link per program, with the sites of every function it serves. */
static void plan_entries(struct at_bpf *bpf, struct at_plan *plan, uint32_t object,
			 const struct probed_function *f, const unsigned *allocs_of,
			 unsigned nallocs)
{
	enum at_bpf_prog prog_of[16];
	int linked[16] = { 0 };

	for (unsigned i = 0; i < nallocs; i++)
		prog_of[i] = entry_program(bpf, &f[allocs_of[i]]);
	for (unsigned i = 0; i < nallocs; i++) {
		uint64_t offsets[16], cookies[16];
		unsigned n = 0;

		if (linked[i])
			continue;
		for (unsigned k = i; k < nallocs; k++) {
			if (linked[k] || prog_of[k] != prog_of[i])
				continue;
			linked[k] = 1;
			offsets[n] = f[allocs_of[k]].site_offset;
			cookies[n++] = entry_cookie(&f[allocs_of[k]], object);
		}
		plan_add(plan, prog_of[i], 0, offsets, cookies, n);
	}
}

/* The name of the function whose probes are at offset (at_site_name_fn), or NULL. */
static const char *site_name(void *arg, uint64_t offset)
{
	const struct at_plan *plan = arg;

	for (unsigned i = 0; i < plan->nsites; i++)
		if (plan->sites[i].site == offset || plan->sites[i].function == offset)
			return plan->sites[i].name;
	return NULL;
}

/* The links of the n functions located in f, and the internal call sites. Return probes
 * first, so that a call already running is ignored rather than half-seen; the call sites
 * last: one marked before its entry probe exists would stay marked. */
static void plan_links(struct at_bpf *bpf, struct at_plan *plan, unsigned family,
		       uint32_t object, const struct probed_function *f, unsigned n,
		       const struct at_scanned_object *internal)
{
	/* an allocation function's entry and return probes share its site */
	uint64_t allocs[16], frees[16], objects[16];
	unsigned allocs_of[16], nallocs = 0, nfrees = 0;

	for (unsigned i = 0; i < 16; i++)
		objects[i] = object_cookie(family, object);
	for (unsigned i = 0; i < n; i++) {
		plan->sites[i].name = f[i].name;
		plan->sites[i].site = f[i].site_offset;
		plan->sites[i].function = f[i].function_offset;
		plan->defined |= 1u << f[i].code;
		if (!f[i].has_return) {
			frees[nfrees++] = f[i].site_offset;
			continue;
		}
		allocs_of[nallocs] = i;
		allocs[nallocs++] = f[i].site_offset;
	}
	plan->nsites = plan->functions = n;
	plan_add(plan, AT_BPF_ALLOC_RETURN, 1, allocs, objects, nallocs);
	if (at_bpf_loaded(bpf, AT_BPF_FREE_ENTRY)) {
		plan_entries(bpf, plan, object, f, allocs_of, nallocs);
		plan_add(plan, AT_BPF_FREE_ENTRY, 0, frees, objects, nfrees);
		plan_add(plan, AT_BPF_INTERNAL_CALL, 0, internal->call_offsets, NULL,
			 internal->ncalls);
		return;
	}
	/* one link: alloc_entry, told by each site's cookie, the call sites last */
	uint64_t offsets[PLAN_SITES], cookies[PLAN_SITES];
	unsigned k = 0;

	for (unsigned i = 0; i < nallocs; i++, k++) {
		offsets[k] = allocs[i];
		cookies[k] = entry_cookie(&f[allocs_of[i]], object);
	}
	for (unsigned i = 0; i < nfrees; i++, k++) {
		offsets[k] = frees[i];
		cookies[k] = objects[i] | AT_PROBE_FREE;
	}
	for (unsigned i = 0; i < internal->ncalls; i++, k++) {
		offsets[k] = internal->call_offsets[i];
		cookies[k] = AT_COOKIE_INTERNAL_CALL;
	}
	plan_add(plan, AT_BPF_ALLOC_ENTRY, 0, offsets, cookies, k);
}

/* Keeps the original first byte of every site of plan, read from its file (scrub.h). 0, or -1
 * with a reason in why. */
static int keep_bytes(struct at_plan *plan, const char *path, char *why, size_t whylen)
{
	for (unsigned i = 0; i < plan->nlinks; i++)
		for (unsigned k = 0; k < plan->link[i].n; k++) {
			struct at_site_byte *b = &plan->bytes[plan->nbytes++];

			b->offset = plan->link[i].offsets[k];
			if (pread(plan->fd, &b->insn, 1, (off_t)b->offset) != 1) {
				snprintf(why, whylen, "cannot read %s at 0x%llx", path,
					 (unsigned long long)b->offset);
				return -1;
			}
		}
	return 0;
}

/* Works out the links of the object at path for family (its ELF read once), with a descriptor
 * of the file kept. The plan, or NULL with a reason in why. */
static struct at_plan *make_plan(struct at_bpf *bpf, struct at_probes *p, const char *path,
				 unsigned family, uint32_t object, char *why, size_t whylen)
{
	struct probed_function f[16];
	struct at_elf e;
	const char *reason;

	if (at_elf_open(&e, path, &reason) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, reason);
		return NULL;
	}
	struct at_scanned_object internal = { 0 };
	int n = locate(&e, path, f, list_functions(f, family), why, whylen);
	if (n > 0)
		note_internal_calls(p, &e, path, f, (unsigned)n, &internal);
	struct at_plan *plan = n < 0 ? NULL : calloc(1, sizeof(*plan));
	if (plan && (plan->fd = fcntl(e.fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		snprintf(why, whylen, "cannot keep %s open: %s", path, strerror(errno));
		free(plan);
		plan = NULL;
	} else if (n >= 0 && !plan) {
		snprintf(why, whylen, "cannot probe %s: out of memory", path);
	}
	at_elf_close(&e);
	if (plan)
		plan_links(bpf, plan, family, object, f, (unsigned)n, &internal);
	if (plan && keep_bytes(plan, path, why, whylen) < 0) {
		close(plan->fd);
		free(plan);
		return NULL;
	}
	return plan;
}

/* Attaches the links of plan for pid, to the file at path. 0, or -1 with a reason in why
 * (nothing of it stays attached). */
static int apply_plan(struct at_bpf *bpf, struct at_probes *p, struct at_plan *plan,
		      const char *path, pid_t pid, char *why, size_t whylen)
{
	unsigned first = p->nlinks;
	uint64_t start = at_now_ns();

	for (unsigned i = 0; i < plan->nlinks; i++) {
		const struct plan_link *l = &plan->link[i];

		if (add_link(bpf, p, l->prog, l->retprobe, pid, path, l->offsets, l->cookies,
			     l->n) < 0)
			goto fail;
	}
	p->functions += plan->functions;
	if (pid > 0) {
		p->attach_ns += at_now_ns() - start;
		p->attached += plan->nlinks;
	}
	return 0;
fail:;
	int err = errno;
	int gone = pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
	char reason_einval[1024] = "";

	if (err == EINVAL)
		at_probe_einval_reason(path, site_name, plan, reason_einval,
				       sizeof(reason_einval));
	snprintf(why, whylen, "cannot attach a uprobe to %s%s: %s%s", path,
		 gone ? " (the process exited during attach)" : "", strerror(err), reason_einval);
	while (p->nlinks > first)
		close(p->links[--p->nlinks].fd);
	return -1;
}

int at_attach_object(struct at_bpf *bpf, struct at_probes *p, const char *path, pid_t pid,
		     unsigned family, uint32_t object, uint32_t *defined, char *why, size_t whylen)
{
	if (object == 0 || object > AT_OBJECTS_MAX) {
		snprintf(why, whylen, "cannot probe %s: no object %u", path, object);
		return -1;
	}
	struct at_plan **plan = &p->plans[object - 1];
	if (!*plan && !(*plan = make_plan(bpf, p, path, family, object, why, whylen)))
		return -1;
	if (apply_plan(bpf, p, *plan, path, pid, why, whylen) < 0)
		return -1;
	*defined = (*plan)->defined;
	return 0;
}

int at_attach_again(struct at_bpf *bpf, struct at_probes *p, uint32_t object, pid_t pid,
		    char *why, size_t whylen)
{
	struct at_plan *plan = object && object <= AT_OBJECTS_MAX ? p->plans[object - 1] : NULL;
	char path[64];

	if (!plan) {
		snprintf(why, whylen, "object %u was never probed", object);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", plan->fd);
	return apply_plan(bpf, p, plan, path, pid, why, whylen);
}

int at_probes_scrub(const struct at_probes *p, pid_t pid, pid_t creator)
{
	struct stat st;
	int restored = 0, shares = at_scrub_shares_memory(pid, creator);

	if (shares != 0) {
		if (shares < 0 && errno != ESRCH)
			errno = EOPNOTSUPP;
		return shares < 0 ? -1 : 0;
	}

	for (unsigned i = 0; i < AT_OBJECTS_MAX; i++) {
		const struct at_plan *plan = p->plans[i];
		int n;

		if (!plan || fstat(plan->fd, &st) < 0)
			continue;
		if ((n = at_scrub_sites(pid, st.st_dev, st.st_ino, plan->bytes, plan->nbytes)) < 0)
			return -1;
		restored += n;
	}
	for (unsigned i = 0; i < p->nloaders; i++) {
		const struct at_loader_site *l = &p->loaders[i];
		const struct at_site_byte site = { l->offset, l->insn };
		int n = at_scrub_sites(pid, l->dev, l->ino, &site, 1);

		if (n < 0)
			return -1;
		restored += n;
	}
	return restored;
}

unsigned at_detach_pid(struct at_probes *p, pid_t pid)
{
	struct at_link_closer now = { 0 };
	unsigned kept = 0, n = 0;

	for (unsigned i = 0; i < p->nlinks; i++) {
		if (p->links[i].pid != pid || pid <= 0) {
			p->links[kept++] = p->links[i];
			continue;
		}
		at_link_closer_put(&now, &p->links[i].fd, 1);
		n++;
	}
	p->nlinks = kept;
	at_link_closer_finish(&now);
	return n;
}

unsigned at_release_pid(struct at_probes *p, pid_t pid)
{
	int fds[64];
	unsigned kept = 0, n = 0, released = 0;

	for (unsigned i = 0; i < p->nlinks; i++) {
		if (p->links[i].pid != pid || pid <= 0) {
			p->links[kept++] = p->links[i];
			continue;
		}
		fds[n++] = p->links[i].fd;
		if (n == sizeof(fds) / sizeof(fds[0])) {
			at_link_closer_put(&p->closer, fds, n);
			released += n;
			n = 0;
		}
	}
	p->nlinks = kept;
	at_link_closer_put(&p->closer, fds, n);
	released += n;
	p->released += released;
	return released;
}

/* The site and cookie of the loader's _dl_debug_state (found once per file). 0, or -1 with a
 * reason in why. */
static int loader_site(struct at_probes *p, const char *path, struct at_loader_site *site,
		       char *why, size_t whylen)
{
	struct at_elf e;
	const char *reason;
	struct stat st;
	uint64_t vaddr, offset;

	if (stat(path, &st) == 0)
		for (unsigned i = 0; i < p->nloaders; i++)
			if (p->loaders[i].dev == st.st_dev && p->loaders[i].ino == st.st_ino) {
				*site = p->loaders[i];
				return 0;
			}
	if (at_elf_open(&e, path, &reason) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, reason);
		return -1;
	}
	int found = at_elf_find_function(&e, "_dl_debug_state", &vaddr) == 1 &&
		    at_elf_vaddr_to_offset(&e, vaddr, &offset) == 0;
	/* the cookie: from the probe's address to _r_debug.r_state (0: unknown, always hold) */
	uint64_t r_debug, cookie = 0;
	if (found && at_elf_find_object(&e, "_r_debug", &r_debug) == 1)
		cookie = r_debug + AT_R_DEBUG_STATE - vaddr;
	uint8_t insn = AT_SCRUB_BREAKPOINT; /* unknown: never written back */
	if (found && pread(e.fd, &insn, 1, (off_t)offset) != 1)
		insn = AT_SCRUB_BREAKPOINT;
	int known = fstat(e.fd, &st) == 0;
	at_elf_close(&e);
	if (!found) {
		snprintf(why, whylen, "%s has no _dl_debug_state: not a dynamic loader alloctapd "
			 "knows", path);
		return -1;
	}
	*site = (struct at_loader_site){ st.st_dev, st.st_ino, offset, cookie, insn };
	if (known && p->nloaders < AT_MAX_LOADERS)
		p->loaders[p->nloaders++] = *site;
	return 0;
}

int at_attach_loader(struct at_bpf *bpf, struct at_probes *p, const char *path, pid_t pid,
		     char *why, size_t whylen)
{
	struct at_loader_site site;

	if (loader_site(p, path, &site, why, whylen) < 0)
		return -1;
	if (add_link(bpf, p, AT_BPF_LOADER_STATE, 0, pid, path, &site.offset, &site.cookie, 1) <
	    0) {
		snprintf(why, whylen, "cannot attach a uprobe to %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

void at_detach_all(struct at_probes *p)
{
	int fds[256];
	unsigned n = 0;

	for (unsigned i = 0; i < p->nlinks; i++) {
		fds[n++] = p->links[i].fd;
		if (n == sizeof(fds) / sizeof(fds[0])) {
			at_link_closer_put(&p->closer, fds, n);
			n = 0;
		}
	}
	at_link_closer_put(&p->closer, fds, n);
	at_link_closer_finish(&p->closer);
	p->nlinks = 0;
	p->functions = 0;
}

void at_probes_free(struct at_probes *p)
{
	at_detach_all(p);
	for (unsigned i = 0; i < AT_OBJECTS_MAX; i++) {
		if (!p->plans[i])
			continue;
		close(p->plans[i]->fd);
		free(p->plans[i]);
		p->plans[i] = NULL;
	}
	free(p->links);
	p->links = NULL;
	p->cap = 0;
}
