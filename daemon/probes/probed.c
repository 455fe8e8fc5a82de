/* probed.c: which objects are probed, and for which process. */
#include "probed.h"

int at_probed_has(const struct at_probed *p, uint64_t dev, uint64_t inode, pid_t pid)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->objs[i].dev == dev && p->objs[i].inode == inode &&
		    (p->objs[i].pid == pid || p->objs[i].pid == -1))
			return 1;
	return 0;
}

int at_probed_add(struct at_probed *p, uint64_t dev, uint64_t inode, pid_t pid)
{
	if (p->n == AT_PROBED_MAX)
		return -1;
	p->objs[p->n].dev = dev;
	p->objs[p->n].inode = inode;
	p->objs[p->n].pid = pid;
	p->n++;
	return 0;
}

int at_probed_full(const struct at_probed *p)
{
	return p->n == AT_PROBED_MAX;
}

void at_probed_forget(struct at_probed *p, pid_t pid)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < p->n; i++)
		if (p->objs[i].pid != pid)
			p->objs[kept++] = p->objs[i];
	p->n = kept;
}
