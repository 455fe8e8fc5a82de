/* attach.c: planting the probes of one object. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "alloctap.h"
#include "alloctap.skel.h"
#include "attach.h"
#include "probe_conflict.h"
#include "callsites.h"
#include "display.h"
#include "elfsym.h"
#include "event.h"
#include "probe_site.h"
#include "x86_insn.h"

struct probed_function {
	const char *name; /* its ELF symbol */
	uint32_t code;  /* enum at_probe_func: the entry program's cookie */
	int has_return;
	uint16_t reads; /* argument registers the entry program reads */
	uint64_t site_offset, function_offset; /* both probes' site; the first instruction */
	uint8_t arg_reg[3]; /* where the arguments are at the site */
	uint64_t function_vaddr, function_size;
	const char *site_insn, *site_why;
};

/* The registers of the first n integer arguments (System V x86-64: rdi, rsi, rdx). */
#define ARG_REGS(n)                                                                            \
	(((n) >= 1 ? AT_REG_BIT(AT_RDI) : 0) | ((n) >= 2 ? AT_REG_BIT(AT_RSI) : 0) |          \
	 ((n) >= 3 ? AT_REG_BIT(AT_RDX) : 0))

/* The probed functions are the F and P entries of AT_FUNCTIONS (lib/functions.h), in its
 * order, which is enum at_probe_func's (the codes the BPF programs write): each is probed at its
 * ELF symbol, and one that frees gets no return probe. */
#define PROBED(c, word, symbol, kind, nargs, regs)                                             \
	{ .name = #symbol,                                                                      \
	  .code = AT_PROBE_##c,                                                                 \
	  .has_return = !at_probe_frees(AT_PROBE_##c),                                          \
	  .reads = ARG_REGS(regs) },

/* The family, in the order aliases are named (glibc's memalign == aligned_alloc). */
static unsigned list_functions(struct probed_function *f)
{
	const struct probed_function all[] = { AT_FUNCTIONS(PROBED, AT_FUNC_SKIP, PROBED) };

	_Static_assert(sizeof(all) / sizeof(all[0]) == AT_PROBE_FUNC_COUNT,
		       "every probed function is listed");
	memcpy(f, all, sizeof(all));
	return sizeof(all) / sizeof(all[0]);
}

/* Whether the site lies past moves that copied f's arguments out of their own registers. */
static int args_moved(const struct probed_function *f)
{
	return memcmp(f->arg_reg, at_x86_arg_regs, sizeof(f->arg_reg)) != 0;
}

/* ", arguments in rsi, rdx, ...": where the arguments the entry program reads are at the site. */
static void describe_args(const struct probed_function *f, char *out, size_t outlen)
{
	static const char *const names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi",
					       "rdi", "r8",  "r9",  "r10", "r11", "r12", "r13",
					       "r14", "r15" };
	size_t n = (size_t)snprintf(out, outlen, ", arguments in");

	for (int a = 0; a < AT_X86_ARGS && n < outlen; a++)
		if (f->reads & AT_REG_BIT(at_x86_arg_regs[a]))
			n += (size_t)snprintf(out + n, outlen - n, "%s %s", a ? "," : "",
					      names[f->arg_reg[a] & 15]);
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
		/* alloc_entry reads the arguments where its cookie says; free_entry only rdi */
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
		have_malloc |= strcmp(f[i].name, "malloc") == 0;
		char moved[64] = "";
		if (args_moved(&f[i]))
			describe_args(&f[i], moved, sizeof(moved));
		DISPLAYLEVEL(3, "alloctapd: probe %s: %s+0x%llx, %s at +%llu (%s: %s)%s\n",
			     f[i].name, path, (unsigned long long)f[i].function_offset,
			     f[i].has_return ? "entry and return probes" : "entry probe",
			     (unsigned long long)(f[i].site_offset - f[i].function_offset),
			     f[i].site_insn, f[i].site_why, moved);
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

/* The cookie of a function's entry site: its code, and where its arguments are when they are
 * not in their own registers (alloctap.h). */
static uint64_t entry_cookie(const struct probed_function *f, uint32_t object)
{
	uint64_t cookie = f->code | (uint64_t)object << AT_COOKIE_OBJECT_SHIFT;

	if (!args_moved(f))
		return cookie;
	cookie |= AT_COOKIE_ARGS_MOVED;
	for (int a = 0; a < AT_X86_ARGS; a++)
		cookie |= (uint64_t)(f->arg_reg[a] & 15) << (AT_COOKIE_ARG_SHIFT + 4 * a);
	return cookie;
}

/* What link_create needs of union bpf_attr for a uprobe_multi link (Linux 6.6), which Debian
 * 12's headers and libbpf 1.1 do not know. */
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid;
};
#define AT_BPF_LINK_CREATE 28
#define AT_BPF_UPROBE_MULTI_RETURN 1u

/* One uprobe_multi link of prog at n offsets of path (with their cookies), for pid (0: every
 * process). The link's descriptor, or -1 with errno set. */
static int attach_multi(struct bpf_program *prog, int retprobe, pid_t pid, const char *path,
			const uint64_t *offsets, const uint64_t *cookies, unsigned n)
{
	union {
		struct uprobe_multi_attr a;
		uint8_t size[128]; /* the kernel's union bpf_attr is larger: the rest must be 0 */
	} attr;

	memset(&attr, 0, sizeof(attr));
	attr.a.prog_fd = (uint32_t)bpf_program__fd(prog);
	attr.a.attach_type = AT_BPF_TRACE_UPROBE_MULTI;
	attr.a.path = (uint64_t)(uintptr_t)path;
	attr.a.offsets = (uint64_t)(uintptr_t)offsets;
	attr.a.cookies = (uint64_t)(uintptr_t)cookies;
	attr.a.cnt = n;
	attr.a.multi_flags = retprobe ? AT_BPF_UPROBE_MULTI_RETURN : 0;
	attr.a.pid = pid > 0 ? (uint32_t)pid : 0;
	return (int)syscall(SYS_bpf, AT_BPF_LINK_CREATE, &attr, sizeof(attr));
}

/* Adds a link of prog at the n sites (none: nothing). 0, or -1 with errno set. */
static int add_link(struct at_probes *p, struct bpf_program *prog, int retprobe, pid_t pid,
		    const char *path, const uint64_t *offsets, const uint64_t *cookies, unsigned n)
{
	if (n == 0)
		return 0;
	if (p->nlinks == AT_MAX_LINKS) {
		errno = E2BIG;
		return -1;
	}
	int fd = attach_multi(prog, retprobe, pid, path, offsets, cookies, n);
	if (fd < 0)
		return -1;
	p->links[p->nlinks++] = fd;
	return 0;
}

/* The entry program of its own of function code, or NULL (see the BPF program). */
static struct bpf_program *own_entry_program(struct alloctap *skel, uint32_t code)
{
	switch (code) {
	case AT_PROBE_MALLOC:
		return skel->progs.malloc_entry;
	case AT_PROBE_CALLOC:
		return skel->progs.calloc_entry;
	case AT_PROBE_REALLOC:
		return skel->progs.realloc_entry;
	default:
		return NULL;
	}
}

void at_attach_prepare(struct alloctap *skel, int stacks)
{
	struct bpf_program *progs[] = { skel->progs.alloc_entry,   skel->progs.malloc_entry,
					skel->progs.calloc_entry,  skel->progs.realloc_entry,
					skel->progs.free_entry,    skel->progs.alloc_return,
					skel->progs.internal_call, skel->progs.loader_state };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_expected_attach_type(progs[i], AT_BPF_TRACE_UPROBE_MULTI);
	/* with stacks, the one alloc_entry: each program that walks is verified on its own */
	for (uint32_t code = 0; code < AT_PROBE_FUNC_COUNT; code++)
		if (own_entry_program(skel, code))
			bpf_program__set_autoload(own_entry_program(skel, code), !stacks);
}

/* The program for the entry of function f: its own when it has one (loaded) and the arguments
 * are in their registers at the site, else alloc_entry, told by the cookie. */
static struct bpf_program *entry_program(struct alloctap *skel, const struct probed_function *f)
{
	struct bpf_program *own = own_entry_program(skel, f->code);

	if (own && bpf_program__autoload(own) && !args_moved(f))
		return own;
	return skel->progs.alloc_entry;
}

/* Links entry programs at the nallocs allocation functions of f (indexed by allocs_of): one
 * link per program, with the sites of every function it serves. 0, or -1 with errno set. */
static int link_entries(struct alloctap *skel, struct at_probes *p, pid_t pid, const char *path,
			uint32_t object, const struct probed_function *f, const unsigned *allocs_of,
			unsigned nallocs)
{
	struct bpf_program *prog_of[16];
	int linked[16] = { 0 };

	for (unsigned i = 0; i < nallocs; i++)
		prog_of[i] = entry_program(skel, &f[allocs_of[i]]);
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
		if (add_link(p, prog_of[i], 0, pid, path, offsets, cookies, n) < 0)
			return -1;
	}
	return 0;
}

/* The functions of one object, for naming a site in a refusal's message. */
struct sites_named {
	const struct probed_function *f;
	int n;
};

/* The name of the function whose probes are at offset (at_site_name_fn), or NULL. */
static const char *site_name(void *arg, uint64_t offset)
{
	const struct sites_named *s = arg;

	for (int i = 0; i < s->n; i++)
		if (s->f[i].site_offset == offset || s->f[i].function_offset == offset)
			return s->f[i].name;
	return NULL;
}

int at_attach_object(struct alloctap *skel, struct at_probes *p, const char *path, pid_t pid,
		     uint32_t object, uint32_t *defined, char *why, size_t whylen)
{
	struct probed_function f[16];
	struct at_elf e;
	const char *reason;
	unsigned first = p->nlinks;

	if (at_elf_open(&e, path, &reason) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, reason);
		return -1;
	}
	struct at_scanned_object internal = { 0 };
	int n = locate(&e, path, f, list_functions(f), why, whylen);
	if (n > 0)
		note_internal_calls(p, &e, path, f, (unsigned)n, &internal);
	at_elf_close(&e);
	if (n < 0)
		return -1;
	/* an allocation function's entry and return probes share its site */
	uint64_t allocs[16], frees[16], objects[16];
	unsigned allocs_of[16], nallocs = 0, nfrees = 0;

	for (unsigned i = 0; i < 16; i++)
		objects[i] = (uint64_t)object << AT_COOKIE_OBJECT_SHIFT;
	for (int i = 0; i < n; i++) {
		if (!f[i].has_return) {
			frees[nfrees++] = f[i].site_offset;
			continue;
		}
		allocs_of[nallocs] = (unsigned)i;
		allocs[nallocs++] = f[i].site_offset;
	}
	/* Return probes first, so that a call already running is ignored rather than half-seen;
	 * the call sites last: one marked before its entry probe exists would stay marked. */
	if (add_link(p, skel->progs.alloc_return, 1, pid, path, allocs, objects, nallocs) < 0 ||
	    link_entries(skel, p, pid, path, object, f, allocs_of, nallocs) < 0 ||
	    add_link(p, skel->progs.free_entry, 0, pid, path, frees, objects, nfrees) < 0 ||
	    add_link(p, skel->progs.internal_call, 0, pid, path, internal.call_offsets, NULL,
		     internal.ncalls) < 0)
		goto fail;
	p->functions += (unsigned)n;
	*defined = 0;
	for (int i = 0; i < n; i++)
		*defined |= 1u << f[i].code;
	return 0;
fail:;
	int err = errno;
	int gone = pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
	char reason_einval[1024] = "";
	struct sites_named named = { f, n };

	if (err == EINVAL)
		at_probe_einval_reason(path, site_name, &named, reason_einval,
				       sizeof(reason_einval));
	snprintf(why, whylen, "cannot attach a uprobe to %s%s: %s%s", path,
		 gone ? " (the process exited during attach)" : "", strerror(err), reason_einval);
	while (p->nlinks > first)
		close(p->links[--p->nlinks]);
	return -1;
}

int at_attach_loader(struct alloctap *skel, struct at_probes *p, const char *path, pid_t pid,
		     char *why, size_t whylen)
{
	struct at_elf e;
	const char *reason;
	uint64_t vaddr, offset;

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
	at_elf_close(&e);
	if (!found) {
		snprintf(why, whylen, "%s has no _dl_debug_state: not a dynamic loader alloctapd "
			 "knows", path);
		return -1;
	}
	if (add_link(p, skel->progs.loader_state, 0, pid, path, &offset, &cookie, 1) < 0) {
		snprintf(why, whylen, "cannot attach a uprobe to %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Threads that destroy links together (see at_detach_all). */
#define DETACH_THREADS 32

/* Every step-th link from first on. */
struct detach_share {
	struct at_probes *p;
	unsigned first, step;
};

static void *detach_share(void *arg)
{
	const struct detach_share *d = arg;

	for (unsigned i = d->first; i < d->p->nlinks; i += d->step)
		close(d->p->links[i]);
	return NULL;
}

void at_detach_all(struct at_probes *p)
{
	pthread_t threads[DETACH_THREADS];
	struct detach_share shares[DETACH_THREADS];
	int started[DETACH_THREADS] = { 0 };
	unsigned n = p->nlinks < DETACH_THREADS ? p->nlinks : DETACH_THREADS;

	for (unsigned k = 0; k < n; k++) {
		shares[k] = (struct detach_share){ p, k, n };
		started[k] = k > 0 && pthread_create(&threads[k], NULL, detach_share, &shares[k]) == 0;
	}
	for (unsigned k = 0; k < n; k++)
		if (!started[k])
			detach_share(&shares[k]);
	for (unsigned k = 0; k < n; k++)
		if (started[k])
			pthread_join(threads[k], NULL);
	p->nlinks = 0;
	p->functions = 0;
}
