/*
 * args.h - what the wrappers (calls.c for C, fcalls.c for Fortran) read from a call's
 * arguments for its record: bytes of a count of a datatype, counts summed, a communicator's
 * peers and this process's rank in it. PMPI_ calls only (never recorded).
 */
#ifndef HCLOCK_TRACE_ARGS_H
#define HCLOCK_TRACE_ARGS_H

#include <limits.h>
#include <stdint.h>

#include "util/pmpi.h"

static inline uint64_t type_size(MPI_Datatype type)
{
	int sz = 0;
	if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &sz) != MPI_SUCCESS || sz < 0)
		return 0;
	return (uint64_t)sz;
}

static inline uint64_t nbytes(int count, MPI_Datatype type)
{
	return count > 0 ? (uint64_t)count * type_size(type) : 0;
}

/* the elements of counts[0..n) together */
static inline int64_t sum(const int counts[], int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		s += counts[i] > 0 ? counts[i] : 0;
	return s;
}

/* the processes a rank of comm exchanges with in a collective (the remote group's size on an
 * intercommunicator) */
static inline int peers(MPI_Comm comm)
{
	int inter = 0, n = 0;
	PMPI_Comm_test_inter(comm, &inter);
	if (inter)
		PMPI_Comm_remote_size(comm, &n);
	else
		PMPI_Comm_size(comm, &n);
	return n;
}

static inline int my_rank(MPI_Comm comm)
{
	int r = 0;
	PMPI_Comm_rank(comm, &r);
	return r;
}

/* a count of elements as an int (the v-variants' sums) */
static inline int clamp(int64_t n)
{
	return n < INT_MAX ? (int)n : INT_MAX;
}

#endif
