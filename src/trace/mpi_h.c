/* mpi_h.c - run through the preprocessor at build time: what this MPI library's mpi.h
 * declares is what gen_wrappers.py wraps. */
#include <mpi.h>
