/* stack_procs.h: the executable mappings of each traced process, as the BPF walker needs them
 * (struct at_bpf_mappings: sorted, each with its load bias and table index) and as a trace
 * records them (struct at_mapping, each written once before the first stack that needs it).
 *
 * A scan reads /proc/PID/maps; every executable file mapping gets its object's unwind table,
 * built once per object (at_unwind_cache, shared by build-id) and loaded once into the BPF
 * arrays (stack_tables.h). Objects are opened through /proc/PID/map_files, so a deleted file or
 * one in another mount namespace is still the mapped one. */
#ifndef ALLOCTAP_STACK_PROCS_H
#define ALLOCTAP_STACK_PROCS_H

#include <stdint.h>
#include <sys/types.h>

#include "stack.h"
#include "stack_tables.h"
#include "unwind_table.h"

/* One mapping as the trace records it. */
struct at_stack_mapping {
	struct at_mapping m; /* m.path points at path */
	char *path;
	int written;         /* its MAPPING record is in the trace */
	const struct at_unwind_table *table; /* NULL: none loaded */
	int64_t bias;
};

struct at_stack_proc {
	pid_t pid;
	uint64_t scanned_ms;  /* when its maps were last read */
	uint32_t count;
	struct at_stack_mapping *maps;
};

/* A table built and loaded by a scan, for -v. */
typedef void (*at_stack_table_loaded_fn)(void *arg, const char *path,
					 const struct at_unwind_table *t);

struct at_stack_procs {
	struct at_stack_proc *procs;
	size_t count, cap;
	struct at_unwind_cache cache;
	struct at_stack_tables *tables;
	at_stack_table_loaded_fn loaded;
	void *arg;
	uint64_t no_table;    /* executable mappings whose table could not be built or loaded */
	uint64_t too_many;    /* mappings past AT_BPF_MAX_MAPPINGS in one process */
};

void at_stack_procs_init(struct at_stack_procs *ps, struct at_stack_tables *tables,
			 at_stack_table_loaded_fn loaded, void *arg);
void at_stack_procs_free(struct at_stack_procs *ps);

/* Reads pid's executable mappings from maps_path (normally /proc/PID/maps), builds and loads
 * the tables they need, fills out and replaces what ps remembers of pid (mappings already
 * written stay written when they are the same). 0, or -1 with errno (the maps cannot be read:
 * the process is gone, say). */
int at_stack_procs_scan(struct at_stack_procs *ps, pid_t pid, const char *maps_path,
			uint64_t now_ms, struct at_bpf_mappings *out);

/* A new file starts: no mapping is in it yet. */
void at_stack_procs_unwritten(struct at_stack_procs *ps);

/* What ps knows of pid, or NULL. */
struct at_stack_proc *at_stack_procs_find(struct at_stack_procs *ps, pid_t pid);

#endif
