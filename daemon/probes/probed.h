/* probed.h: which objects are probed, and for which process. A file (device, inode) is probed
 * once for each pid, or once for every process, whatever paths name it: a second set of
 * probes on the same code would record every call twice. It stays a registry of its own, keyed
 * by file: a pid's scopes are few, and the process table's end of a process (proctable.h) is
 * where the targets forget them. */
#ifndef ALLOCTAP_PROBED_H
#define ALLOCTAP_PROBED_H

#include <stdint.h>
#include <sys/types.h>

#define AT_PROBED_MAX 256

struct at_probed {
	struct {
		uint64_t dev, inode;
		pid_t pid; /* -1: every process */
	} objs[AT_PROBED_MAX];
	unsigned n;
};

/* Whether the file is probed for pid, or for every process. */
int at_probed_has(const struct at_probed *p, uint64_t dev, uint64_t inode, pid_t pid);
/* Notes that the file is probed for pid (-1: every process). 0, or -1 when the table is
 * full. */
int at_probed_add(struct at_probed *p, uint64_t dev, uint64_t inode, pid_t pid);
/* Whether the table is full (at_probed_add would fail). */
int at_probed_full(const struct at_probed *p);
/* Forgets what was probed for pid (its probes went with the thread they were attached to, or
 * with the process at its end). */
void at_probed_forget(struct at_probed *p, pid_t pid);

#endif
