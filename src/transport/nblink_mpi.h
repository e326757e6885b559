/*
 * nblink_mpi.h - the continuous clock's link over MPI (transport/nblink.h): PMPI_* calls
 * only, on a duplicate of the run's communicator that the link owns.
 */
#ifndef HCLOCK_TRANSPORT_NBLINK_MPI_H
#define HCLOCK_TRANSPORT_NBLINK_MPI_H

#include "util/pmpi.h"

#include "transport/nblink.h"

/*
 * Collective over comm (the run's private communicator, which stays the caller's): a link
 * on a duplicate of comm, with MPI_ERRORS_RETURN (hclock's messages have it to themselves;
 * nblink_close frees it). 0, HCLOCK_ENOMEM or HCLOCK_EMPI, agreed: every rank returns the
 * same and *out is NULL on failure.
 */
int nblink_mpi_create(MPI_Comm comm, struct nblink **out);

#endif
