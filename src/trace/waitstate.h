/*
 * waitstate.h - the wait states of a traced run (src/waits, docs/waits.md) from its raw
 * records: the pass `waits` of trace_assemble (assemble.h) and what the profile prints of it.
 * MPI-free: the records name their MPI functions, and the function's name says what kind of
 * call it was (a blocking send, a receive posted at its enter, a collective and its kind).
 *
 * The raw files DIR/raw/rank.R are read in chunks, all processes together in windows of
 * global time, so that memory holds the messages in flight and the collectives not yet
 * entered by every member, not the trace. Each call's bounds come from its record (record.h's
 * REC_F_HW: the clock's bounds at its enter and leave); a message's start is its sending
 * call's enter (the send's record comes just before that call's, in the recording thread),
 * its receive the call that completed it (the receive's record, and a nonblocking
 * collective's completion, come just after that call's, at its leave). Communicators'
 * sizes come from the trailers (a process that died leaves none: a collective of a
 * communicator no trailer describes is not analysed, and counted).
 *
 * With the truth of the timestamps (--event-truth under emulated clocks writes it beside the
 * raw files), every instance carries its true waiting time too and the totals count those
 * whose truth missed their interval: the analysis checks its own proof.
 */
#ifndef HCLOCK_TRACE_WAITSTATE_H
#define HCLOCK_TRACE_WAITSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "waits/waits.h"

#define TRACE_WAITS_WORST 10 /* the worst instances the profile lists */

struct trace_waits {
	int done;                /* the analysis ran (the other fields are set) */
	waits *w;                /* its results (owned) */
	char **fnames;           /* function names by the ids in w's instances and rows */
	size_t nfnames;
	int64_t t0_g;            /* the run's origin (rank 0's header), ns: times are given
	                            relative to it */
	uint64_t calls;          /* calls read */
	uint64_t unbounded;      /* ... of them without bounds (REC_F_HW missing or unknown) */
	uint64_t colls_unknown;  /* collectives on a communicator whose size no trailer gives */
	int64_t took_ns;         /* the analysis's wall time, ns (reading the records included) */
	uint64_t marked;         /* instances marked in trace.pftrace: those of 1 us or more */
	/* the truth (--event-truth under emulated clocks: DIR/raw/truth.R, truthfile.h): the
	   processes that had it; the first instances whose true waiting time missed their
	   interval (the totals count them all: waits_total's truth_outside) */
	int truth_procs, truth_unreadable;
	struct waitplot *plot;   /* the messages per pair, for comm_matrix.svg (waitplot.h;
	                            NULL: none) */
	struct waits_instance outside[TRACE_WAITS_WORST];
	size_t noutside;
};

/* Analyse DIR/raw/rank.0 .. size-1 into *tw; with pftrace (not NULL), every instance of at
 * least 1 us (estimate or lower end) is marked in that Perfetto trace too, as it is found
 * (perfetto.h's pf_waits: a track "wait states" per process). Returns 0, HCLOCK_ENOMEM, or HCLOCK_EIO (no readable raw file; or
 * the marks could not be written: *tw is complete then, done 1), with the line in
 * hclock_last_error(); on the other errors *tw is empty (done 0). */
int trace_waits_run(const char *dir, int size, const char *pftrace, struct trace_waits *tw);
void trace_waits_free(struct trace_waits *tw);

/* The name of function id f ("?" if unknown). */
const char *trace_waits_fname(const struct trace_waits *tw, uint32_t f);

#endif
