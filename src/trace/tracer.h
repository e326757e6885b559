/*
 * tracer.h - libhclock_trace's runtime, used by the wrappers: the generated ones
 * (trace_wrappers.c: enter/leave only) and the hand-written ones (calls.c: Init, Finalize,
 * messages, collectives, communicators, request completion).
 *
 * Rules the wrappers keep: the program's arguments go to the PMPI_ call unchanged and its
 * result comes back unchanged; nothing is recorded before MPI_Init's sync or after
 * MPI_Finalize started, nor while the tracer itself calls MPI (hclock's own messages, on its
 * private communicators, are never recorded or touched).
 */
#ifndef HCLOCK_TRACE_TRACER_H
#define HCLOCK_TRACE_TRACER_H

#include <stdint.h>

#include "util/pmpi.h"

#include "util/record.h"
#include "trace_funcs.h"

struct trace_call {
	uint16_t func;
	int64_t t_g, t_l;   /* enter, ns */
	int64_t t2_g, t2_l; /* leave (set by trace_leave), ns */
	struct trace_call *prev; /* the call of this thread it is made inside, if any (tracer.c:
	                            a program ended inside a call gets that call recorded) */
};

/* Whether this call is recorded (tracing on, not filtered out, not the tracer's own); if so
 * takes the enter times. Cheap when off. */
int trace_enter(enum trace_func f, struct trace_call *c);
/* Take the leave times; record the call (REC_CALL) unless it is filtered out. Every call
 * trace_enter took ends in trace_leave, trace_coll or trace_abort. */
void trace_leave(struct trace_call *c);

/* The communicator's id and the world rank of its rank r (-1: r < 0 such as MPI_ANY_SOURCE or
 * MPI_PROC_NULL, -2: not resolvable). Registers comm on first sight. */
void trace_comm_peer(MPI_Comm comm, int r, uint64_t *id, int32_t *world);
/* A communicator just created from parent (collectively: every member numbers its parent's
 * children alike, so the ids agree). */
void trace_comm_created(MPI_Comm parent, MPI_Comm newcomm);

/* Message and collective records (t: now, on both clocks). */
void trace_send(const struct trace_call *c, MPI_Comm comm, int dest, int tag, int count,
                MPI_Datatype type);
/* a receive completed by call c (recorded at its leave time, if c is recorded) */
void trace_recv(const struct trace_call *c, MPI_Comm comm, const MPI_Status *st,
                MPI_Datatype type);
void trace_coll(const struct trace_call *c, MPI_Comm comm, int root, int count,
                MPI_Datatype type);

/* Records of requests that one call starts and a later one completes (calls.c keeps the
 * requests): trace_prepare fills r when the request is made (kind, the communicator's id and
 * the world rank of its rank peer as trace_comm_peer gives them, tag, bytes; func, flags and
 * times 0): the program may free the communicator or datatype before the request completes.
 * trace_append appends r as it is when its func is a recorded call's (a struct trace_call's
 * func: a filtered-out call's is not) and recording is on. */
void trace_prepare(struct rec *r, enum rec_kind kind, MPI_Comm comm, int peer, int tag,
                   uint64_t bytes);
void trace_append(const struct rec *r);
/* the calling thread's tid in the records (struct rec's tid), given it now if it has none.
 * Hidden: the library is built with default visibility (its wrappers must be seen), and a
 * function others could interpose is not inlined into the record's append, a hot path. */
__attribute__((visibility("hidden"))) uint32_t trace_tid(void);

/* MPI_Init / MPI_Init_thread (after PMPI_Init) and MPI_Finalize (before PMPI_Finalize). */
void trace_init(void);
void trace_finalize(void);
/* The MPI library's shutdown fin (PMPI_Finalize, or Fortran's) after trace_finalize,
 * returning what it returned: with an end where a trace was closed (once every process's
 * part is written, DIR/raw/written.R, past the wait limit, 30 s at most, a rank kept in the
 * shutdown says so and exits 0; util/finwatch.h). */
int trace_shutdown(int (*fin)(void));
/* MPI_Abort, before PMPI_Abort: records call c (if trace_enter took it; NULL: not) as ending
 * now, writes out the records still in memory and, if no process of the job has yet, says
 * in one line on stderr that the program aborted and where its records are. */
void trace_abort(struct trace_call *c, int errorcode);
/* Whether recording is on (between init and finalize). */
int trace_on(void);

#endif
