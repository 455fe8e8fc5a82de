/* sink.h: where events go: logalloc text lines (raw or munged) or an .atz trace.
 *
 * Every program that writes events writes them through one sink. The sink owns the output file
 * (lib/output.h) and its one error: the first errno of a failed write (or of the binary
 * encoder) is kept in the sink and every later write is dropped, so callers check once, when
 * they flush or close (0 or -1), and report at_sink_name() and at_sink_error().
 *
 * Text goes out in whole lines: no write() ends inside a line, so a log cut short by a crash
 * ends with a whole line, and when a write stops inside a line (a full disk) the line's start
 * is taken back off a regular file (lib/output.h). A binary trace goes out one lz4 block per write(), and
 * a flush ends the current block. Two counters tell what happened: events accepted, and events
 * whose bytes all reached the file (doc/LOGALLOC.md describes the text formats, doc/FORMAT.md
 * the binary one).
 *
 * Records other than events (lost-event counts, process and object tables) exist only in the
 * binary format; a text sink counts them and writes nothing. */
#ifndef ALLOCTAP_SINK_H
#define ALLOCTAP_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "atz.h"
#include "event.h"
#include "formats.h"
#include "output.h"

/* The written formats, by lib/formats.h's list. */
enum at_sink_format {
	AT_SINK_TEXT = AT_FORMAT_TEXT,  /* one logalloc line per event */
	AT_SINK_ATZ = AT_FORMAT_BINARY, /* an .atz trace: one lz4 frame */
};

/* How at_sink_open opens a path (lib/output.h says what each rule does): one of the first
 * two, plus AT_SINK_GUARDED for a program that writes as root among other users' files. */
enum at_sink_mode {
	AT_SINK_TRUNCATE = 0,
	AT_SINK_APPEND = 1,
	AT_SINK_GUARDED = 2,
};

struct at_sink_options {
	enum at_sink_format format;
	int munged;                /* pointers are slot numbers: munged lines, the munged flag */
	struct at_atz_options atz; /* binary: host, start time, lz4 level (flags: from munged) */
};

/* Records besides events: a text sink writes none of them (and counts none as events); a
 * binary sink of 1.x writes no stack, mapping or RSS record (the format has none). A new kind is a
 * new enum value, a member of the union, and a case in sink.c's atz_put_record. */
enum at_sink_record_kind {
	AT_SINK_LOST = 0, /* events lost at this point of the stream */
	AT_SINK_PROCESS,  /* a process and its command name */
	AT_SINK_OBJECT,   /* an object mapped by a process */
	AT_SINK_PROCESS_CHANGE, /* a process starts, executes a new image or ends */
	AT_SINK_STACK,    /* a call stack, before the first event that refers to it (2.x) */
	AT_SINK_MAPPING,  /* an executable mapping of a process, for symbolizing stacks (2.x) */
	AT_SINK_RSS,      /* the resident set of a process at a time (2.x) */
	AT_SINK_THREAD_END, /* a thread ended: its state is released (2.3 END; text: nothing) */
	AT_SINK_NAMES,    /* the name of frames of a kind named by names (2.x NAMES) */
};

struct at_sink_record {
	enum at_sink_record_kind kind;
	union {
		struct {
			uint64_t events;
		} lost;
		struct {
			uint32_t pid;
			const char *name;
		} process;
		struct {
			uint32_t pid;
			uint64_t start, end, offset; /* [start, end) maps path at file offset */
			const char *path;
		} object;
		struct at_atz_process change; /* strings copied before at_sink_put_record returns */
		const struct at_stack *stack;     /* copied before at_sink_put_record returns */
		const struct at_mapping *mapping; /* likewise, its path included */
		const struct at_frame_name *names; /* likewise, its strings included */
		struct at_rss rss;
		struct {
			uint32_t pid, tid;
		} thread;
	};
};

struct at_sink_stats {
	uint64_t accepted;      /* events handed to at_sink_put */
	uint64_t written;       /* events whose bytes all reached the file */
	uint64_t lost;          /* events recorded as lost (AT_SINK_LOST records) */
	uint64_t bytes;         /* bytes that reached the file */
	uint64_t content_bytes; /* bytes before compression (text: the lines), flushed or not */
};

struct at_sink;

/* What one format does with the sink's events, records, flushes, end and counters: a table
 * of functions per format (text and binary in sink.c; a new format's in its writer's file),
 * chosen by sink.c's table indexed by lib/formats.h's format when the format starts. */
struct at_sink_ops {
	/* Begins the trace on the sink's output, with its options; 0, or -1 with errno. */
	int (*start)(struct at_sink *s);
	/* Writes one event of a started sink without error; 0, or -1 with errno. */
	int (*put)(struct at_sink *s, const struct at_event *ev);
	/* Writes a record the trace's version holds; 0, or -1 with errno. */
	int (*put_record)(struct at_sink *s, const struct at_sink_record *r);
	/* Writes out what is buffered; 0, or -1 with errno. */
	int (*flush)(struct at_sink *s);
	/* Ends the trace and adds its counters to the sink's; the sink is text afterwards. */
	void (*end)(struct at_sink *s);
	/* Adds what the format counts and the sink does not yet to st. */
	void (*stats)(const struct at_sink *s, struct at_sink_stats *st);
};

struct at_sink {
	struct at_output out;       /* the file, its name and the first error */
	struct at_sink_options opt;
	const struct at_sink_ops *ops; /* the format's: binary from a start that opened the writer
					* to the trace's end, text otherwise (NULL: text) */
	struct at_atz_writer *atz;  /* binary, once started */
	void *state;                /* a writer's own, for a format other than text and binary */
	int started;
	unsigned mode;              /* enum at_sink_mode bits of the open, for a reopen */
	const char *open_why;       /* why the last open or reopen failed */
	uint64_t refused;           /* of those, refused by the format (its writer's count) */
	uint64_t written;           /* text; binary: of the traces already closed */
	uint64_t buffered;          /* text: events whose lines wait in out's buffer */
	uint64_t lost;
	uint64_t bytes;             /* of the files already closed */
	uint64_t content_bytes;     /* text; binary: of the traces already closed */
	/* The caller's, on a cache line of their own: with a writing thread, the fields above are
	 * the writer's, and a line both threads wrote at every event would pass between their
	 * cores at every event. */
	_Alignas(64) uint64_t accepted; /* events put (the caller's count) */
	uint32_t stacks_put;           /* the id of the last stack record put into the trace */
	struct at_sink_thread *thread; /* the writing thread (at_sink_thread_start); NULL: none */
};

struct at_sink_thread;

/* From now on (after at_sink_start), events and records are written by a thread of the sink's
 * own (which blocks every signal: they stay the caller's), or with encoders of 2 or more by
 * that many threads (4 at most), each encoding a run of events (1 / (2 x encoders) of the
 * queue at most) into an lz4 frame (the frames go out in order; a binary trace of 2.x with
 * stacks of 2.5 or without stacks, else one thread). A run goes on in the frame of the run
 * before it while one encoder keeps up; with AT_SINK_FRAME_EACH_RUN in encoders every run is a
 * frame of its own, whatever the encoders' speed (bytes that a test can compare):
 * at_sink_put queues them (2^log2 at most; a full queue waits for room) and returns 0 (an
 * event the format refuses is then only taken off the accepted count); at_sink_put_record and
 * at_sink_lost queue a copy of the record in its place among the events and return 0 (a
 * record refused, or a failed write, is the sink's error, said at close); every other function
 * first waits until the thread has written everything queued. at_sink_close ends the thread.
 * 0, or -1 with errno. */
int at_sink_thread_start(struct at_sink *s, unsigned log2, unsigned encoders);
#define AT_SINK_FRAME_EACH_RUN 0x100u
/* Wakes the writing thread for the events queued (after a batch of at_sink_put) when 4,096
 * or more wait unwritten: fewer wait for more, or for anything that syncs (a flush, the
 * stats, the close); a quarter of the queue wakes it anyway. Nothing without a thread. */
void at_sink_kick(struct at_sink *s);

/* Opens path for writing (NULL or "-": standard output, named "<stdout>"); the name is kept,
 * not copied. mode: enum at_sink_mode bits. The format is chosen by at_sink_start. 0, or -1
 * with errno and at_sink_open_why() (the sink then drops everything and at_sink_close returns
 * -1). */
int at_sink_open(struct at_sink *s, const char *path, unsigned mode);
/* The same on a descriptor the caller owns (not closed by the sink). */
int at_sink_open_fd(struct at_sink *s, int fd, const char *name);
/* Chooses the format, once per open; a binary trace writes its headers now. Options are
 * copied (the strings they point to must live as long as the sink). 0, or -1 with errno (kept
 * as the sink's error). */
int at_sink_start(struct at_sink *s, const struct at_sink_options *opt);
/* Text: the lines from now on print pointers as #SLOT (munged != 0) or as addresses. Binary:
 * the header's flag, if the trace is not started yet. */
void at_sink_set_munged(struct at_sink *s, int munged);

/* Writes one event. 0; -1 with errno EINVAL for an event outside the model (func or has_result
 * out of range, or in a 2.x trace a stack id whose stack record was not put yet: nothing
 * written, the sink unharmed), or with the sink's error after a failure
 * (the event dropped; a sink not started fails with EINVAL as its error). */
int at_sink_put(struct at_sink *s, const struct at_event *ev);
/* Writes a record (text: counted only; stacks and mappings into 1.x: dropped). 0, or -1 as
 * at_sink_put (EINVAL for a stack out of order or a bad mapping, kept as the sink's error).
 * With a writing thread, a copy is queued (everything r points to included) and 0 returned:
 * a refusal is then the sink's error when the thread writes it. A copy that cannot be made is
 * written at once by the caller's thread, or with encoders (whose frames are written in their
 * order alone) is the sink's error, ENOMEM. */
int at_sink_put_record(struct at_sink *s, const struct at_sink_record *r);
/* Records that n events were lost here (nothing for n == 0). 0, or -1. */
int at_sink_lost(struct at_sink *s, uint64_t n);

/* Writes out what is buffered (binary: ends the current lz4 block first). One write() at most;
 * nothing when nothing is buffered. 0, or -1 with the sink's error. */
int at_sink_flush(struct at_sink *s);
/* Flushes, ends the trace (binary: the frame's end mark) and closes what the sink opened. The
 * counters, the name and the error stay readable. 0, or -1 if any write failed. */
int at_sink_close(struct at_sink *s);
/* Log rotation (SIGHUP): when path still names the file being written (same device and
 * inode), only flushes: a binary trace goes on in the same lz4 frame. Otherwise opens path for
 * appending (by the rule of the first open), and only then ends the trace on the old file (as
 * at_sink_close) and starts the same options on the new one; counters go on. Returns 0 after
 * a reopen, 1 when path was still the file (flushed), -1 with errno: when path cannot be
 * opened, the sink is left as it was, still writing to the old file (at_sink_open_why() says
 * why; the error is not the sink's); when the old file's last write or the new trace's start
 * fails, the error is the sink's. */
int at_sink_reopen(struct at_sink *s, const char *path);

/* Why the last at_sink_open or at_sink_reopen could not open its path, for "cannot open PATH:
 * WHY". */
const char *at_sink_open_why(const struct at_sink *s);

/* The buffered output, for writers that format their own lines (munge's reference path). */
static inline struct at_output *at_sink_output(struct at_sink *s)
{
	return &s->out;
}

static inline const char *at_sink_name(const struct at_sink *s)
{
	return s->out.name;
}

/* The first errno of a failure, 0 if none. */
static inline int at_sink_error(const struct at_sink *s)
{
	return s->out.err;
}

void at_sink_stats(const struct at_sink *s, struct at_sink_stats *st);

#endif
