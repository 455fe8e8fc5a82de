/* sink_thread.h: the queue between a sink's producer and its writing thread (sink_thread.c);
 * sink.c's functions use it when the sink has a thread (at_sink_thread_start, sink.h). */
#ifndef ALLOCTAP_SINK_THREAD_H
#define ALLOCTAP_SINK_THREAD_H

#include "sink.h"

/* Queues ev for the writer (waits while the queue is full). */
void at_sink_thread_put(struct at_sink_thread *t, const struct at_event *ev);
/* Wakes the writer for what is queued. */
void at_sink_thread_kick(struct at_sink_thread *t);
/* Returns once the writer has written every event queued (it is then idle until the next). */
void at_sink_thread_sync(struct at_sink_thread *t);
/* Syncs, ends the thread and frees the queue: the sink writes in its caller's thread again. */
void at_sink_thread_stop(struct at_sink *s);
/* What at_sink_put does with an event in the writer's thread (sink.c). */
int at_sink_put_now(struct at_sink *s, const struct at_event *ev);

#endif
