/* probed.h: which objects are probed, and for which process. A file (device, inode) is probed
 * once for each pid, or once for every process, whatever paths name it: a second set of
 * probes on the same code would record every call twice. It stays a registry of its own, keyed
 * by file: a pid's scopes are few, and the process table's end of a process (proctable.h) is
 * where the targets forget them. It grows with the processes traced (a followed tree's are
 * probed each for itself), and starts zeroed; at_probed_free releases it. */
#ifndef ALLOCTAP_PROBED_H
#define ALLOCTAP_PROBED_H

#include <stdint.h>
#include <sys/types.h>

struct at_probed_entry {
	uint64_t dev, inode;
	pid_t pid; /* -1: every process */
};

struct at_probed {
	struct at_probed_entry *objs;
	unsigned n, cap;
};

/* Whether the file is probed for pid, or for every process. */
int at_probed_has(const struct at_probed *p, uint64_t dev, uint64_t inode, pid_t pid);
/* Notes that the file is probed for pid (-1: every process). 0, or -1 when out of memory. */
int at_probed_add(struct at_probed *p, uint64_t dev, uint64_t inode, pid_t pid);
/* Forgets what was probed for pid (its probes went with the thread they were attached to, or
 * with the process at its end). */
void at_probed_forget(struct at_probed *p, pid_t pid);
/* Calls fn for each file probed for pid alone (not those probed for every process); fn may not
 * change p. */
void at_probed_each(const struct at_probed *p, pid_t pid,
		    void (*fn)(void *arg, uint64_t dev, uint64_t inode), void *arg);
/* Releases the registry; it is empty and usable again after. */
void at_probed_free(struct at_probed *p);

#endif
