/* attach.h: planting the probes of one object, for one pid or all. */
#ifndef ALLOCTAP_ATTACH_H
#define ALLOCTAP_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct at_bpf;

#define AT_MAX_LINKS 1024
#define AT_MAX_SCANNED 256
#define AT_MAX_CALL_SITES 32

/* A file scanned for the allocator's direct calls to its own entry points. */
struct at_scanned_object {
	uint64_t dev, ino;
	unsigned ncalls;   /* call instructions probed, each with internal_call */
	uint64_t call_offsets[AT_MAX_CALL_SITES]; /* their file offsets */
};

struct at_probes {
	int links[AT_MAX_LINKS]; /* uprobe_multi link descriptors */
	unsigned nlinks;
	unsigned functions; /* functions probed (aliases once) */
	struct at_scanned_object scanned[AT_MAX_SCANNED];
	unsigned nscanned;
};

/* Attaches the functions of family (enum at_family: AT_FAMILY_C, the malloc family) of the
 * object at path, for pid (-1: every process); the object must define the family's first
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

/* Attaches the BPF program loader_state to the _dl_debug_state of the dynamic loader at path,
 * for pid (-1: every process): a process in the loading map is held there once its libraries
 * are mapped. The cookie takes the program from the probe's address to _r_debug.r_state, so
 * that only the call made once they are (RT_CONSISTENT) holds. 0, or -1 with a reason in why. */
int at_attach_loader(struct at_bpf *bpf, struct at_probes *p, const char *path, pid_t pid,
		     char *why, size_t whylen);

/* Between the program's open and load (bpf.h): with stacks, the entry programs of single
 * functions are not loaded (alloc_entry serves every function). */
void at_attach_prepare(struct at_bpf *bpf, int stacks);

/* Destroys every link. Each link's end waits for the kernel's grace periods (whatever the
 * number of sites in it; doc/DESIGN.md, decision 1, measures the wait): the links are closed
 * from threads of their own, so that the waits overlap. */
void at_detach_all(struct at_probes *p);

#endif
