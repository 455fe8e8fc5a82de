/* stack_procs.h: the executable mappings of each traced process, as the BPF walker needs them
 * (struct at_bpf_mappings: sorted, each with its load bias and table index) and as a trace
 * records them (struct at_mapping, each written once before the first stack that needs it).
 *
 * A scan reads /proc/PID/maps; every executable file mapping gets its object's unwind table,
 * built once per object (at_unwind_cache, shared by build-id) and loaded once into the BPF
 * arrays (stack_tables.h). Objects are opened through /proc/PID/map_files, so a deleted file or
 * one in another mount namespace is still the mapped one. Executable memory without a file (a
 * JIT's code) is kept too, as AT_BPF_OPAQUE: a walk ends there without asking for a rescan.
 *
 * Each mapping has a serial, unique over the session and kept by the same mapping (place,
 * offset, file, build-id) from scan to scan: the BPF walk records, per frame, the serial of the
 * mapping the pc fell in, and a stack's identity includes them, so two objects mapped in turn at
 * one address give two stacks, each written after its own mapping record. Mappings a scan no
 * longer sees are kept (retired) for the stacks taken before it.
 *
 * These mappings stay a registry of their own, beside the process table (proctable.h): they
 * belong to --stacks and its table builder. The table drives their forgetting: a process's go
 * (at_stack_procs_forget, through at_stacks_forgotten, the table's forget hook) when its slot
 * does, once the output has written every event of it; a pid that came back before keeps its
 * entry, whose old mappings its first scan retired. */
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
	int written;         /* its MAPPING record is the last one of its addresses in the trace */
	int anonymous;       /* executable memory without a file: no record, no table */
	uint32_t serial;     /* 1, 2, ... over the session (struct at_stack_procs) */
	const struct at_unwind_table *table; /* NULL: none loaded */
	int64_t bias;
	int pending;         /* its object's table is being built (table NULL meanwhile) */
	uint8_t key[AT_UNWIND_BUILD_ID_MAX]; /* its object's (at_unwind_object_key) */
	uint8_t key_len;
};

struct at_stack_proc {
	pid_t pid;
	uint64_t scanned_ms;  /* when its maps were last read, or tried */
	uint32_t count;
	uint32_t pending;     /* of its current mappings, those whose table is being built */
	struct at_stack_mapping *maps;
	uint32_t retired_count, retired_cap;
	struct at_stack_mapping *retired; /* seen by an earlier scan, not by the last */
};

/* A table built and loaded by a scan, for -v. */
typedef void (*at_stack_table_loaded_fn)(void *arg, const char *path,
					 const struct at_unwind_table *t);

/* A table to build off the caller's thread: the object at path, known by key. 0, or -1 (the
 * request could not be made: the mapping goes without a table). */
typedef int (*at_stack_table_request_fn)(void *arg, const char *path,
					 const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
					 uint8_t key_len);

/* An object's key. */
struct at_stack_key {
	uint8_t id[AT_UNWIND_BUILD_ID_MAX];
	uint8_t len;
};

struct at_stack_procs {
	struct at_stack_proc *procs;
	size_t count, cap;
	struct at_unwind_cache cache;
	struct at_stack_tables *tables;
	at_stack_table_loaded_fn loaded;
	void *arg;
	at_stack_table_request_fn request; /* NULL: a scan builds the tables itself */
	void *request_arg;
	struct at_stack_key *pending, *failed; /* tables asked for; tables that cannot be built */
	size_t pending_count, pending_cap, failed_count, failed_cap;
	uint64_t no_table;    /* executable mappings whose table could not be built or loaded */
	uint64_t too_many;    /* mappings past AT_BPF_MAX_MAPPINGS in one process */
	uint32_t last_serial;
};

void at_stack_procs_init(struct at_stack_procs *ps, struct at_stack_tables *tables,
			 at_stack_table_loaded_fn loaded, void *arg);
void at_stack_procs_free(struct at_stack_procs *ps);

/* From now on a scan does not build a table itself: it asks request for it, the mappings of
 * that object go without a table meanwhile (AT_BPF_OPAQUE: their frames end the stack as
 * incomplete) and are marked pending, and at_stack_procs_built takes the result. */
void at_stack_procs_defer(struct at_stack_procs *ps, at_stack_table_request_fn request,
			  void *arg);

/* The table of the object with key key_len asked for is built (t, which ps takes) or cannot be
 * (t NULL; gone: only the path it was asked at is gone, so a later scan asks again). The caller
 * then scans again the processes at_stack_procs_waits_for names. 0, or -1 (ENOMEM). */
int at_stack_procs_built(struct at_stack_procs *ps, const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
			 uint8_t key_len, struct at_unwind_table *t, int gone);

/* Whether a current mapping of p waits for the table of the object with that key. */
int at_stack_procs_waits_for(const struct at_stack_proc *p,
			     const uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t key_len);

/* Reads pid's executable mappings from maps_path (normally /proc/PID/maps), builds and loads
 * the tables they need, fills out and replaces what ps remembers of pid (a mapping seen before
 * keeps its serial and whether it is written; one no longer there is retired). 0, or -1 with
 * errno (the maps cannot be read: the process is gone, say); either way pid's scanned_ms
 * becomes now_ms, so that a caller can limit how often it tries. */
int at_stack_procs_scan(struct at_stack_procs *ps, pid_t pid, const char *maps_path,
			uint64_t now_ms, struct at_bpf_mappings *out);

/* A new file starts: no mapping is in it yet. */
void at_stack_procs_unwritten(struct at_stack_procs *ps);

/* ps forgets pid: its mappings, current and retired, go (the tables stay, shared by
 * object). Nothing when ps knows nothing of pid. */
void at_stack_procs_forget(struct at_stack_procs *ps, pid_t pid);

/* What ps knows of pid, or NULL. */
struct at_stack_proc *at_stack_procs_find(struct at_stack_procs *ps, pid_t pid);

/* The mapping of p with this serial, current or retired; NULL when there is none (0 never
 * names one). */
struct at_stack_mapping *at_stack_procs_serial(struct at_stack_proc *p, uint32_t serial);

/* The serial of p's current mapping holding pc, 0 when none does. */
uint32_t at_stack_procs_serial_at(const struct at_stack_proc *p, uint64_t pc);

/* m's record has been written: it is the last of its addresses in the trace, so every other
 * mapping of p overlapping it is not written any more. */
void at_stack_procs_mark_written(struct at_stack_proc *p, struct at_stack_mapping *m);

#endif
