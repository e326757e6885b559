/*
 * subsets.h - the process counts of a sweep (hclock bench --nprocs / --subsets): for each
 * count P a communicator of the first P processes in placement order, the others waiting.
 *
 * Placement: the processes are ordered by node (the clock's nodes where it defines them, the
 * emulation's virtual nodes, else MPI_COMM_TYPE_SHARED: transport/topo.h), nodes by their
 * lowest world rank, and within a node by world rank. packed takes every process of the first
 * node, then of the next (latency as a job filling nodes sees it); spread takes the first
 * process of every node, then the second of every node, ... (as many nodes as possible).
 * World rank 0 comes first in both, so it is rank 0 of every subset.
 */
#ifndef HCLOCK_BENCH_SUBSETS_H
#define HCLOCK_BENCH_SUBSETS_H

#include "util/pmpi.h"

#include "hclock.h"

enum bench_placement { PLACE_PACKED, PLACE_SPREAD };

struct bench_subset {
	int nprocs;    /* processes measured on */
	MPI_Comm comm; /* their communicator (errors return), MPI_COMM_NULL where this process is
	                  not one of them */
	int nodes;     /* nodes they span */
};

/* "packed" / "spread" -> *p: 0, or -1 for another name. */
int bench_placement_parse(const char *s, enum bench_placement *p);
const char *bench_placement_name(enum bench_placement p);

/*
 * A count list for nprocs processes: "2,4,8" (each 1..nprocs; sorted, duplicates dropped) or,
 * with list NULL, the powers of two from 2 below nprocs and nprocs itself (IMB's -npmin 2
 * doubling). *counts malloc'd, *n its length. 0, HCLOCK_EINVAL (hclock_last_error() says what
 * is wrong and what is right) or HCLOCK_ENOMEM. No MPI.
 */
int bench_counts_parse(const char *list, int nprocs, int **counts, int *n);

/*
 * Collective over world: one subset per count (out[i] for counts[i]) in placement p, nodes by
 * clk (its virtual nodes where it has them, else the real ones). 0, or the first failing rank's code and line on every rank.
 */
int bench_subsets_create(MPI_Comm world, hclock_clock *clk, enum bench_placement p,
                         const int *counts, int n, struct bench_subset *out);
void bench_subsets_free(struct bench_subset *s, int n);

/*
 * Collective over world after a subset's measurement: the members' rc (the lowest) on every
 * process; the others wait for it sleeping (200 us between polls), so they take little of the
 * cores the members measure on.
 */
int bench_subsets_join(MPI_Comm world, int rc, int member);

#endif
