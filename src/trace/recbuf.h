/*
 * recbuf.h - the tracer's two record buffers, filled by any number of threads without a lock
 * and emptied by one writer thread (tracer.c). Knows records (util/record.h), nothing of MPI
 * or of files: the writer and recbuf_flush hand the records to their caller.
 *
 * A thread appends with one atomic add that reserves a slot in the current buffer, copies
 * the record in and publishes it by storing its kind last (a slot of kind 0 is unpublished).
 * The thread whose reservation finds the buffer full switches to the other one if the writer
 * is idle, and hands the full one to the writer (which waits until every slot of it is
 * published); otherwise, by default, its record is dropped and counted, and the next switch
 * puts a REC_DROP record saying how many went missing: nothing waits for the writer, the
 * program is never stalled. With recbuf_wait_for_writer the thread waits instead until the
 * writer gave its buffer back, at most a deadline per wait: a wait that reaches it turns
 * waiting off for good (the records are dropped from then on), so that a writer that is
 * stuck or gone cannot hold the program forever.
 */
#ifndef HCLOCK_TRACE_RECBUF_H
#define HCLOCK_TRACE_RECBUF_H

#include <stddef.h>
#include <stdint.h>

#include "util/record.h"

typedef struct recbuf recbuf;

/* Two buffers of cap records each (cap >= 2), every page mapped now (a first touch at a
 * program's call is a page fault of 1-2 us). NULL without memory. */
recbuf *recbuf_create(size_t cap);
void recbuf_free(recbuf *rb);

/* Append a copy of r (r->kind nonzero) as thread tid's. Any thread, lock-free,
 * async-signal-safe. A sample (sample != 0: a record that is no event, REC_BOUND) is skipped
 * when the buffer is full: it never switches buffers nor counts as dropped. Returns 1 when
 * r is in a buffer, 0 when it was dropped (counted) or skipped. */
int recbuf_append(recbuf *rb, const struct rec *r, uint32_t tid, int sample);

/* The writer (one thread): the next full buffer, every record of it published (its count in
 * *n); wait: until there is one or recbuf_stop was called. NULL when there is none. The
 * caller writes the records out, then calls recbuf_written. */
const struct rec *recbuf_take(recbuf *rb, size_t *n, int wait);
void recbuf_written(recbuf *rb);
/* recbuf_take (wait) returns NULL once the buffer it holds has been taken */
void recbuf_stop(recbuf *rb);

typedef void recbuf_put_fn(const struct rec *b, size_t n, void *ctx);
/* Close the current buffer now and hand its published records to put (in runs, in order),
 * then last (if not NULL), then a REC_DROP record for drops not said yet. Async-signal-safe
 * (atomics, sem_post, nanosleep): usable from a signal handler that interrupted an append,
 * whose slot is never published and is skipped (counted dropped), or a switch of buffers.
 * Waits at most wait_ns for the writer to finish its buffer, at most 10 ms for another flush
 * and for slots reserved but not yet published. Returns the slots skipped (0: all written,
 * the buffers go on as before; more: the buffers take no more records, they count them
 * dropped), or -1 when the writer or another flush stayed busy (nothing handed to put). Not
 * from the writer thread. */
long recbuf_flush(recbuf *rb, const struct rec *last, int64_t wait_ns, recbuf_put_fn *put,
                  void *ctx);

/* Records dropped because both buffers were full, or skipped by recbuf_flush. */
uint64_t recbuf_dropped(const recbuf *rb);

/* When both buffers are full: max_ns > 0: the appending thread waits for the writer to give
 * its buffer back (sched_yield, then sleeps of 20 to 200 us), at most max_ns per wait, ns; a
 * wait that reaches max_ns gives up: its record is dropped and waiting is off for good
 * (recbuf_waits' gave_up). After recbuf_stop nothing waits (the writer is ending). 0: drop at once (the default). A buffer a
 * flush holds (recbuf_flush) is never waited for. Call before the appends start. */
void recbuf_wait_for_writer(recbuf *rb, int64_t max_ns);

struct recbuf_waits {
	uint64_t waits;    /* appends that waited for the writer */
	int64_t waited_ns; /* the time they waited, summed over the threads, ns */
	int gave_up;       /* 1: a wait reached its deadline, waiting is off (drops since) */
};
void recbuf_waits(const recbuf *rb, struct recbuf_waits *w);

#endif
