/*
 * perfetto.h - the Perfetto writer: one process's records as Perfetto's protobuf trace
 * format (perfetto.c says how), written to the stream's protobuf part (tracks.h's
 * s->pf) as stream.c hands the records over, and the launcher's marks of message order
 * appended to the assembled trace. MPI-free.
 *
 * Thread t's events go to its own packet sequence, started by pf_thread. A call's slice is
 * begun at its record and ended at the thread's next record (pf_release): the receives it
 * completed come after it, and their flows end at its end.
 */
#ifndef HCLOCK_TRACE_PERFETTO_H
#define HCLOCK_TRACE_PERFETTO_H

#include <stddef.h>
#include <stdint.h>

#include "util/record.h"

struct trace_stream;
struct thr;

/* The process's track, at the stream's start. */
void pf_process(struct trace_stream *s);
/* Thread t's state, its sequence started at its first event (time ts, ns); t out of range
 * shares the last track. NULL without memory (that thread's events are left out). */
struct thr *pf_thread(struct trace_stream *s, int t, int64_t ts);
/* A call's record (REC_CALL, a blocking REC_COLL): thread h's held call ended, this one's
 * slice begun with the flows pending, its end held. */
void pf_call(struct trace_stream *s, const struct rec *r, int t, struct thr *h);
/* The end of thread h's held call (if any), with the flows it ended or started. */
void pf_release(struct trace_stream *s, int t, struct thr *h);
/* A message's flow id (send: 1) pending for its call's slice (h NULL: none). */
void pf_message(struct thr *h, const struct rec *r, uint64_t id, int send);
/* A nonblocking collective, from its start to its completion, on a lane of its own. */
void pf_nb_coll(struct trace_stream *s, const struct rec *r, int t, struct thr *h);
/* A bounds sample: the half-width hw (ns) on the process's counter track at ts (ns). */
void pf_bound(struct trace_stream *s, int t, struct thr *h, int64_t ts, int64_t hw);
/* An instant named what where recording stopped (ts, ns); s->stop_at set past it. */
void pf_stop(struct trace_stream *s, int t, struct thr *h, int64_t ts, const char *what);
/* After a cut (a full disk) before the end of the stop's instant: the instant (what) again
 * at the cut, over the bytes the output held for it. */
void pf_stop_tail(struct trace_stream *s, const char *what);

/* A message's order as the launcher found it (merge.h's rec_order), marked at its receive. */
struct pf_order {
	int32_t dst;       /* the receiving process */
	int proven;        /* 1: proven by the bounds, 0: by the estimate only */
	int64_t t_ns;      /* the receive's time, ns (global clock) */
	int64_t margin_ns; /* the receive's earliest minus the send's latest bound, ns (> 0:
	                      proven) */
};

/* Append to the Perfetto trace at path a track "message order" per receiving process (of
 * size) with an instant per message of o[0..n) (sorted here by dst): "order proven" or
 * "order by estimate", its margin as the debug annotation margin_ns (names interned once
 * per process, about 30 bytes a message). Returns 0 or
 * HCLOCK_EIO / HCLOCK_ENOMEM with err_set's line. */
int pf_write_order(const char *path, int size, struct pf_order *o, size_t n);

/* The wait states found by the launcher (waitstate.h), appended to the Perfetto trace at
 * path as they come: a track "wait states" per waiting process (of size), a slice per
 * instance from its call's enter for its estimated waiting time, named by its pattern (the
 * titles interned once per process), with
 * the debug annotations waited_for_rank, lo_ns, hi_ns (absent: no upper bound) and proven
 * (an instant where the estimate is 0). NULL with err_set's line when the file cannot be
 * opened or memory runs out. */
struct pf_waits;
struct pf_waits *pf_waits_open(const char *path, int size, const char *const *titles,
                               int ntitles);
/* An instance of pattern title (an index into the titles given to pf_waits_open) of process
 * proc: from at_ns for est_ns, its interval [lo_ns, hi_ns] and whom it waited for (peer). */
void pf_waits_add(struct pf_waits *w, int32_t proc, int title, int64_t at_ns, int64_t est_ns,
                  int64_t lo_ns, int64_t hi_ns, int64_t peer);
/* Flush and close. Returns 0 or HCLOCK_EIO with err_set's line (a failed write takes back
 * every mark: the file ends where it ended before). */
int pf_waits_close(struct pf_waits *w);

#endif
