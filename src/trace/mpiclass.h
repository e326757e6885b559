/*
 * mpiclass.h - what an MPI function's name says to the wait-state analysis: whether it sends
 * (and blocks until the buffer is free, or until the receive is posted), receives with the
 * post at its enter, completes requests, is a collective and of which kind (waits.h). One
 * classifier for the tracer (which calls record their bounds) and the analysis of the
 * records (waitstate.c). MPI-free: names only.
 */
#ifndef HCLOCK_TRACE_MPICLASS_H
#define HCLOCK_TRACE_MPICLASS_H

#include "waits/waits.h"

struct mpiclass {
	unsigned blocking_send : 1; /* MPI_Send, Ssend, Rsend, Sendrecv(_replace) */
	unsigned synchronous : 1;   /* MPI_Ssend */
	unsigned posting_recv : 1;  /* a blocking receive: posted at its enter */
	unsigned istart : 1;        /* the start of a nonblocking collective of a known kind */
	unsigned bounds : 1;        /* the analysis uses its bounds: it sends, receives, completes
	                               a request or is a collective of a known kind */
	enum waits_coll_kind coll;  /* its collective kind (WAITS_COLL_OTHER: none known) */
};

/* The class of the function name (e.g. "MPI_Iallreduce"). */
struct mpiclass mpiclass_of(const char *name);

#endif
