/* stack.h: call stacks and the mappings that give their addresses a meaning.
 *
 * An allocation event may refer to a stack (at_event.stack, 0: none). A stack is the user call
 * stack taken at the allocation's entry, innermost first: pcs[0] is the probed function's
 * entry address (malloc itself), pcs[1] the return address into malloc's caller, and so on up
 * to the outermost frame (_start or the thread's start routine). Stack ids are numbered from 1
 * in the order the stacks first appear in a trace, and a stack record always comes before the
 * first event that refers to it.
 *
 * Addresses are those of one process (stack.pid); the process's mappings, each written once
 * before the first stack that needs it, say which object (path, build-id) and which file
 * offset an address falls in, so a trace can be symbolized after the process is gone, on
 * another machine holding the same objects or their debug files. A later mapping of the same
 * pid that overlaps an earlier one replaces it for the stacks that follow (munmap, then a new
 * dlopen at the same addresses).
 *
 * Every frame has a kind (enum at_frame_kind, lib/frames.h): today's are all native, pcs of the
 * process. The other kinds are for the frames of other runtimes (an interpreter's): their values
 * are named by the NAMES records of their process (struct at_frame_name), written before the
 * first stack that needs them as mapping records are for native frames (doc/FORMAT.md 5.6,
 * 5.10). */
#ifndef ALLOCTAP_STACK_H
#define ALLOCTAP_STACK_H

#include <stdint.h>

#include "../bpf/stack_flags.h" /* AT_STACK_MAX_FRAMES, enum at_stack_flags: shared with the
                                  * BPF program */
#include "frames.h"              /* enum at_frame_kind, the table of frame kinds */

#define AT_BUILD_ID_MAX 20

struct at_stack {
	uint32_t id;    /* 1, 2, ... in order of first appearance in the trace */
	uint32_t pid;   /* the process whose addresses pcs are */
	uint16_t count; /* frames in pcs, 1..AT_STACK_MAX_FRAMES */
	uint16_t flags; /* enum at_stack_flags (bpf/stack_flags.h) */
	uint64_t pcs[AT_STACK_MAX_FRAMES]; /* each frame's value: a pc for a native frame */
	uint8_t kinds[AT_STACK_MAX_FRAMES]; /* enum at_frame_kind of pcs[i], i < count: a reader
					     * fills them (0 without AT_STACK_KINDS) */
};

/* The name of the frames of a kind named by NAMES records (lib/frames.h's AT_NAMED_NAMES):
 * the frames of process pid of that kind and value are function, at line of file. */
struct at_frame_name {
	uint32_t pid;
	uint8_t kind;         /* enum at_frame_kind, never AT_FRAME_NATIVE */
	uint64_t value;       /* the frames' value (struct at_stack's pcs[i]) */
	uint32_t line;        /* 0: unknown */
	const char *function; /* kept by the caller */
	const char *file;     /* kept by the caller; "" or NULL: unknown */
};

/* An executable mapping of a process: [start, end) maps path from file offset. */
struct at_mapping {
	uint32_t pid;
	uint8_t build_id_len; /* 0: the object has no GNU build-id note */
	uint8_t build_id[AT_BUILD_ID_MAX];
	uint64_t start, end, offset;
	const char *path;     /* as /proc/PID/maps shows it; kept by the caller */
};

/* A hash of an object's identity, its path and build-id (FNV-1a), for the tables that keep
 * each object of a trace once. */
static inline uint64_t at_object_hash(const char *path, const uint8_t *build_id, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ build_id[i]) * 0x100000001b3ull;
	for (; *path; path++)
		h = (h ^ (uint8_t)*path) * 0x100000001b3ull;
	return h;
}

#endif
