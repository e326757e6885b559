/*
 * fcalls_f08.c - fcalls.c's hand-written wrappers once more, as f8w_NAME, for the mpi_f08
 * entries that reach no other wrapper (gen_fortran.py lists them; its f8_NAME, exported
 * under the entry's name, calls f8w_NAME with an IERROR that is never NULL): they forward to
 * the library's PMPI mpi_f08 entry (pmpi_name_f08_; MPICH: pmpir_name_f08_). The handles,
 * statuses and LOGICALs of mpi_f08 are those of mpif.h in memory (an INTEGER in a derived
 * type, MPI_Status as the INTEGER array), so the same code reads them.
 */
#define FORTRAN_F08 1
#include "trace/fcalls.c"
