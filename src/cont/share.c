/* share.c - followers read their leader's continuous clock (cont/share.h). */
#include "cont/share.h"
#include "transport/comm.h"
#include "transport/yield.h"
#include "util/err.h"

/* the process whose clock r's follows (itself unless it shares) */
static int source_of(const int *tree, int r)
{
	int hops = 0;
	while (tree[2 * r + 1] && tree[2 * r] >= 0 && hops++ < 64)
		r = tree[2 * r];
	return r;
}

int share_create(MPI_Comm comm, const int *tree, struct share *sh)
{
	int p, rank, n = 0;
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &rank);
	int src = source_of(tree, rank);
	for (int r = 0; r < p; r++)
		n += source_of(tree, r) == src;
	*sh = (struct share){MPI_COMM_NULL, MPI_WIN_NULL, NULL};
	if (PMPI_Comm_split(comm, n > 1 ? src : MPI_UNDEFINED, rank == src ? 0 : 1 + rank,
	                    &sh->comm) != MPI_SUCCESS)
		return err_set(HCLOCK_EMPI, "MPI_Comm_split (continuous clock) failed");
	if (sh->comm == MPI_COMM_NULL)
		return 0;
	MPI_Comm node;
	int nn = 0;
	PMPI_Comm_split_type(sh->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	PMPI_Comm_size(node, &nn);
	PMPI_Comm_free(&node);
	if (nn != n)
		return err_set(HCLOCK_EUNSUPP, "cont(...): the processes that copy a clock with prop "
		               "must share memory with the process they copy it from (their clock "
		               "reads its model there); %d of %d do: use a sync algorithm instead of "
		               "prop for the lower level", nn, n);
	MPI_Aint size = rank == src ? (MPI_Aint)cont_state_size() : 0;
	void *ptr = NULL;
	int rc = comm_check(PMPI_Win_allocate_shared(size, 8, MPI_INFO_NULL, sh->comm, &ptr,
	                                             &sh->win), "MPI_Win_allocate_shared");
	if (rc)
		return rc;
	MPI_Aint qs;
	int du;
	rc = comm_check(PMPI_Win_shared_query(sh->win, 0, &qs, &du, &ptr),
	                "MPI_Win_shared_query");
	sh->state = ptr;
	return rc;
}

/* a barrier with an end (transport/yield.h) */
static void barrier(MPI_Comm comm, const char *what)
{
	MPI_Request r;
	if (PMPI_Ibarrier(comm, &r) == MPI_SUCCESS)
		yield_pwait_on(&r, what, -1, MPI_COMM_NULL);
}

void share_freeze(struct share *sh, hclock_clock *clk)
{
	if (sh->comm == MPI_COMM_NULL)
		return;
	int sr;
	PMPI_Comm_rank(sh->comm, &sr);
	if (sr == 0)
		cont_state_set_status(sh->state, HCLOCK_BOUNDS_FROZEN);
	barrier(sh->comm, "MPI_Barrier before the continuous clock's followers copy it");
	cont_clock_own_copy(clk);
	barrier(sh->comm, "MPI_Barrier after the continuous clock's followers copied it");
}

void share_free(struct share *sh)
{
	if (sh->win != MPI_WIN_NULL)
		PMPI_Win_free(&sh->win);
	if (sh->comm != MPI_COMM_NULL)
		PMPI_Comm_free(&sh->comm);
	sh->state = NULL;
}
