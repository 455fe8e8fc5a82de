/* attach.c: planting the probes of one object. */
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "alloctap.skel.h"
#include "attach.h"
#include "display.h"
#include "probe_site.h"
#include "x86_insn.h"

struct probed_function {
	const char *name;
	struct bpf_program *entry;
	int has_return;
	uint16_t reads; /* argument registers the entry program reads */
	uint64_t entry_offset, return_offset;
	const char *site_insn, *site_why;
};

#define ARGS1 AT_REG_BIT(AT_RDI)
#define ARGS2 (ARGS1 | AT_REG_BIT(AT_RSI))
#define ARGS3 (ARGS2 | AT_REG_BIT(AT_RDX))

/* The family, in the order aliases are named (glibc's memalign == aligned_alloc). */
static unsigned list_functions(struct alloctap *skel, struct probed_function *f)
{
	struct probed_function all[] = {
		{ "malloc", skel->progs.malloc_entry, 1, ARGS1, 0, 0, NULL, NULL },
		{ "calloc", skel->progs.calloc_entry, 1, ARGS2, 0, 0, NULL, NULL },
		{ "realloc", skel->progs.realloc_entry, 1, ARGS2, 0, 0, NULL, NULL },
		{ "free", skel->progs.free_entry, 0, ARGS1, 0, 0, NULL, NULL },
		{ "memalign", skel->progs.memalign_entry, 1, ARGS2, 0, 0, NULL, NULL },
		{ "posix_memalign", skel->progs.posix_memalign_entry, 1, ARGS3, 0, 0, NULL, NULL },
		{ "aligned_alloc", skel->progs.aligned_alloc_entry, 1, ARGS2, 0, 0, NULL, NULL },
		{ "valloc", skel->progs.valloc_entry, 1, ARGS1, 0, 0, NULL, NULL },
		{ "pvalloc", skel->progs.pvalloc_entry, 1, ARGS1, 0, 0, NULL, NULL },
		{ "reallocarray", skel->progs.reallocarray_entry, 1, ARGS3, 0, 0, NULL, NULL },
	};
	memcpy(f, all, sizeof(all));
	return sizeof(all) / sizeof(all[0]);
}

/* Finds the offsets of every function the object defines; drops aliases. Returns how many
 * remain, or -1 (why set). */
static int locate(const char *path, struct probed_function *f, unsigned n, char *why,
		  size_t whylen)
{
	struct at_elf e;
	const char *reason;
	unsigned kept = 0;
	int have_malloc = 0;

	if (at_elf_open(&e, path, &reason) < 0) {
		snprintf(why, whylen, "cannot read %s: %s", path, reason);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct at_probe_choice c;
		int rc = at_probe_entry_site(&e, f[i].name, f[i].has_return, f[i].reads, &c);

		f[i].entry_offset = c.entry_offset;
		f[i].return_offset = c.function_offset;
		f[i].site_insn = c.insn;
		f[i].site_why = c.why;
		if (rc < 0) {
			snprintf(why, whylen, "%s: %s is outside every executable segment", path,
				 f[i].name);
			at_elf_close(&e);
			return -1;
		}
		if (rc == 0)
			continue;
		int alias = 0;
		for (unsigned j = 0; j < kept; j++)
			alias |= f[j].return_offset == f[i].return_offset;
		if (alias)
			continue;
		have_malloc |= strcmp(f[i].name, "malloc") == 0;
		DISPLAYLEVEL(3, "alloctapd: probe %s: %s+0x%llx, entry probe at +%llu (%s: %s)%s\n",
			     f[i].name, path, (unsigned long long)f[i].return_offset,
			     (unsigned long long)(f[i].entry_offset - f[i].return_offset),
			     f[i].site_insn, f[i].site_why, f[i].has_return ? ", return probe" : "");
		f[kept++] = f[i];
	}
	at_elf_close(&e);
	if (!have_malloc) {
		snprintf(why, whylen, "%s defines no malloc", path);
		return -1;
	}
	return (int)kept;
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
	unsigned first = p->nlinks;
	int n = locate(path, f, list_functions(skel, f), why, whylen);

	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (f[i].has_return &&
		    attach_one(p, skel->progs.alloc_return, 1, pid, path, f[i].return_offset) < 0)
			goto fail;
	for (int i = 0; i < n; i++)
		if (attach_one(p, f[i].entry, 0, pid, path, f[i].entry_offset) < 0)
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
