/*
 * otf2_waits.h - the wait states (src/waits, docs/waits.md) of any OTF2 archive: one that
 * hclock trace wrote, one that hclock align corrected, one of another tool (Score-P). What
 * `hclock waits` runs. MPI-free: the archive names its MPI functions, and a function's name
 * says what kind of call it was (mpiclass.h).
 *
 * The archive: its anchor file NAME.otf2, or the directory holding one. A process is a
 * location group that has locations, named as hclock align names its node ("MPI Rank 3" ->
 * "MPI_Rank_3"); its locations are its threads. The events are read in time order, the
 * locations' event readers merged one event at a time (so memory holds an event a location,
 * the open calls, the messages in flight and the collectives not yet entered by every member,
 * not the archive). Per location a stack of the open calls (Enter, Leave): what happens
 * inside a call belongs to it and is fed to the analysis at its Leave, when the call is
 * complete:
 *  - MpiSend, MpiIsend: a send started at the call's Enter (blocking or synchronous by the
 *    call's name: MPI_Send, MPI_Ssend, ...);
 *  - MpiRecv, MpiIrecv: a receive the call completed (posted at its Enter when the call is a
 *    blocking receive);
 *  - MpiCollectiveEnd: the process's part in a blocking collective, its kind from the call's
 *    name or else the OTF2 operation, its size and root from the communicator's group;
 *  - NonBlockingCollectiveRequest in an i-call (MPI_Iallreduce), the matching
 *    NonBlockingCollectiveComplete (same location, same request id) in the call that
 *    completed it: a nonblocking collective entered at the i-call's Enter.
 * An event outside every call stands for a call of no duration at its own time. Peers and
 * roots are ranks of the event's communicator, resolved to processes through its
 * COMM_GROUP (or COMM_SELF) and the COMM_LOCATIONS group; a message whose peer no group
 * resolves is left out, a collective on such a communicator counted (colls_unknown).
 *
 * Times: ns since the archive's global offset, ns = floor((ticks - offset) * 1e9 /
 * resolution) in 128-bit integers, as hclock align reads them. Without a bound callback
 * every timestamp has no bounds (WAITS_NO_BOUND: estimates, nothing proven); the callback
 * (hclock waits --align: hclock_align_convert) gives each time its place on one reference
 * timeline and its strict bounds.
 */
#ifndef HCLOCK_TRACE_OTF2_WAITS_H
#define HCLOCK_TRACE_OTF2_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/waitstate.h"

typedef struct otf2_waits otf2_waits;

/* The archive at path (NAME.otf2 or its directory) opened, its global definitions read.
 * Returns 0 with *out set (free it with otf2_waits_free), or with *out NULL: HCLOCK_EINVAL
 * (no archive there, not a readable OTF2 archive, definitions that contradict each other or
 * no process), HCLOCK_ENOMEM; the line in hclock_last_error(). */
int otf2_waits_open(const char *path, otf2_waits **out);

/* The anchor file's path; the processes (location groups with locations): their number,
 * process p's node name as hclock align names it (owned by o), and its MPI rank (the number
 * in its name "MPI Rank R", else its place in the MPI COMM_LOCATIONS group; -1: none). */
const char *otf2_waits_anchor(const otf2_waits *o);
size_t otf2_waits_nprocs(const otf2_waits *o);
const char *otf2_waits_proc_name(const otf2_waits *o, size_t p);
int otf2_waits_proc_rank(const otf2_waits *o, size_t p);

/* The truth of the timestamps (hclock trace --emulate ... --event-truth): dir is the trace
 * directory whose raw/truth.R the tracer wrote (truthfile.h), R a process's rank. A stamp's
 * truth is looked up at its archive time in absolute ns, floor(ticks * 1e9 / resolution)
 * (hclock trace writes the global clock's ns as ticks at 1 GHz). Returns 0 when the truth of
 * at least one process was read; HCLOCK_EINVAL when none was (no truth file for any rank of
 * the archive, or none readable), HCLOCK_ENOMEM; the line in hclock_last_error(). */
int otf2_waits_truth(otf2_waits *o, const char *dir);

/* The bounds of a time of process p: called with s->t_ns the archive's time (ns since its
 * global offset) and no bounds (WAITS_NO_BOUND); sets s->t_ns to the time to report, and
 * s->below_ns, s->above_ns to its strict bounds (>= 0) where known. */
typedef void (*otf2_waits_bound_fn)(void *ctx, size_t p, struct waits_stamp *s);

struct otf2_waits_opts {
	otf2_waits_bound_fn bound; /* NULL: no bounds */
	void *ctx;
	int plot;                  /* 1: the messages per pair for comm_matrix.svg (tw->plot) */
};

/* Every event read and analysed into *tw (waitstate.h's struct trace_waits, so that
 * waitreport.h prints it and waitplot.h draws it; t0_g 0: the times are relative to the
 * global offset). Once per handle. Returns 0 (tw->done 1), HCLOCK_EINVAL (events the
 * archive cannot hold: a time out of range, a file cut short), HCLOCK_ENOMEM; on an error *tw
 * is empty and the line is in hclock_last_error(). */
int otf2_waits_run(otf2_waits *o, const struct otf2_waits_opts *op, struct trace_waits *tw);

/* After a run: the time in MPI calls summed over the processes (the outermost calls of MPI
 * functions), ns, what the report's shares are of; and the first to the last event, ns. */
int64_t otf2_waits_mpi_ns(const otf2_waits *o);
int64_t otf2_waits_span_ns(const otf2_waits *o);

void otf2_waits_free(otf2_waits *o);

#endif
