/* prim.h: the operating-system primitives every alloctap program uses, written once.
 *
 * A monotonic clock, anonymous memory mappings (never malloc: a replay runs with the allocator
 * under test loaded, and the other programs keep their big tables off the heap), read and
 * write loops that finish what a signal or a short count interrupted, and the one way to open
 * a file that is read as data (an ELF object, a /proc file): never blocking, never anything
 * but a regular file. */
#ifndef ALLOCTAP_PRIM_H
#define ALLOCTAP_PRIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- clock ---------------------------------------------------------------------------- */

/* Nanoseconds of CLOCK_MONOTONIC: for measuring intervals, never for dates. */
uint64_t at_now_ns(void);

static inline uint64_t at_now_ms(void)
{
	return at_now_ns() / 1000000u;
}

static inline double at_now_seconds(void)
{
	return (double)at_now_ns() * 1e-9;
}

/* ---- heap arrays ---------------------------------------------------------------------- */

/* Makes room for one more element of size bytes in the heap array *v, n of whose *cap elements
 * are used: *v is realloc'ed to twice its capacity (64 the first time) when it is full. 0, or
 * -1 (out of memory: *v and *cap unchanged). Not for a replay's own arrays, which stay off the
 * heap (below). */
int at_grow(void **v, size_t *cap, size_t n, size_t size);

/* ---- anonymous memory ----------------------------------------------------------------- */

/* Flags of at_map(). */
enum {
	/* Fault every page in now, writable: one system call instead of a page fault per first
	 * touch (several microseconds each in a virtual machine). */
	AT_MAP_POPULATE = 1u << 0,
	/* Align to AT_HUGE_PAGE and ask for transparent huge pages (a hint the kernel may
	 * refuse): random accesses into a large table then miss the TLB less. */
	AT_MAP_HUGE = 1u << 1,
	/* Reserve no swap space: only the pages touched count, so a large mapping of which
	 * little is used costs little. */
	AT_MAP_NORESERVE = 1u << 2,
};

#define AT_HUGE_PAGE ((size_t)2 << 20)

/* A private anonymous read-write mapping of bytes, zero-filled. Returns NULL with errno on
 * failure. With AT_MAP_HUGE, a bytes that is a multiple of AT_HUGE_PAGE maps whole huge
 * pages. The mapping is exactly bytes long: at_unmap(p, bytes) releases it. */
void *at_map(size_t bytes, unsigned flags);

/* A read-only shared view of bytes of the file or BPF map fd from offset (a multiple of the
 * page size): what another writer puts there shows. Returns NULL with errno on failure;
 * at_unmap(p, bytes) releases it. */
void *at_map_readonly(int fd, size_t bytes, off_t offset);

/* Releases a mapping of at_map() or at_map_readonly(); NULL is ignored. */
void at_unmap(void *p, size_t bytes);

/* Resizes a mapping of at_map(), moving it if needed; new pages are zero. Returns the new
 * address, or NULL with errno (the old mapping is then untouched). */
void *at_remap(void *p, size_t old_bytes, size_t new_bytes);

/* Faults the pages of [p, p + bytes) in, writable, with MADV_POPULATE_WRITE. Returns 0, or -1
 * where the kernel (before 5.14) or the headers lack it: the pages then fault in as touched,
 * so callers may ignore the result. */
int at_populate(void *p, size_t bytes);

/* ---- read and write loops ------------------------------------------------------------- */

/* One read(2) of at most n bytes, retried after EINTR: the count (0 at the end of the input),
 * or -1 with errno. */
ssize_t at_read_some(int fd, void *p, size_t n);

/* Reads until n bytes have come or the input ends, retrying after EINTR and short reads.
 * Returns the count (below n only at the end of the input), or -1 with errno. */
ssize_t at_read_all(int fd, void *p, size_t n);

/* Writes n bytes, retrying after EINTR and short writes. Returns the count written: n, or
 * fewer after an error, with errno set. */
size_t at_write_all(int fd, const void *p, size_t n);

/* ---- opening files to read ------------------------------------------------------------ */

/* Opens path read-only as a regular file: anything else (a FIFO, a device, a socket, a
 * directory; a symbolic link when flags has O_NOFOLLOW, the rule where the path is the
 * program's own choice) is refused before it is opened, so nothing ever blocks and no device
 * sees an open. The fd is O_CLOEXEC and O_NONBLOCK (which changes nothing on a regular file).
 * Returns the fd, or -1 with errno set (EISDIR for a directory, EINVAL for another kind) and
 * *why a reason to print after the path: "a FIFO, not a regular file", "a symbolic link, not
 * followed", or strerror(errno). */
int at_open_regular(const char *path, int flags, const char **why);

#endif
