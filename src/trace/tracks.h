/*
 * tracks.h - one process's output stream (stream.h) as its writers share it: its threads'
 * tracks, their pending flows and held calls, the counters. Shared by the stream (stream.c:
 * the records in), the Perfetto writer (perfetto.h) and the JSON writer (json.h). MPI-free;
 * no file but these three includes it.
 */
#ifndef HCLOCK_TRACE_TRACKS_H
#define HCLOCK_TRACE_TRACKS_H

#include <stdint.h>

#include "trace/out.h"
#include "trace/stream.h"
#include "util/msgmatch.h"
#include "util/record.h"

struct otf2s;

#define MAX_THREADS 1024   /* a record's thread index above this shares the last track */
#define MAX_PENDING 64     /* flow ids waiting for their call's record, per thread */
#define NB_LANES 16
#define HIST_BINS 64       /* message sizes: bin 0 empty, bin k in [2^(k-1), 2^k) */

/* one thread of the process: its packet sequence in the protobuf, its pending flows and
 * held call */
struct thr {
	int up;
	int64_t last_ts;           /* the incremental clock's value, ns */
	uint32_t *iid;             /* per function: its name's iid on this sequence (0: not
	                              interned yet); iids count up in the order of first use, so
	                              the functions a program calls take one byte */
	uint32_t iids;             /* iids given so far */
	uint64_t flow[MAX_PENDING], end[MAX_PENDING];
	int nflow, nend;
	int64_t p_t0, p_t1;        /* the pending messages' first and last time, ns */
	uint16_t p_func;
	/* a call's end is held until the thread's next record: the receives it completed
	 * are recorded after it (calls.c), at its leave time, and the persistent sends an
	 * MPI_Start(all) started, at its enter time (their flows leave from its end) */
	int held;
	uint16_t held_func;
	int64_t held_t0, held_t2;
	uint64_t hflow[MAX_PENDING];
	int nhflow;
};

/* record r belongs to thread h's held call: a receive it completed, a persistent send it
 * started */
static inline int of_held(const struct thr *h, const struct rec *r)
{
	return h->held && r->func == h->held_func &&
	       ((r->kind == REC_RECV && r->t_g == h->held_t2) ||
	        (r->kind == REC_SEND && r->t_g == h->held_t0));
}

struct fprof {
	uint64_t calls;
	int64_t total_ns, max_ns;
};

struct trace_stream {
	int rank, size;
	char host[40];             /* the process's host ("": not known) */
	char name[64];             /* the process's name in the outputs: "rank R (HOST)" */
	uint32_t nfuncs;
	char **names;
	int64_t t0;
	uint64_t json_limit;
	char dir[4200];
	struct out pf, js;
	struct otf2s *o2;          /* the OTF2 part (otf2_stream.h) */
	int json_on;
	int stats_fd;              /* DIR/parts/rank.R.stats.part, its space taken */
	unsigned when_full;        /* the raw header's: record.h's enum rec_when_full */
	uint64_t waits;            /* ... the appends that waited for the writer */
	int64_t waited_ns;         /* ... the time they waited, summed over the threads, ns */
	int have_clock;            /* clock holds the continuous clock's statistics */
	struct stream_clock clock;
	int nheld;                 /* threads with a call's end held (slices open) */
	int stopped, stop_errno;   /* recording stopped early: enum rec_stop, errno */
	int stop_marked;           /* the stop's instant event is written */
	int64_t stop_ts;           /* ... at this time, ns (global clock) */
	uint64_t stop_at;          /* the protobuf's bytes up to the end of it (UINT64_MAX:
	                              not put: the output had stopped) */
	uint64_t proc_at;          /* ... up to the end of the process's track description */
	int json_skip_errno;       /* the JSON part left out: its disk is full (this errno) */
	int bound_track;           /* the bound's counter track is described */
	uint64_t bound_samples;    /* REC_BOUND samples */
	int64_t bound_max_ns;      /* their largest half-width, ns */
	struct thr *thr[MAX_THREADS];
	struct msgmatch_chans chans; /* each channel's sends and receives so far: the flow ids */
	int64_t lane_end[NB_LANES];
	uint64_t nb_id;
	/* counters */
	uint64_t records, drops, sends, recvs, coll, calls, json_events;
	int64_t t_first, t_last, mpi_ns;
	struct fprof *prof;
	uint64_t hist[HIST_BINS];
	uint64_t hist_bytes;
};

#endif
