/*
 * msgmatch.h - MPI point-to-point messages paired by MPI's non-overtaking rule: on a channel
 * (communicator, source, destination, tag) the n-th send is received by the n-th receive
 * (sends in the order they were posted, receives in the order they completed, as a tracer
 * records them). One rule for every reader of message records: the tracer's merged outputs
 * (trace/merge.c), its streamed ones (trace/stream.c, counted as the records come), hclock
 * align's raw and OTF2 readers, and the wait-state analysis (src/waits, pairing as it goes).
 *
 * The same rule in these forms:
 *   - msgmatch(): all ends at once (a reader that holds every record): sorted into channels,
 *     each channel's k-th send paired with its k-th receive;
 *   - struct msgmatch_chans: one record at a time (a writer that streams): the number of
 *     ends seen so far on the channel, so that the k-th send and the k-th receive get the
 *     same message id (msgmatch_id) without ever meeting;
 *     or (msgmatch_fifo, an analysis that streams) each end paired as it comes with the
 *     first end of the other side waiting on its channel, else queued behind its own side.
 * No MPI: ranks, locations and communicators are the caller's integers.
 */
#ifndef HCLOCK_UTIL_MSGMATCH_H
#define HCLOCK_UTIL_MSGMATCH_H

#include <stddef.h>
#include <stdint.h>

/* one end of a message: a send or a receive record */
struct msgmatch_end {
	int64_t src, dst;  /* sender and receiver (ranks or locations) */
	uint64_t comm;     /* the communicator's id */
	int64_t tag;
	int64_t order;     /* its place among the channel's sends (receives): posting order */
	uint64_t order2;   /* and within equal order (e.g. an event's place in its record) */
	int recv;          /* 0: a send, 1: a receive */
	size_t who;        /* the caller's handle of the record */
};

/* called for the k-th send s and the k-th receive r of a channel; non-zero stops */
typedef int (*msgmatch_pair_fn)(void *ctx, const struct msgmatch_end *s,
                                const struct msgmatch_end *r);
/* called for a channel whose sends and receives differ in number (first: one of its
 * ends); the ends past the shorter side are not paired; non-zero stops */
typedef int (*msgmatch_lone_fn)(void *ctx, const struct msgmatch_end *first, size_t nsend,
                                size_t nrecv);

/* Sort e (n ends; reordered) into channels (source, destination, communicator, tag, then
 * order) and call pair for every message, channel by channel, and lone (may be NULL) for
 * every channel with ends left over. *unpaired (may be NULL) gets the number of ends left
 * over. Returns 0, or the first non-zero value a callback returned. */
int msgmatch(struct msgmatch_end *e, size_t n, msgmatch_pair_fn pair, msgmatch_lone_fn lone,
             void *ctx, size_t *unpaired);

/* ---- one record at a time ---- */

struct msgmatch_chan; /* a channel and its ends so far */

struct msgmatch_chans {
	struct msgmatch_chan *ch; /* open addressing, a power of two (cap), at most half full */
	size_t n, cap;
	size_t *next;             /* msgmatch_fifo: the caller's handle queued after each */
	size_t next_cap;
};

/* The number of ends of this kind seen before on the channel (counted up: the n-th send
 * and the n-th receive of a channel get the same number), or -1 without memory (the set
 * stays usable). Start from a zeroed set. */
int64_t msgmatch_next(struct msgmatch_chans *cs, uint64_t comm, int64_t src, int64_t dst,
                      int64_t tag, int recv);
void msgmatch_chans_free(struct msgmatch_chans *cs);

#define MSGMATCH_QUEUED (-1) /* msgmatch_fifo: the end waits for its partner */
#define MSGMATCH_NOMEM (-2)  /* ... no memory (nothing changed) */
/* One end (its handle who: a small integer the caller keeps its data under, not in use by
 * another waiting end) as it comes: the handle of the first end of the other side waiting on
 * its channel, taken off the queue (the two are the channel's k-th send and k-th receive),
 * or MSGMATCH_QUEUED (it waits behind its own side's), or MSGMATCH_NOMEM. */
int64_t msgmatch_fifo(struct msgmatch_chans *cs, uint64_t comm, int64_t src, int64_t dst,
                      int64_t tag, int recv, size_t who);

/* A message's id from its channel and number: the same on both ends, never 0. */
uint64_t msgmatch_id(uint64_t comm, int64_t src, int64_t dst, int64_t tag, uint64_t n);

#endif
