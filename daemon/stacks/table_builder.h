/* table_builder.h: unwind tables built on threads of their own, so that the daemon's loop
 * never waits for one (doc/DESIGN.md, decision 14).
 *
 * The loop asks for an object's table by the path it opens the object at and the object's key
 * (at_unwind_object_key); a pool of threads (one per CPU by default) takes the requests in
 * order, at a lower priority than the loop, each build with its own libelf/libdw handles, and
 * hands each table back through a list the loop takes from when the builder's descriptor (an
 * eventfd) is readable: in the order they finish. With an on-disk cache (table_cache.h) a
 * thread first reads the table there by the object's build-id, and stores what it builds: only
 * the tables of objects that root (or the daemon's user) owns and nobody else may write, read
 * through the descriptor the build read, so that another user's object claiming a system
 * library's build-id never puts its table where later runs would take it. The builder touches
 * nothing else of the daemon: the in-memory tables, the BPF arrays and the process mappings
 * stay the loop's. Stopping does not wait for a build in progress: its thread finishes it,
 * frees it and ends on its own. */
#ifndef ALLOCTAP_TABLE_BUILDER_H
#define ALLOCTAP_TABLE_BUILDER_H

#include <stdint.h>

#include "unwind_table.h"

/* One object's table, asked for and, once built, handed back. */
struct at_table_build {
	struct at_table_build *next;
	char path[128];              /* where the builder opens the object */
	uint8_t key[AT_UNWIND_BUILD_ID_MAX];
	uint8_t key_len;
	struct at_unwind_table *table; /* the result; NULL when it could not be built */
	const char *why;             /* then why (a static string) */
	int gone;                    /* then also: the path could not be opened any more (its
				      * process has ended): another process's path may do */
	int cached;                  /* the table was read from the on-disk cache */
	int stored;                  /* the table was built and written to the cache */
	const char *cache_why;       /* a cache file refused (then built again), or why a built
				      * table was not stored: a static string, NULL for neither */
	uint64_t ns;                 /* the time the read or the build took */
};

struct at_table_cache;

#define AT_TABLE_BUILDER_MAX_THREADS 16

struct at_table_builder;

/* The default number of threads: the CPUs online, 1 to AT_TABLE_BUILDER_MAX_THREADS. */
unsigned at_table_builder_default_threads(void);
/* Starts the builder's threads (threads 0: the default), with the cache (NULL: none), which
 * the builder then owns and closes after its last thread ends. The builder, or NULL with errno
 * (the cache closed). */
struct at_table_builder *at_table_builder_start(struct at_table_cache *cache, unsigned threads);
/* The descriptor that is readable while built tables wait to be taken. */
int at_table_builder_fd(const struct at_table_builder *b);
/* Asks for the table of the object at path with that key. 0, or -1 with errno (ENOMEM). */
int at_table_builder_request(struct at_table_builder *b, const char *path,
			     const uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t key_len);
/* The builds done since the last call, oldest first (NULL: none); the caller owns the list
 * and each table in it. */
struct at_table_build *at_table_builder_take(struct at_table_builder *b);
/* Builds asked for and not taken back yet. */
unsigned at_table_builder_waiting(const struct at_table_builder *b);
/* Stops the builder: builds not started are dropped, one in progress is abandoned (the thread
 * frees it and ends without touching anything else). Returns at once. b is no longer the
 * caller's. */
void at_table_builder_stop(struct at_table_builder *b);
/* Frees a list at_table_builder_take returned, tables included. */
void at_table_builds_free(struct at_table_build *list);

#endif
