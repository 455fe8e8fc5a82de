/* libcs.c: the C libraries the running processes map. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "discover.h"
#include "functions.h"
#include "libcs.h"
#include "procmaps.h"

struct scan {
	struct at_libcs *l;
	const char *proc;
	int pid;
};

/* A mapping of one process: a C library not seen yet is added if it defines the C family's
 * first function (malloc), and ends the walk of that process's maps (one C library per process
 * is enough). */
static int note_libc(const struct at_procmaps_entry *e, void *arg)
{
	struct scan *s = arg;
	struct at_libcs *l = s->l;
	uint64_t dev = ((uint64_t)e->dev_major << 32) | e->dev_minor;

	if (e->path_truncated || !at_is_libc_path(e->path))
		return 0;
	for (unsigned i = 0; i < l->n; i++)
		if (l->objs[i].dev == dev && l->objs[i].inode == e->inode)
			return 0;
	if (l->n == AT_LIBCS_MAX)
		return 0;
	l->objs[l->n].dev = dev;
	l->objs[l->n].inode = e->inode;
	if (at_mapped_path(s->proc, s->pid, e, l->objs[l->n].path, sizeof(l->objs[0].path)) == 0 &&
	    at_discover_defines(l->objs[l->n].path, at_family_symbol(AT_FAMILY_C))) /* malloc */
		l->n++;
	return 1;
}

int at_libcs_scan(const char *proc, struct at_libcs *l)
{
	struct scan s = { l, proc, 0 };
	DIR *dir = opendir(proc);
	struct dirent *de;

	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		char maps[4200];

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		s.pid = atoi(de->d_name);
		snprintf(maps, sizeof(maps), "%s/%d/maps", proc, s.pid);
		at_procmaps_for_each_file(maps, note_libc, &s, NULL);
	}
	closedir(dir);
	return 0;
}
