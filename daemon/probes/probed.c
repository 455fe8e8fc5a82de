/* probed.c: which objects are probed, and for which process. */
#include <stdlib.h>

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
	if (p->n == p->cap) {
		unsigned cap = p->cap ? 2 * p->cap : 16;
		struct at_probed_entry *objs = realloc(p->objs, cap * sizeof(*objs));

		if (!objs)
			return -1;
		p->objs = objs;
		p->cap = cap;
	}
	p->objs[p->n++] = (struct at_probed_entry){ dev, inode, pid };
	return 0;
}

void at_probed_forget(struct at_probed *p, pid_t pid)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < p->n; i++)
		if (p->objs[i].pid != pid)
			p->objs[kept++] = p->objs[i];
	p->n = kept;
}

void at_probed_each(const struct at_probed *p, pid_t pid,
		    void (*fn)(void *arg, uint64_t dev, uint64_t inode), void *arg)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->objs[i].pid == pid)
			fn(arg, p->objs[i].dev, p->objs[i].inode);
}

void at_probed_free(struct at_probed *p)
{
	free(p->objs);
	*p = (struct at_probed){ 0 };
}
