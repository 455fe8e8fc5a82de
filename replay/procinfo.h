/* procinfo.h: what /proc says about the replayer itself, read without allocating
 * (read(2) into stack buffers through lib/linereader.h, never stdio). */
#ifndef ALLOCTAP_REPLAY_PROCINFO_H
#define ALLOCTAP_REPLAY_PROCINFO_H

#include <stddef.h>
#include <stdint.h>

/* The "Rss:" figure of /proc/self/smaps_rollup in bytes, or -1 if unreadable. */
int64_t rp_proc_rss(void);
/* The "VmHWM:" figure (peak RSS) of /proc/self/status in bytes, or -1 if unreadable. */
int64_t rp_proc_peak_rss(void);
/* The path of the mapped file that holds address addr, from /proc/self/maps, copied into
 * path (cap bytes, NUL-terminated). Returns 0, or -1 if no file mapping holds it or its path
 * does not fit cap bytes. */
int rp_proc_mapping_path(const void *addr, char *path, size_t cap);

#endif
