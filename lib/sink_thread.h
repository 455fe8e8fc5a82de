/* sink_thread.h: the queue between a sink's producer and its writing thread (sink_thread.c);
 * sink.c's functions use it when the sink has a thread (at_sink_thread_start, sink.h). */
#ifndef ALLOCTAP_SINK_THREAD_H
#define ALLOCTAP_SINK_THREAD_H

#include "sink.h"

/* Queues ev for the writer (waits while the queue is full). */
void at_sink_thread_put(struct at_sink_thread *t, const struct at_event *ev);
/* Queues a copy of record r for the writer, in its place among the events (waits while the
 * queue is full, or while the copies queued hold AT_SINK_RECORD_BYTES). 0, or -1 out of memory
 * (nothing queued). */
int at_sink_thread_put_record(struct at_sink_thread *t, const struct at_sink_record *r);
/* Wakes the writer for what is queued, when 4,096 items or more wait (AT_SINK_KICK_MIN). */
void at_sink_thread_kick(struct at_sink_thread *t);
/* Returns once the writer has written every event queued (it is then idle until the next). */
void at_sink_thread_sync(struct at_sink_thread *t);
/* Syncs, and ends the frame an encoder left open in the file (its end mark): the next events
 * begin a frame (before the file is closed or another opened). */
void at_sink_thread_end_frame(struct at_sink_thread *t);
/* Syncs, ends the thread and frees the queue: the sink writes in its caller's thread again. */
void at_sink_thread_stop(struct at_sink *s);
/* Whether t encodes frames on several threads (its records must then be queued). */
int at_sink_thread_frames(const struct at_sink_thread *t);
/* Whether sink s may be written in frames encoded apart (sink.c): a binary trace of 2.x whose
 * frames can go on from each other (2.5 with stacks, or without stacks). */
int at_sink_frames_possible(const struct at_sink *s);
/* Into a, the options of a frame of s's trace after frames that defined stacks_before stacks
 * (sink.c): s's own, its munged flag, and STACKS_GO_ON when it has stacks and stacks_before. */
void at_sink_frame_options(const struct at_sink *s, uint32_t stacks_before,
			   struct at_atz_options *a);
/* Puts record r into a frame's writer w, as at_sink_put_record_now would (sink.c); its lost
 * events added to *lost. 0, or -1 with errno. */
int at_sink_frame_record(struct at_atz_writer *w, const struct at_sink_record *r, uint64_t *lost);
/* Ends the frame s->atz writes, if one is open, its counters added to the sink's (sink.c). */
void at_sink_end_frame(struct at_sink *s);
/* What at_sink_put does with an event in the writer's thread (sink.c). */
int at_sink_put_now(struct at_sink *s, const struct at_event *ev);
/* What at_sink_put_record does with a record in the writer's thread (sink.c). */
int at_sink_put_record_now(struct at_sink *s, const struct at_sink_record *r);
/* A copy of r and of everything it points to, in one allocation (free() frees it), its size in
 * *bytes (sink_record.c); NULL out of memory. */
struct at_sink_record *at_sink_record_copy(const struct at_sink_record *r, size_t *bytes);

/* Bytes of record copies queued at most: past them at_sink_thread_put_record waits. */
#define AT_SINK_RECORD_BYTES (8u << 20)

#endif
