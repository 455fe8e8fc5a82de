/* pytrace.h: the Python frames of a trace's stacks (alloctapd --stacks; doc/DESIGN.md,
 * decision 18).
 *
 * Which traced processes run a CPython whose frames the BPF walk reads: each scan of a
 * process's mappings looks for its interpreter until one is found (at_py_open), and the first
 * that finds a known one gives the BPF program its _PyRuntime and offsets; an interpreter the
 * walk does not know is said once per object and left with native frames. A stack the BPF
 * program took holds its native frames, then the thread's Python frames (kind python, a run's
 * first marked AT_BPF_FRAME_PYTHON_ENTRY): at_pytrace_splice puts each run in place of its
 * evaluation loop frame. Each Python frame value (a code object and an offset) is named once,
 * from the process's memory while it lives, and its NAMES record is written into each file
 * before the first stack there that needs it. */
#ifndef ALLOCTAP_PYTRACE_H
#define ALLOCTAP_PYTRACE_H

#include <stdint.h>
#include <sys/types.h>

#include "alloctap.h"
#include "py_layout.h"
#include "stack.h"

struct at_pytrace_proc;
struct snapshot;

/* A stack's snapshot by the hash the BPF program gave it (NULL snap: none, or a tombstone). */
struct snap_slot {
	uint64_t hash;
	struct snapshot *snap;
};

struct at_pytrace {
	struct at_pytrace_proc **procs;   /* processes whose interpreter was looked for */
	size_t count, cap;
	uint32_t file;                    /* the file being written: 1, 2, ... */
	char (*said)[128];                /* objects said to run an unknown interpreter */
	size_t nsaid;
	struct snap_slot *snap_by_hash;   /* snapshots taken, not bound to an id yet */
	size_t snap_slots, nsnaps, nsnaps_used; /* slots; snapshots; slots with a hash */
	struct snapshot **by_id;          /* snapshots by the stack's session id */
	size_t nby_id;
	uint64_t processes;               /* processes whose Python frames were read */
	uint64_t captured;                /* stacks named as soon as they were taken */
	uint64_t names, unnamed;          /* values named; values whose code could not be read */
	uint64_t spliced, mismatched;     /* stacks with Python frames; of those, a run without
					   * its loop frame or frames left over */
};

void at_pytrace_init(struct at_pytrace *t);
void at_pytrace_free(struct at_pytrace *t);

/* pid's mappings were read again: when its interpreter is not decided yet, looks for it. 1
 * when it now runs a known CPython (*out is what the BPF program needs), 0 otherwise. */
int at_pytrace_scan(struct at_pytrace *t, pid_t pid, struct at_bpf_py_proc *out);

/* pid runs a new program (exec) or has gone (forgotten): what was known of its interpreter
 * and names goes. */
void at_pytrace_forget(struct at_pytrace *t, pid_t pid);

/* Appends the Python frames of thread tid of pid, stopped, to a stack as the BPF program
 * would (pcs, kinds and serials, room frames at most): their count (0 for a process whose
 * frames are not read, or a thread without any); *filled: they filled the room. */
uint32_t at_pytrace_thread_frames(struct at_pytrace *t, pid_t pid, pid_t tid, uint64_t *pcs,
				  uint8_t *kinds, uint32_t *serials, uint32_t room, int *filled);

/* Whether a stack of the BPF program holds Python frames (raw kinds of count frames). */
int at_pytrace_has_python(const uint8_t *kinds, uint32_t count);

/* Makes a stack of the BPF program (count frames, AT_BPF_STACK_FRAMES at most: raw, kinds,
 * raw_serials) one stack of native and Python frames: st's pcs, kinds and count (st's pid and
 * flags set by the caller), and serials (each frame's mapping serial, 0 for a Python frame).
 * A run that finds no loop frame for it, or frames left over, keep the native frames from
 * there and flag the stack incomplete; in a truncated stack, it ends at the first loop frame
 * without its run. More than AT_STACK_MAX_FRAMES frames are cut there, truncated. */
void at_pytrace_splice(struct at_pytrace *t, const uint64_t *raw, const uint8_t *kinds,
		       const uint32_t *raw_serials, uint32_t count, struct at_stack *st,
		       uint32_t *serials);

/* A stack the BPF program has just taken (hash, of pid; its frames of the BPF program's kinds,
 * a Python frame's serial its globals folded): names its Python frames now, while their code
 * objects live, and keeps the names (a snapshot) until the stack gets its id
 * (at_pytrace_bind). A value named before for a frame of the same globals is not read again. */
void at_pytrace_capture(struct at_pytrace *t, pid_t pid, uint64_t hash, const uint64_t *pcs,
			const uint8_t *kinds, const uint32_t *serials, uint32_t count);
/* The stack of that hash got session id id: its snapshot, if one was taken, is the id's. */
void at_pytrace_bind(struct at_pytrace *t, uint64_t hash, uint32_t id);

/* Calls put for the NAMES record of each Python frame of st (session id id) whose name in the
 * current file is not the one it had when the stack was taken (its snapshot's; without one,
 * as read now): never written to the file, or another name written since. A value whose code
 * object could not be read gets none, and stays unnamed. */
void at_pytrace_names(struct at_pytrace *t, const struct at_stack *st, uint32_t id,
		      void (*put)(void *arg, const struct at_frame_name *n), void *arg);

/* A new file starts: no name is in it yet. */
void at_pytrace_new_file(struct at_pytrace *t);

#endif
