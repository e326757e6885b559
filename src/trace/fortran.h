/*
 * fortran.h - libhclock_trace's Fortran wrappers: the hand-written ones (fcalls.c) and the
 * generated ones (trace_fwrappers.c, by gen_fortran.py).
 *
 * A wrapper is defined once as fw_NAME (NAME: the function's name in lower case without
 * "MPI_": fw_send) and exported under each Fortran symbol the MPI library defines for it
 * (FNAMES_NAME in trace_fnames.h: mpi_send_, mpi_send, mpi_send__, MPI_SEND, and Open MPI's
 * ompi_send_f, which its mpi_f08 library calls). It records the call through the C
 * wrappers' runtime (tracer.h, requests.h), reading the arguments it needs with the
 * MPI_*_f2c functions, and forwards the call to the library's own PMPI Fortran entry
 * (pmpi_send_, looked up at the first call) with the program's arguments unchanged. An
 * mpi_f08 entry that reaches no other wrapper gets its own, f8_NAME (gen_fortran.py).
 *
 * The generated wrappers only record enter and leave: they forward the call's words as they
 * came. Every argument of a Fortran MPI binding is an address (mpif.h and `use mpi` pass
 * everything by reference) or a hidden string length (a size_t after the other arguments),
 * all passed alike by the x86-64 and AArch64 calling conventions, so a wrapper taking
 * N words and passing them on in the same order hands the callee exactly what it was given
 * when N is at least the call's count: the C prototype's parameters, IERROR, one length per
 * string, and two more (gen_fortran.py's SLACK; the surplus words are not read).
 */
#ifndef HCLOCK_TRACE_FORTRAN_H
#define HCLOCK_TRACE_FORTRAN_H

#include "util/pmpi.h"

#include "trace/tracer.h"
#include "trace_fnames.h"

/* a PMPI Fortran entry, called with the wrapper's arguments (a subroutine: no result) */
typedef void (*fortran_proc)();
/* the library's entry for function i (fortran_fwd_names[i]), looked up once; a missing one
 * ends the program with one line (the wrapper exists only if the library defines it) */
fortran_proc fortran_fwd(enum fortran_fwd i);

#define FWD(NAME) fortran_fwd(FP_##NAME)
#define W void *
/* the symbol S, a name of wrapper f */
#define FALIAS(f, S) extern __typeof__(f) S __attribute__((alias(#f)));

/* MPI_STATUS_SIZE, in MPI_Fint */
#ifdef MPI_F_STATUS_SIZE
#define FSTATUS MPI_F_STATUS_SIZE
#else
#define FSTATUS ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#endif

/* whether p is the Fortran MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE, MPI_IN_PLACE (the
 * addresses of the library's Fortran sentinels) */
int fortran_status_ignore(const void *p);
int fortran_statuses_ignore(const void *p);
int fortran_in_place(const void *p);
/* the base of the indices the library's mpi_f08 MPI_Waitany, MPI_Waitsome, MPI_Testany and
 * MPI_Testsome return: 1, as the standard says; 0 for MPICH 4.0 */
int fortran_f08_index_base(void);

#endif
