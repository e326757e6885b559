/*
 * pmpi.h - the one door of the library's own MPI traffic.
 *
 * Every MPI call the library makes (src/ below tools/) is a PMPI_* call, and every file that
 * makes one includes this header instead of <mpi.h>. So a profiling tool linked with the
 * program (hclock's own tracer, libhclock_trace, or any other PMPI tool) never sees the
 * clock's ping-pongs, exchanges and set-up as the program's calls, without a flag to set by
 * hand around each of them.
 *
 * The one exception is what the library does on the user's behalf: the collectives that
 * `hclock bench` measures are the operation under test, and a tool the user attached should
 * see them as the program's calls. Those are written MPI_USER(Bcast)(...), which is the
 * plain MPI_Bcast, named so that it is a choice and not a slip.
 *
 * scripts/check-layers fails on a bare MPI_Xxx( call below tools/ and on an <mpi.h>
 * included anywhere there but here.
 */
#ifndef HCLOCK_UTIL_PMPI_H
#define HCLOCK_UTIL_PMPI_H

#include <mpi.h>

/* the user-visible MPI_<name>: an operation done for the user (bench's measured calls) */
#define MPI_USER(name) MPI_##name

#endif
