/* subsets.c - the process counts of a sweep and their communicators (subsets.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/subsets.h"
#include "bench/scheme.h"
#include "transport/comm.h"
#include "transport/topo.h"
#include "util/err.h"
#include "util/parse.h"

int bench_placement_parse(const char *s, enum bench_placement *p)
{
	if (!strcmp(s, "packed"))
		*p = PLACE_PACKED;
	else if (!strcmp(s, "spread"))
		*p = PLACE_SPREAD;
	else
		return -1;
	return 0;
}

const char *bench_placement_name(enum bench_placement p)
{
	return p == PLACE_SPREAD ? "spread" : "packed";
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return (x > y) - (x < y);
}

int bench_counts_parse(const char *list, int nprocs, int **counts, int *n)
{
	int *c = malloc(((list ? strlen(list) : 64) + 2) * sizeof(*c)), k = 0;

	if (!c)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	if (!list) {
		for (int p = 2; p < nprocs; p *= 2)
			c[k++] = p;
		c[k++] = nprocs;
	} else {
		const char *s = list;
		while (*s) {
			size_t len = strcspn(s, ",");
			long v;
			char item[32];
			if (!len || len >= sizeof(item)) {
				free(c);
				return err_set(HCLOCK_EINVAL, "--nprocs needs a comma list of process counts "
				               "from 1 to %d, e.g. 2,4,%d", nprocs, nprocs);
			}
			memcpy(item, s, len);
			item[len] = 0;
			if (parse_int_str(item, 1, nprocs, &v)) {
				free(c);
				return err_set(HCLOCK_EINVAL, "--nprocs: '%s' is no process count from 1 to "
				               "%d (the processes started)", item, nprocs);
			}
			c[k++] = (int)v;
			s += len;
			if (*s == ',' && !*++s) {
				free(c);
				return err_set(HCLOCK_EINVAL, "--nprocs needs a comma list of process counts "
				               "from 1 to %d, e.g. 2,4,%d", nprocs, nprocs);
			}
		}
		if (!k) {
			free(c);
			return err_set(HCLOCK_EINVAL, "--nprocs needs a comma list of process counts from "
			               "1 to %d, e.g. 2,4,%d", nprocs, nprocs);
		}
		qsort(c, (size_t)k, sizeof(*c), cmp_int);
		int m = 0;
		for (int i = 0; i < k; i++)
			if (!m || c[m - 1] != c[i])
				c[m++] = c[i];
		k = m;
	}
	*counts = c;
	*n = k;
	return 0;
}

/* This process's place in the placement order, and the node index (nodes by their lowest
 * world rank) of every place in *node_of_pos (malloc'd). Collective over world. */
static int place(MPI_Comm world, hclock_clock *clk, enum bench_placement p, int *pos,
                 int **node_of_pos)
{
	MPI_Comm node;
	int me[2], rank, size, rc = topo_split_node(world, clk, &node), *all = NULL, *ord = NULL;
	int *nodes = NULL, nn = 0;

	PMPI_Comm_rank(world, &rank);
	PMPI_Comm_size(world, &size);
	if (rc)
		return rc;
	/* (lowest world rank of my node, my rank in it) */
	me[0] = rank;
	PMPI_Comm_rank(node, &me[1]);
	PMPI_Allreduce(MPI_IN_PLACE, &me[0], 1, MPI_INT, MPI_MIN, node);
	PMPI_Comm_free(&node);
	all = malloc(2 * (size_t)size * sizeof(*all));
	ord = malloc((size_t)size * sizeof(*ord));
	nodes = malloc((size_t)size * sizeof(*nodes));
	rc = comm_agree(world, all && ord && nodes ? 0 : err_set(HCLOCK_ENOMEM, "out of memory"));
	if (!rc)
		rc = comm_check(PMPI_Allgather(me, 2, MPI_INT, all, 2, MPI_INT, world), "MPI_Allgather");
	if (!rc) {
		/* node index: order of the nodes' lowest world ranks */
		for (int r = 0; r < size; r++) {
			int k = 0;
			while (k < nn && nodes[k] != all[2 * r])
				k++;
			if (k == nn)
				nodes[nn++] = all[2 * r];
		}
		qsort(nodes, (size_t)nn, sizeof(*nodes), cmp_int);
		for (int r = 0; r < size; r++) {
			int k = 0;
			while (nodes[k] != all[2 * r])
				k++;
			all[2 * r] = k; /* node index */
		}
		/* the order: packed by (node, local rank), spread by (local rank, node): sorted by
		 * (major * size + minor) * size + world rank */
		unsigned long long *key = malloc((size_t)size * sizeof(*key));
		if (!key) {
			rc = err_set(HCLOCK_ENOMEM, "out of memory");
			goto out;
		}
		for (int k = 0; k < size; k++) {
			unsigned long long node_k = (unsigned)all[2 * k], local_k = (unsigned)all[2 * k + 1];
			key[k] = ((p == PLACE_PACKED ? node_k * (unsigned)size + local_k
			                             : local_k * (unsigned)size + node_k) *
			          (unsigned)size) + (unsigned)k;
		}
		qsort(key, (size_t)size, sizeof(*key), cmp_ull);
		for (int k = 0; k < size; k++)
			ord[k] = (int)(key[k] % (unsigned)size);
		free(key);
		for (int k = 0; k < size; k++)
			if (ord[k] == rank)
				*pos = k;
		for (int k = 0; k < size; k++)
			nodes[k] = all[2 * ord[k]];
		*node_of_pos = nodes;
		nodes = NULL;
	}
out:
	free(all);
	free(ord);
	free(nodes);
	return rc;
}

int bench_subsets_create(MPI_Comm world, hclock_clock *clk, enum bench_placement p,
                         const int *counts, int n, struct bench_subset *out)
{
	int pos = 0, *node_of = NULL, rc;

	for (int i = 0; i < n; i++)
		out[i] = (struct bench_subset){counts[i], MPI_COMM_NULL, 0};
	rc = comm_agree(world, place(world, clk, p, &pos, &node_of));
	for (int i = 0; !rc && i < n; i++) {
		MPI_Comm sub = MPI_COMM_NULL;
		int in = pos < counts[i], lrc;
		/* the nodes the first counts[i] processes span */
		for (int k = 0; k < counts[i]; k++) {
			int seen = 0;
			for (int j = 0; j < k; j++)
				seen |= node_of[j] == node_of[k];
			out[i].nodes += !seen;
		}
		lrc = comm_check(PMPI_Comm_split(world, in ? 0 : MPI_UNDEFINED, pos, &sub),
		                 "MPI_Comm_split (a subset)");
		if (!lrc && in) {
			lrc = bench_comm_create(sub, &out[i].comm);
			PMPI_Comm_free(&sub);
		}
		rc = comm_agree(world, lrc);
	}
	free(node_of);
	if (rc)
		bench_subsets_free(out, n);
	return rc;
}

void bench_subsets_free(struct bench_subset *s, int n)
{
	for (int i = 0; i < n; i++)
		if (s[i].comm != MPI_COMM_NULL)
			PMPI_Comm_free(&s[i].comm);
}

int bench_subsets_join(MPI_Comm world, int rc, int member)
{
	int out = 0, done = 0;
	MPI_Request q;

	if (PMPI_Iallreduce(&rc, &out, 1, MPI_INT, MPI_MIN, world, &q) != MPI_SUCCESS)
		return err_set(HCLOCK_EMPI, "MPI_Iallreduce failed joining the processes");
	if (member) {
		PMPI_Wait(&q, MPI_STATUS_IGNORE);
	} else {
		struct timespec ts = {0, 200000};
		while (PMPI_Test(&q, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
			nanosleep(&ts, NULL);
	}
	if (out && !rc)
		return err_set(out, "a process of the subset failed");
	return out;
}
