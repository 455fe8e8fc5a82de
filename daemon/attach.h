/* attach.h: planting the probes of one object, for one pid or all. */
#ifndef ALLOCTAP_ATTACH_H
#define ALLOCTAP_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct alloctap;
struct bpf_link;

#define AT_MAX_LINKS 1024
#define AT_MAX_SCANNED 256

/* A file scanned for the allocator's direct calls to its own entry points. */
struct at_scanned_object {
	uint64_t dev, ino;
	uint64_t object;   /* its number in the BPF program's internal_calls map, 0: none */
	uint32_t entries;  /* bit i: the i-th function probed is called so, and checks */
};

struct at_probes {
	struct bpf_link *links[AT_MAX_LINKS];
	unsigned nlinks;
	unsigned functions; /* functions probed (aliases once) */
	unsigned objects;   /* object numbers given */
	struct at_scanned_object scanned[AT_MAX_SCANNED];
	unsigned nscanned;
};

/* Attaches the malloc family of the object at path, for pid (-1: every process). Functions the
 * object does not define are skipped; an alias (same address) is probed once, under the first
 * name. Return probes go in first, so a call already running when we attach is ignored rather
 * than half-seen. A shared library's direct calls to its own entry points go into the BPF
 * program's internal_calls map, and each entry probe's cookie names the object and the
 * site's address in it (alloctap.h), so that those calls are not recorded. 0, or -1 with a
 * reason in why (nothing of this object stays attached). */
int at_attach_object(struct alloctap *skel, struct at_probes *p, const char *path, pid_t pid,
		     char *why, size_t whylen);

/* Destroys every link. */
void at_detach_all(struct at_probes *p);

#endif
