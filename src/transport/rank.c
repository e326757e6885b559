/* rank.c - a rank of a communicator as a rank of MPI_COMM_WORLD (rank.h). */
#include "transport/rank.h"

int comm_world_rank(MPI_Comm comm, int r)
{
	MPI_Group g, w;
	int out = r;
	if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
		return r;
	if (PMPI_Comm_group(MPI_COMM_WORLD, &w) == MPI_SUCCESS) {
		if (PMPI_Group_translate_ranks(g, 1, &r, w, &out) != MPI_SUCCESS || out == MPI_UNDEFINED)
			out = r;
		PMPI_Group_free(&w);
	}
	PMPI_Group_free(&g);
	return out;
}
