/* symbolize.h: the addresses of a trace's stacks as function names, source lines and inlined
 * frames, from the objects their mappings name (lib/stack.h) and those objects' debug files.
 *
 * A symbolizer holds the mappings of every process of a trace, as the trace gives them, and
 * one cache entry per object (path and build-id), opened the first time one of its addresses
 * is looked up: its symbols come from .symtab (the object's, or its debug file's) or .dynsym,
 * its lines and inlined functions from DWARF. The debug file of an object is looked up by
 * build-id under a debug directory: DIR/.build-id/ab/cdef....debug; when it is not there and
 * DEBUGINFOD_URLS names servers, it is fetched from them by build-id (libdebuginfod, loaded
 * then, AT_DEBUGINFOD_LIBRARY; into its cache, DEBUGINFOD_CACHE_PATH), each fetch cut after
 * AT_DEBUGINFOD_FETCH_S seconds, a file of another build-id refused; after a
 * fetch fails for any reason but "none there", the servers are not asked again. What became
 * of each object's debug file, and how many of its frames stayed unnamed, is told at the end
 * (at_symbolizer_objects).
 *
 * An object that cannot be opened, or whose build-id is not the one the mapping record gives
 * (the file changed since the trace was taken), is reported once through the problem callback
 * and its addresses are never given names: their frames carry only the object's base name and
 * the file offset (at_frame_text: "libfoo.so+0x1234"). An object without a build-id (linked
 * with --build-id=none, a Go program) has nothing in the trace to compare with but the time
 * the trace began (at_symbolizer_trace_start): its file is used only if it has not changed
 * since (its ctime, which no one can set back, is older), else it is reported and unnamed.
 *
 * Frames of other kinds (lib/frames.h: an interpreter's) are named by the NAMES records of the
 * trace (at_symbolizer_add_name); at_symbolize_frame names a frame whatever its kind.
 *
 * Links with -ldw -lelf (libdebuginfod is loaded with dlopen: its header is needed to build). Not thread-safe: one symbolizer per thread. */
#ifndef ALLOCTAP_SYMBOLIZE_H
#define ALLOCTAP_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "stack.h"

#define AT_SYMBOLIZE_DEBUG_DIR "/usr/lib/debug"

/* The longest a fetch from debuginfod may take, in seconds (libdebuginfod's own
 * DEBUGINFOD_TIMEOUT, a wait without progress, applies too). */
#define AT_DEBUGINFOD_FETCH_S 60

/* The library loaded for fetches (Debian's libdebuginfod1). */
#define AT_DEBUGINFOD_LIBRARY "libdebuginfod.so.1"

/* The most frames one address gives (itself and the functions inlined into it). */
#define AT_SYMBOLIZE_MAX_INLINE 32

/* One frame. Strings stay valid until at_symbolizer_free. */
struct at_frame {
	const char *function; /* NULL: no symbol covers the address, or its object is unusable */
	const char *file;     /* source file, NULL without line information */
	unsigned line;        /* 0 without line information */
	unsigned decl_line;   /* the line the function is declared at (DWARF's), 0: unknown */
	int inlined;          /* 1: this function was inlined into the next frame */
	const char *object;   /* the object's base name; NULL: the address is in no mapping */
	/* The address in the object: its virtual address (through the PT_LOAD segments) when the
	 * object could be read, else the file offset the mapping gives. */
	uint64_t object_address;
};

/* Called once per unusable object: its path and why ("cannot open: No such file or
 * directory", "build-id 12ab... in the trace, 34cd... on disk"). */
typedef void (*at_symbolize_problem_fn)(void *arg, const char *path, const char *why);

struct at_symbolizer;

/* A symbolizer looking up debug files under debug_dir (NULL: AT_SYMBOLIZE_DEBUG_DIR). problem
 * may be NULL. NULL with errno set on failure. */
struct at_symbolizer *at_symbolizer_new(const char *debug_dir, at_symbolize_problem_fn problem,
					void *arg);
void at_symbolizer_free(struct at_symbolizer *z);

/* The recording start of the trace whose mappings are added next (the .atz header's, ns since
 * the Unix epoch; 0, the default: unknown, and no object without a build-id is named). */
void at_symbolizer_trace_start(struct at_symbolizer *z, uint64_t unix_ns);

/* Adds a mapping of m->pid (its path is copied). A mapping that overlaps earlier ones of the
 * same pid replaces them for the lookups that follow. 0, or -1 with errno set. */
int at_symbolizer_add_mapping(struct at_symbolizer *z, const struct at_mapping *m);

/* The frames of address pc of process pid, innermost first: the functions inlined at pc, then
 * the function holding them; at least one frame, at most max (> 0), returned. A return
 * address (return_address 1: every stack frame but the first) is looked up at pc - 1, since a
 * call that ends a function returns past its end; the first pc of a stack is a function's
 * entry and is looked up as it is. object_address is always that of pc itself. */
int at_symbolize(struct at_symbolizer *z, uint32_t pid, uint64_t pc, int return_address,
		 struct at_frame *frames, int max);

/* Adds the name of n->pid's frames of kind n->kind and value n->value (a NAMES record; its
 * strings are copied): a later name of the same frames replaces the earlier for the lookups that
 * follow (the earlier's strings stay valid until at_symbolizer_free). 0, or -1 with errno (EINVAL for a kind not named by NAMES records, lib/frames.h, or
 * no function; ENOMEM). */
int at_symbolizer_add_name(struct at_symbolizer *z, const struct at_frame_name *n);

/* Which name the frames of pid's kind and value have now: a number that changes when a later
 * NAMES record replaces their name (0: none), for a caller that keeps what it made of a name. */
uint32_t at_symbolizer_name_serial(const struct at_symbolizer *z, uint32_t pid, unsigned kind,
				   uint64_t value);

/* The mapping of process pid that holds address pc, as the mappings added so far give it: 1
 * with *m filled (its path and build-id those of the object, valid until at_symbolizer_free),
 * 0 when none holds it. */
int at_symbolizer_mapping(const struct at_symbolizer *z, uint32_t pid, uint64_t pc,
			  struct at_mapping *m);

/* The frames of one stack frame of process pid, whatever its kind (enum at_frame_kind): a
 * native frame's value is an address, looked up as at_symbolize says (return_address the
 * same); a frame of a kind named by NAMES records is one frame, its function, file and line
 * from its name (at_symbolizer_add_name), its object the kind's name ("test") and its
 * object_address the value, function NULL without a name; a kind the table lacks is one frame
 * with neither function nor object. At least one frame, at most max (> 0), returned. */
int at_symbolize_frame(struct at_symbolizer *z, uint32_t pid, unsigned kind, uint64_t value,
		       int return_address, struct at_frame *frames, int max);

/* The path of the debug file of build-id id (n bytes, 2 to AT_BUILD_ID_MAX) under debug_dir
 * (NULL: AT_SYMBOLIZE_DEBUG_DIR), "DIR/.build-id/ab/cdef....debug", into buf (cut to size):
 * the length it wanted, as snprintf; -1 with errno EINVAL for a build-id of another size. */
int at_debug_file_path(const char *debug_dir, const uint8_t *id, size_t n, char *buf,
		       size_t size);

/* What became of one object read for names (at_symbolizer_objects). Pointers are valid for the
 * call only. */
struct at_object_outcome {
	const char *path;
	const uint8_t *build_id;   /* build_id_len bytes; 0: the object has none */
	size_t build_id_len;
	uint64_t unnamed;          /* frames of its addresses given no function name, each
				    * lookup counted (the report looks up each address of a
				    * process once) */
	int debug_file;            /* 1: a debug file was found (under the debug directory, or
				    * from debuginfod) and read */
	int debuginfod;            /* 0 not asked; 1 its debug file came from debuginfod; -1 the
				    * fetch failed, debuginfod_errno says why (ENOENT: the servers
				    * have none; ECANCELED: cut after AT_DEBUGINFOD_FETCH_S;
				    * EBADMSG: the file served has another build-id, unused;
				    * ELIBACC: AT_DEBUGINFOD_LIBRARY cannot be loaded; else a
				    * connection's error); -2 not asked, an earlier fetch having
				    * failed with debuginfod_errno */
	int debuginfod_errno;
};

typedef void (*at_symbolize_object_fn)(void *arg, const struct at_object_outcome *o);

/* Calls fn for each object that was opened and read (not those reported unusable), in the
 * order the trace first named them. */
void at_symbolizer_objects(const struct at_symbolizer *z, at_symbolize_object_fn fn, void *arg);

/* The frame as one folded-stack word, in buf (NUL-terminated, cut to size): the function name,
 * else "OBJECT+0xADDRESS", else "[unknown]". Returns the length it wanted, as snprintf. */
int at_frame_text(const struct at_frame *f, char *buf, size_t size);

#endif
