/* atz.h: the compressed binary trace format (".atz"), writer and reader.
 *
 * A file is one lz4 frame (`lz4 -t` validates it, `lz4 -d` unwraps it), or several back to
 * back, which the reader reads as one trace (doc/FORMAT.md 2.1). A frame's content is a
 * versioned stream of records: a header, then events coded against per-thread predictors
 * (recent sizes, recent releases, recent allocations; in 2.2 the thread's live blocks and the
 * size classes of the blocks it released), each with its time and stack id (2.x),
 * thread switches, lost-event counts and length-prefixed table records (processes, stacks,
 * mappings). doc/FORMAT.md is the byte-level specification.
 *
 * Both sides keep their memory in mmapped regions (lz4's contexts included), so a replayer
 * that reads a trace leaves the allocator under test untouched. */
#ifndef ALLOCTAP_ATZ_H
#define ALLOCTAP_ATZ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "event.h"
#include "stack.h"

/* The version writers write by default (2.0: event times, stacks, mappings). Readers read
 * 1.0, 1.1, 2.0, 2.1 (RSS records), 2.2 (events coded against live tables) and 2.3 (END
 * records: a thread's state is released when it ends). */
#define AT_ATZ_VERSION_MAJOR 2
#define AT_ATZ_VERSION_MINOR 0
/* The newest 2.x (at_atz_options.minor = 3): 2.1 adds RSS records, 2.2 codes a free by the
 * block's place among its thread's live blocks and an allocation's address by the size class
 * of the blocks released last (doc/FORMAT.md 6.5), in about two thirds of 2.1's bytes; 2.3
 * says when a thread ended (END records, doc/FORMAT.md 5.9), so that both sides release its
 * state and their memory follows the threads alive. */
#define AT_ATZ_V2_MINOR 3
/* 2.4: the header extension holds the trace's filter (doc/FORMAT.md 3.1): a trace that holds
 * only the allocations of at least min_size bytes, or a sample of them, 1 in sample_bytes
 * bytes on average, and their releases. A writer given a filter writes 2.4 (from 2.3's
 * records); without one, the minor it is asked for. */
#define AT_ATZ_FILTER_MINOR 4
/* 2.5: stacks may hold Python frames (kind 1, lib/frames.h), named by NAMES records
 * (doc/FORMAT.md 5.6, 5.10); everything else is 2.4's (the header extension holds the filter of
 * a filtered trace, empty otherwise). alloctapd writes it with --stacks; a filtered trace asked
 * for a minor below it is written as 2.4. */
#define AT_ATZ_PYTHON_MINOR 5
/* 2.6: a frame may say that it goes on from the frame before it (AT_ATZ_FLAG_STACKS_GO_ON): the
 * stacks defined there stay defined and its ids continue theirs (doc/FORMAT.md 2.1), so that
 * frames encoded on several threads share the trace's stacks. Everything else is 2.5's. A
 * writer given the flag writes 2.6 (at_atz_options.stacks_before). */
#define AT_ATZ_GO_ON_MINOR 6
/* The newest 1.x a writer can still be asked for (at_atz_options.major = 1). */
#define AT_ATZ_V1_MINOR 1

/* The first four bytes of every lz4 frame, hence of every .atz file: 04 22 4D 18. */
#define AT_ATZ_LZ4_MAGIC 0x184D2204u

/* Header flags. */
#define AT_ATZ_FLAG_MUNGED 1u /* pointers are munged slot numbers, not addresses */
#define AT_ATZ_FLAG_NO_TIMES  2u /* 2.x: events carry no time (every time_ns is 0): for traces
				  * made from text or 1.x, which have none */
#define AT_ATZ_FLAG_NO_STACKS 4u /* 2.x: events carry no stack id (every stack is 0) */
#define AT_ATZ_FLAG_STACKS_GO_ON 8u /* 2.6: the stacks of the frames before stay defined */

#define AT_ATZ_HOST_MAX 255   /* bytes of the recording host's name */
#define AT_ATZ_NAME_MAX 4096  /* bytes of a process name or object path */
#define AT_ATZ_ARGS_MAX 32768 /* bytes of a command line in a process change record */

/* Process change records (format 1.1, doc/FORMAT.md 5.3): a traced process starts, executes
 * a new image, or ends. */
enum at_atz_process_change {
	AT_ATZ_PROCESS_START = 1, /* created during the trace, or found running (flag BEFORE) */
	AT_ATZ_PROCESS_EXEC = 2,  /* runs a new executable from now on */
	AT_ATZ_PROCESS_EXIT = 3,  /* has ended (every thread) */
};

/* Flags of a process change record. */
#define AT_ATZ_PROCESS_BEFORE   1u /* START: it ran before the trace; the time is its own start */
#define AT_ATZ_PROCESS_LATE     2u /* followed late: calls it made before this record are missing */
#define AT_ATZ_PROCESS_ARGS_CUT 4u /* the command line was longer than AT_ATZ_ARGS_MAX bytes */

/* One process change. Strings are counted, not NUL-terminated (a reader points into its
 * buffer): args holds the arguments each followed by a NUL, as /proc/PID/cmdline. */
struct at_atz_process {
	unsigned change;  /* enum at_atz_process_change */
	unsigned flags;   /* AT_ATZ_PROCESS_* */
	uint32_t pid;
	uint32_t parent;  /* 0 when unknown */
	uint64_t time_ns; /* nanoseconds since the Unix epoch */
	uint64_t status;  /* EXIT: the wait status as waitpid(2) gives it; else 0 */
	const char *exe;  /* START and EXEC: the executable's path */
	size_t exe_len;
	const char *args;
	size_t args_len;
};

/* An RSS record (2.1): the resident set of a process at a time. */
struct at_rss {
	uint32_t pid;
	uint64_t time_ns; /* the events' clock (CLOCK_MONOTONIC) */
	uint64_t bytes;   /* resident bytes: /proc/PID/statm's resident pages times the page size */
};

/* The stream header. */
struct at_atz_header {
	unsigned major, minor;
	unsigned flags;                 /* AT_ATZ_FLAG_* */
	uint64_t start_ns;              /* recording start, ns since the Unix epoch; 0 unknown */
	char host[AT_ATZ_HOST_MAX + 1]; /* NUL-terminated */
	uint64_t min_size;              /* 2.4: only allocations of at least this many bytes
					 * (and their blocks' releases) are recorded; 0: all */
	uint64_t sample_bytes;          /* 2.4: a sample of the allocations (of those of
					 * min_size or more), one per this many bytes on average
					 * (a Poisson process over bytes); 0: not sampled */
};

/* Whether header h says the trace holds a part of the calls only (min_size or a sample). */
static inline int at_atz_filtered(const struct at_atz_header *h)
{
	return h->min_size != 0 || h->sample_bytes != 0;
}

/* What the trace holds under header h's filter, into buf (n bytes, NUL-terminated, cut to
 * fit): "only the allocations of at least M bytes (alloctapd --min-size)", "a sample of the
 * allocations, one per N bytes on average (alloctapd --sample-bytes)", or both together; ""
 * for a trace of every call. Returns buf. */
const char *at_atz_filter_text(const struct at_atz_header *h, char *buf, size_t n);

/* Writer options; all-zero is a valid default set. */
struct at_atz_options {
	unsigned flags;       /* AT_ATZ_FLAG_* */
	const char *host;     /* NULL: this machine's node name */
	uint64_t start_ns;    /* 0: now (CLOCK_REALTIME) */
	int level;            /* lz4 level: <= 0 fast (default), >= 3 LZ4HC (smaller, slower) */
	unsigned major;       /* 0: AT_ATZ_VERSION_MAJOR (2); 1: a 1.x trace without times,
			       * stacks or mappings, which 1.x readers read */
	unsigned minor;       /* 1.x: 0 writes 1.0, 1 writes 1.1 (needed for process change
			       * records). 2.x holds all 1.1 holds: 0 writes 2.0, 1 writes 2.1
			       * (needed for RSS records), 2 writes 2.2 (2.1's records, its events
			       * smaller; the writer's memory grows with the live blocks, at most
			       * 65,536 per thread, up to about 130 bytes each: doc/DESIGN.md 6),
			       * 3 writes 2.3 (2.2 with END records: the states of threads that
			       * ended are released; see at_atz_end_thread), 5 writes 2.5 (2.3's
			       * records and 2.4's header, with Python frames and their NAMES) */
	int test_kinds;       /* 1: frames of kinds no version defines yet (lib/frames.h's
			       * AT_FRAME_TEST) are written too: for the tests alone */
	uint64_t min_size;    /* the trace's filter, written into the header (struct
			       * at_atz_header); either nonzero needs 2.3 or later (major 2, minor
			       * 3 or 5) and writes at least 2.4 (AT_ATZ_FILTER_MINOR) */
	uint64_t sample_bytes;
	uint32_t stacks_before; /* with AT_ATZ_FLAG_STACKS_GO_ON in flags (which needs major 2,
				 * minor 5, and stacks: no NO_STACKS): the stacks the frames
				 * before this one defined, whose ids the next stack continues;
				 * the writer writes 2.6. 0 without the flag */
	int end_apart;        /* 1: the frame has no content checksum, so that its end (the 4-byte
			       * end mark) may be written by another than its writer
			       * (at_atz_writer_ended_apart) */
};

/* Counters of a writer or reader. */
struct at_atz_stats {
	uint64_t events;        /* events appended / decoded */
	uint64_t events_written; /* writer: events whose lz4 block reached the file */
	uint64_t lost;          /* sum of the lost-event records */
	uint64_t content_bytes; /* uncompressed stream bytes */
	uint64_t file_bytes;    /* lz4 frame bytes written / consumed */
	uint64_t threads;       /* thread table entries (over every frame read) */
	uint64_t ended;         /* threads whose state an END record released (2.3) */
	uint64_t processes;     /* process change records appended / decoded */
	uint64_t stacks;        /* stack records appended / decoded (over every frame read) */
	uint64_t mappings;      /* mapping records appended / decoded */
	uint64_t rss;           /* RSS records appended / decoded */
	uint64_t names;         /* NAMES records appended / decoded */
};

/* ---- writer ---------------------------------------------------------------------------- */

/* The writer goes through a buffered output (lib/output.h), which keeps the first error of a
 * write, of lz4 or of memory: every later call then fails with that errno. Each lz4 block is
 * written out whole, in one write(). Programs write traces through lib/sink.h. */

struct at_atz_writer;
struct at_output;

/* Starts a trace on out (not closed by the writer): writes the frame and stream headers at
 * once. Returns NULL with errno set (EINVAL for a version this writer cannot write, ENOMEM,
 * or the output's error). */
struct at_atz_writer *at_atz_writer_open(struct at_output *out, const struct at_atz_options *opt);
/* Ends the frame w writes, if not ended yet: its last block and its end mark go out. Nothing
 * may be appended then until at_atz_writer_next_frame. 0, or -1 with the output's errno. */
int at_atz_writer_end_frame(struct at_atz_writer *w);
/* Ends the frame w writes (if not ended yet) and begins another on the same output by opt, as
 * at_atz_writer_open would, every thread's state released (their memory kept for the new
 * frame): the way to write a trace in frames (doc/FORMAT.md 2.1) without a writer made and
 * freed for each. The counters go on. 0, or -1 with errno (EINVAL for options no writer can
 * write, the frame going on unharmed; or the output's error). */
int at_atz_writer_next_frame(struct at_atz_writer *w, const struct at_atz_options *opt);
/* The frame w writes (begun with end_apart, everything appended flushed) was ended by another:
 * its end mark written where it goes. w ends it without writing anything more; the next frame
 * begins with at_atz_writer_next_frame. 0, or -1 with errno. */
int at_atz_writer_ended_apart(struct at_atz_writer *w);
/* Appends one event. Every field is kept, whatever its value (a 1.x trace drops time_ns and
 * stack); ev->func must be below AT_FUNC_COUNT, ev->has_result 0 or 1, and in 2.x ev->stack 0
 * or the id of a stack already appended, time_ns 0 under AT_ATZ_FLAG_NO_TIMES and stack 0
 * under AT_ATZ_FLAG_NO_STACKS (else EINVAL, the output unharmed). Returns 0, or -1
 * with errno (EINVAL, or the output's error). */
int at_atz_append(struct at_atz_writer *w, const struct at_event *ev);
/* Records that n events were lost at this point of the stream (nothing for n == 0). 0 or -1. */
int at_atz_append_lost(struct at_atz_writer *w, uint64_t n);
/* Says that thread (pid, tid) ended (2.3): an END record, and the writer releases the
 * thread's state (its live blocks, freed later by another thread, are then coded by address).
 * Events of (pid, tid) after it start a new thread table entry. Nothing for a thread the writer
 * holds no state of, or a trace of another version. 0, or -1 with the output's errno. */
int at_atz_end_thread(struct at_atz_writer *w, uint32_t pid, uint32_t tid);
/* Says that every thread of process pid ended (2.3), as at_atz_end_thread for each. A process
 * change record EXIT does it too (at_atz_append_process_change). 0 or -1. */
int at_atz_end_process(struct at_atz_writer *w, uint32_t pid);
/* Appends a process table entry (pid and its command name, at most AT_ATZ_NAME_MAX bytes). */
int at_atz_append_process(struct at_atz_writer *w, uint32_t pid, const char *name);
/* Appends a mapped-object table entry: [start, end) of pid maps path at file offset. */
int at_atz_append_object(struct at_atz_writer *w, uint32_t pid, uint64_t start, uint64_t end,
			 uint64_t offset, const char *path);
/* Appends a process change record (a trace opened with minor >= 1). An executable longer than
 * AT_ATZ_NAME_MAX or a command line longer than AT_ATZ_ARGS_MAX is cut (the command line with
 * the ARGS_CUT flag). In 2.3, EXIT also ends every thread of the process (at_atz_end_process). 0 or -1 with errno (EINVAL for a change code outside the enum or a 1.0
 * trace, the output unharmed). */
int at_atz_append_process_change(struct at_atz_writer *w, const struct at_atz_process *p);
/* Appends a stack record (2.x only). s->id must be the next id (1 for the first stack of the
 * trace, then one more each time), s->count 1..AT_STACK_MAX_FRAMES; with AT_STACK_KINDS in
 * s->flags the frames' kinds are written too, and must all be kinds the trace's version
 * defines (lib/frames.h: AT_FRAME_NATIVE alone, but with at_atz_options.test_kinds). 0, or -1
 * with errno (EINVAL for a 1.x trace or a stack breaking those rules, the output unharmed). */
int at_atz_append_stack(struct at_atz_writer *w, const struct at_stack *s);
/* Appends a NAMES record (2.x only, doc/FORMAT.md 5.10): the name of n->pid's frames of kind
 * n->kind and value n->value, to be written before the first stack that needs it. n->kind must
 * be named by NAMES records and defined by the trace's version (none is but with
 * at_atz_options.test_kinds); the function and the file are cut to AT_ATZ_NAME_MAX bytes. 0, or
 * -1 with errno (EINVAL for a 1.x trace or such a kind, the output unharmed). */
int at_atz_append_names(struct at_atz_writer *w, const struct at_frame_name *n);
/* Appends a mapping record (2.x only): [start, end) of pid maps path (at most AT_ATZ_NAME_MAX
 * bytes are kept) from file offset, build_id_len <= AT_BUILD_ID_MAX. 0, or -1 with errno
 * (EINVAL for a 1.x trace or start > end or a build-id too long). */
int at_atz_append_mapping(struct at_atz_writer *w, const struct at_mapping *m);
/* Appends an RSS record (a 2.1 trace: major 2, minor 1). 0, or -1 with errno (EINVAL for
 * another version, the output unharmed). */
int at_atz_append_rss(struct at_atz_writer *w, const struct at_rss *m);
/* Ends the current lz4 block and writes it out, so everything appended so far survives a
 * crash of the writer. Cheap when little was appended. 0, or -1 with errno. */
int at_atz_flush(struct at_atz_writer *w);
/* Flushes, ends the frame (end mark and content checksum) and frees w (always, even on
 * error). The output stays open. 0, or -1 with the output's error in errno. */
int at_atz_writer_close(struct at_atz_writer *w);
void at_atz_writer_stats(const struct at_atz_writer *w, struct at_atz_stats *st);

/* ---- reader ---------------------------------------------------------------------------- */

/* Why a reader stopped. */
enum at_atz_status {
	AT_ATZ_OK = 0,
	AT_ATZ_ERR_IO,        /* read() failed */
	AT_ATZ_ERR_NOT_ATZ,   /* not an lz4 frame, or its content is not an atz stream */
	AT_ATZ_ERR_VERSION,   /* a major version this reader does not know */
	AT_ATZ_ERR_TRUNCATED, /* the input ends inside the frame */
	AT_ATZ_ERR_CORRUPT,   /* a block fails its checksum or holds an impossible record */
	AT_ATZ_ERR_NOMEM,
};

struct at_atz_reader;

/* Reads the lz4 frame header and the stream header from fd (not closed by the reader); name
 * (kept, not copied) names the input in messages.
 * The first preload_len bytes of the input were already read by a format sniffer and are
 * fed first. Returns NULL only when out of memory; otherwise check at_atz_reader_status(). */
struct at_atz_reader *at_atz_reader_open(int fd, const char *name, const void *preload,
					 size_t preload_len);
/* Following a trace still being written: wait(arg, fd) is called whenever no input is there
 * yet inside a frame (a regular file at its current end, a pipe or terminal with nothing to
 * read); it waits as it sees fit (poll fd with a timeout, a short sleep) and returns 0 to read
 * again, or nonzero to stop: the input then ends there, as a trace cut short does
 * (AT_ATZ_ERR_TRUNCATED past the header). The frame's end mark ends the trace as always: a
 * regular file ends there, a pipe when its writer closes it. */
typedef int (*at_atz_wait_fn)(void *arg, int fd);
/* at_atz_reader_open, following the input through wait (not NULL) from its first byte. */
struct at_atz_reader *at_atz_reader_open_follow(int fd, const char *name, const void *preload,
						size_t preload_len, at_atz_wait_fn wait,
						void *arg);
/* One read of at most n bytes of fd, as a following reader does: when none is there yet,
 * wait(arg, fd) is called until some comes or it returns nonzero. The bytes read (> 0), 0 at
 * the end (a pipe's writer gone) or when wait stopped, -1 with errno on a read error. */
ssize_t at_atz_follow_read(int fd, void *buf, size_t n, at_atz_wait_fn wait, void *arg);
/* Next event: 1 (ev filled), 0 at the clean end of the trace, -1 on an error (then every
 * later call returns -1; see at_atz_reader_status/message). Lost-event and table records are
 * consumed on the way: see at_atz_lost_before and the stats. A frame that follows the one that
 * ended continues the trace (its own stream header, fresh predictor state). */
int at_atz_next(struct at_atz_reader *r, struct at_event *ev);
/* Process change records met from now on are passed to fn (NULL: none), with pointers into
 * the reader's buffer that are valid during the call. Changes this version does not know are
 * skipped. */
typedef void (*at_atz_process_fn)(void *arg, const struct at_atz_process *p);
void at_atz_reader_on_process(struct at_atz_reader *r, at_atz_process_fn fn, void *arg);
/* Stack and mapping records (2.x) met from now on are passed to fn (NULL: none), in stream
 * order, before the event that follows them; the pointer is valid during the call (a mapping's
 * path is NUL-terminated). */
typedef void (*at_atz_stack_fn)(void *arg, const struct at_stack *s);
typedef void (*at_atz_mapping_fn)(void *arg, const struct at_mapping *m);
void at_atz_reader_on_stack(struct at_atz_reader *r, at_atz_stack_fn fn, void *arg);
void at_atz_reader_on_mapping(struct at_atz_reader *r, at_atz_mapping_fn fn, void *arg);
/* Frames of kinds no version defines yet (lib/frames.h's AT_FRAME_TEST) are taken from now
 * on, in every frame of the trace: for the tests alone. */
void at_atz_reader_test_kinds(struct at_atz_reader *r);
/* NAMES records (doc/FORMAT.md 5.10) likewise; function and file are NUL-terminated. */
typedef void (*at_atz_names_fn)(void *arg, const struct at_frame_name *n);
void at_atz_reader_on_names(struct at_atz_reader *r, at_atz_names_fn fn, void *arg);
/* RSS records (2.1) likewise. */
typedef void (*at_atz_rss_fn)(void *arg, const struct at_rss *m);
void at_atz_reader_on_rss(struct at_atz_reader *r, at_atz_rss_fn fn, void *arg);
/* Events recorded as lost immediately before the event at_atz_next just returned. */
uint64_t at_atz_lost_before(const struct at_atz_reader *r);
/* The stream header (the first frame's), or NULL if it could not be read. */
const struct at_atz_header *at_atz_reader_header(const struct at_atz_reader *r);
enum at_atz_status at_atz_reader_status(const struct at_atz_reader *r);
/* A one-line description of the error ("NAME: truncated after N events: ..."), or NULL. */
const char *at_atz_reader_message(const struct at_atz_reader *r);
void at_atz_reader_stats(const struct at_atz_reader *r, struct at_atz_stats *st);
void at_atz_reader_close(struct at_atz_reader *r);

#endif
