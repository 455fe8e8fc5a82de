/* table_cache.h: unwind tables kept on disk by build-id, shared across runs of the daemon
 * (doc/DESIGN.md, decision 14, "The tables on disk").
 *
 * A folder the daemon's user owns (root's: default AT_TABLE_CACHE_DIR), refused when another
 * user owns it or group or others may write it, holds one file per object, named by its
 * build-id in hex: a header (magic, format version, the machine, the page shift, the key, the
 * counts, the segments, the build's statistics, a checksum) and the table's rules, pages and
 * entries as struct at_unwind_table holds them. A file is written under a temporary name
 * (mode 0600) and renamed into place, so that a reader, or another daemon writing the same key
 * at once, sees a whole file or none. A file is opened without following links and without
 * blocking, and read only when it is a regular file of the folder's owner, not writable by
 * group or others, of a size a table can have; its header and every count and index are
 * checked against its arrays, so that a table read from the cache could never send the BPF
 * walk out of its own arrays. A file that fails any check is removed and the table built
 * again. Objects without a build-id (keyed by device and inode) are not cached.
 *
 * Reading a table marks its file used (its modification time); storing one removes the least
 * recently used files until the folder holds at most the limit's bytes. Every function may be
 * called from any thread at once: each works through the folder's descriptor alone. */
#ifndef ALLOCTAP_TABLE_CACHE_H
#define ALLOCTAP_TABLE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind_table.h"

#define AT_TABLE_CACHE_DIR "/var/cache/alloctap/unwind"
#define AT_TABLE_CACHE_LIMIT (512ull << 20)      /* bytes of files, by default */
#define AT_TABLE_CACHE_MAX_FILE (256ull << 20)   /* the largest file read */
#define AT_TABLE_CACHE_HEADER 208u               /* bytes before the rules */

struct at_table_cache;

/* Opens the folder dir, creating it (mode 0700) and its missing parent (0755) if needed, with
 * limit bytes of files at most. The cache, or NULL with errno and *why: EPERM when the folder
 * is not safe to use (another user's, writable by group or others, not a folder, a link). The
 * caller frees it with at_table_cache_close. */
struct at_table_cache *at_table_cache_open(const char *dir, uint64_t limit, const char **why);
void at_table_cache_close(struct at_table_cache *c);

/* Reads the table of the object with that key into t (freed with at_unwind_table_free).
 * 1: read; 0: no file (or a key without build-id, key_len 0); -1: a file was there but is
 * refused (*why says why) and removed. */
int at_table_cache_load(struct at_table_cache *c, const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
			uint8_t key_len, struct at_unwind_table *t, const char **why);
/* Writes t under its build-id, then removes the least recently used files beyond the limit.
 * 0, or -1 with *why (a table without build-id, or larger than the limit, is not written). */
int at_table_cache_store(struct at_table_cache *c, const struct at_unwind_table *t,
			 const char **why);
/* Removes the least recently used files (and temporary files of writers that died) until
 * the folder holds at most limit bytes. The files removed. */
unsigned at_table_cache_trim(struct at_table_cache *c, uint64_t limit);

/* The file's bytes for t: a malloc'd buffer of *len bytes, the caller's; NULL (ENOMEM). */
uint8_t *at_table_cache_encode(const struct at_unwind_table *t, size_t *len);
/* Checks a file's bytes and reads the table of the object with that key out of them into t
 * (freed with at_unwind_table_free). 0, or -1 with *why (t then holds nothing). */
int at_table_cache_decode(const uint8_t *buf, size_t len, const uint8_t key[AT_UNWIND_BUILD_ID_MAX],
			  uint8_t key_len, struct at_unwind_table *t, const char **why);
/* The file name of a build-id: its bytes in hex, then ".unw". 0, or -1 (key_len 0 or too
 * long). */
int at_table_cache_name(const uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t key_len, char *name,
			size_t size);

#endif
