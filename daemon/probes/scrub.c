/* scrub.c: taking inherited breakpoints out of a process that is not traced. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include "procmaps.h"
#include "scrub.h"

/* One walk of the process's mappings. */
struct scrub {
	int mem;
	uint64_t dev, inode;
	const struct at_site_byte *sites;
	unsigned n;
	int restored;
};

/* Puts back the sites that lie in the executable mapping e of the file. */
static int scrub_mapping(const struct at_procmaps_entry *e, void *arg)
{
	struct scrub *s = arg;

	if (e->perms[2] != 'x' || e->inode != s->inode ||
	    makedev(e->dev_major, e->dev_minor) != s->dev)
		return 0;
	for (unsigned i = 0; i < s->n; i++) {
		uint64_t off = s->sites[i].offset;
		uint8_t now;

		if (off < e->offset || off - e->offset >= e->end - e->start)
			continue;
		off_t addr = (off_t)(e->start + (off - e->offset));
		if (pread(s->mem, &now, 1, addr) != 1 || now != AT_SCRUB_BREAKPOINT ||
		    s->sites[i].insn == AT_SCRUB_BREAKPOINT)
			continue;
		if (pwrite(s->mem, &s->sites[i].insn, 1, addr) == 1)
			s->restored++;
	}
	return 0;
}

int at_scrub_shares_memory(pid_t pid, pid_t other)
{
	long rc = syscall(SYS_kcmp, pid, other, KCMP_VM, 0, 0);

	return rc < 0 ? -1 : rc == 0;
}

int at_scrub_sites(pid_t pid, uint64_t dev, uint64_t inode, const struct at_site_byte *sites,
		   unsigned n)
{
	char path[64];
	struct scrub s = { .dev = dev, .inode = inode, .sites = sites, .n = n };

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((s.mem = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	int rc = at_procmaps_for_each_file(path, scrub_mapping, &s, NULL);
	int err = errno;
	close(s.mem);
	errno = err;
	return rc < 0 ? -1 : s.restored;
}
