/* window.h: the recording window: every probe attached with recording off, then recording on
 * at one instant; at the end off at one instant, and every call of the window finished before
 * the probes go.
 *
 * A call belongs to the window when its outermost entry saw recording on (bpf/alloctap.bpf.c);
 * so the trace holds exactly the calls of the window, whole: no realloc(NULL, n) written as
 * malloc(n) at the start, no frees missing at the end. */
#ifndef ALLOCTAP_WINDOW_H
#define ALLOCTAP_WINDOW_H

#include <stdint.h>

struct at_bpf;
struct at_reorder;

/* How long at_window_close waits for the calls still in flight. */
#define AT_WINDOW_WAIT_MS 1000

/* How long a running process is left to finish the calls it was making while its probes went
 * in, before recording starts: a thread whose realloc(NULL, n) began before realloc's probe was
 * attached and reaches malloc after recording started would be written as malloc(n). While a
 * probe is installed the target's threads wait on its memory map lock, so such a thread is
 * often held just there; once the last probe is in, it finishes within microseconds unless it
 * is preempted for longer than this. */
#define AT_WINDOW_SETTLE_MS 20

/* Turns recording on, settle_ms after the call (0 for a process that has not run yet): call
 * once every probe is attached. */
void at_window_open(struct at_bpf *bpf, unsigned settle_ms);

/* Turns recording off, then waits (draining the rings into merge meanwhile, so that the
 * returns find room) until no call of the window is in flight and merge has read every record
 * reserved by then (a program may still be writing one), at most wait_ms. Returns the calls
 * still in flight then: normally 0; a thread stopped inside the allocator keeps one. */
uint64_t at_window_close(struct at_bpf *bpf, struct at_reorder *merge, unsigned wait_ms);

/* Calls of the window in flight now, and how many of them are reallocs. 0, or -1 if the
 * counters cannot be read. */
int at_window_in_flight(struct at_bpf *bpf, uint64_t *calls, uint64_t *reallocs);

/* After the probes are gone: the calls of the window that never finished and that the merge
 * will not count lost (it gives up on a realloc whose entry record it read), so that the caller
 * counts them lost; says so on stderr when there are any. */
uint64_t at_window_unfinished(struct at_bpf *bpf);

#endif
