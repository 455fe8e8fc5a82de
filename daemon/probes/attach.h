/* attach.h: planting the probes of one object, for one pid or all. */
#ifndef ALLOCTAP_ATTACH_H
#define ALLOCTAP_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "link_closer.h"

struct at_bpf;

#define AT_MAX_SCANNED 256
#define AT_MAX_CALL_SITES 32
/* Objects (a file, for one family) the session gives ids to: 1 to AT_OBJECTS_MAX. */
#define AT_OBJECTS_MAX 256
/* Dynamic loaders whose _dl_debug_state site is kept. */
#define AT_MAX_LOADERS 16

/* A file scanned for the allocator's direct calls to its own entry points. */
struct at_scanned_object {
	uint64_t dev, ino;
	unsigned ncalls;   /* call instructions probed, each with internal_call */
	uint64_t call_offsets[AT_MAX_CALL_SITES]; /* their file offsets */
};

/* A uprobe_multi link, and the process it is for (-1: every process). */
struct at_link {
	int fd;
	pid_t pid;
};

struct at_plan; /* an object's links, worked out once from its ELF (attach.c) */

/* A dynamic loader's _dl_debug_state, found once, and the first byte of its code. */
struct at_loader_site {
	uint64_t dev, ino, offset, cookie;
	uint8_t insn;
};

/* The probes planted. Starts zeroed; at_detach_all releases everything. */
struct at_probes {
	struct at_link *links; /* every link attached and not released */
	unsigned nlinks, cap;
	unsigned functions; /* functions probed (aliases once) */
	struct at_scanned_object scanned[AT_MAX_SCANNED];
	unsigned nscanned;
	struct at_plan *plans[AT_OBJECTS_MAX]; /* by object id - 1 */
	struct at_loader_site loaders[AT_MAX_LOADERS];
	unsigned nloaders;
	struct at_link_closer closer; /* the links of processes that ended */
	uint64_t attach_ns, attached;  /* time spent attaching links for one pid, and how many */
	uint64_t released;              /* links of ended processes handed to the closer */
};

/* Attaches the functions of family (enum at_family: AT_FAMILY_C, the malloc family) of the
 * object at path, for pid (-1: every process); object (1 to AT_OBJECTS_MAX) is the file's id
 * for that family. The object's ELF is read once per id: its sites and cookies are kept, and
 * so is a descriptor of the file, for at_attach_again. The object must define the family's first
 * function (lib/functions.h's AT_FAMILIES: malloc). Functions the object does not define are
 * skipped; an alias (same address) is probed once, under the first name. Return probes go in
 * first, so a call already running when we attach is ignored rather than half-seen. A shared
 * library's direct calls to its own entry points from outside them get a probe on their call
 * instruction (the BPF program's internal_call), so that those calls are not recorded. Every
 * probe's cookie carries object, the id the session gives the file, and family
 * (AT_COOKIE_OBJECT_SHIFT, AT_COOKIE_FAMILY_SHIFT). 0 with the functions probed in *defined
 * (bit 1 << enum at_probe_func, aliases under their first name), or -1 with a reason in why
 * (nothing of this object stays attached). */
int at_attach_object(struct at_bpf *bpf, struct at_probes *p, const char *path, pid_t pid,
		     unsigned family, uint32_t object, uint32_t *defined, char *why, size_t whylen);

/* Attaches for pid the probes of object once more, as at_attach_object attached them for
 * another process (a fork child has its parent's mappings: its own links are planted while it
 * is held at its first stop). The file is named by the descriptor kept, so a parent that has
 * gone since, or a path that names another file now, changes nothing. 0, or -1 with a reason
 * in why (object never attached, or the kernel refused). */
int at_attach_again(struct at_bpf *bpf, struct at_probes *p, uint32_t object, pid_t pid,
		    char *why, size_t whylen);

/* Takes out of process pid, which is not traced, the breakpoints of every probe that it
 * carries from its creator (a child made by fork copies its creator's memory), by putting back
 * the sites' original bytes (scrub.h). Nothing while it shares its creator's memory (vfork:
 * those breakpoints are the creator's), or when that cannot be told (EOPNOTSUPP). Returns how
 * many were put back, or -1 with errno set. */
int at_probes_scrub(const struct at_probes *p, pid_t pid, pid_t creator);

/* Hands the links attached for pid alone to threads that close them (link_closer.h): pid has
 * ended. Returns how many. */
unsigned at_release_pid(struct at_probes *p, pid_t pid);

/* Closes the links attached for pid alone now, and returns once they are gone (side by side,
 * on threads of their own): pid's thread group leader has exited in an exec from another
 * thread, and its links, which still run for the process, must be gone before the new
 * program's run (they would record every call a second time). Returns how many. */
unsigned at_detach_pid(struct at_probes *p, pid_t pid);

/* Attaches the BPF program loader_state to the _dl_debug_state of the dynamic loader at path,
 * for pid (-1: every process): a process in the loading map is held there once its libraries
 * are mapped. The cookie takes the program from the probe's address to _r_debug.r_state, so
 * that only the call made once they are (RT_CONSISTENT) holds. 0, or -1 with a reason in why. */
int at_attach_loader(struct at_bpf *bpf, struct at_probes *p, const char *path, pid_t pid,
		     char *why, size_t whylen);

/* Between the program's open and load (bpf.h): with stacks, the entry programs of single
 * functions are not loaded (alloc_entry serves every function); with one_link, neither are
 * free's nor the internal call sites': every entry probe of an object is in one link of
 * alloc_entry (each link costs a process an attach and a close). */
void at_attach_prepare(struct at_bpf *bpf, int stacks, int one_link);

/* Destroys every link, those handed over by at_release_pid included, and returns once they are
 * gone. Each link's end waits for the kernel's grace periods (whatever the number of sites in
 * it; doc/DESIGN.md, decisions 1 and 11, measure the wait): the links are closed from threads of
 * their own, so that the waits overlap. What was worked out of each object is kept. */
void at_detach_all(struct at_probes *p);

/* at_detach_all, and everything kept goes too (the plans, the files' descriptors). */
void at_probes_free(struct at_probes *p);

#endif
