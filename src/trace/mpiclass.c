/* mpiclass.c - what an MPI function's name says (mpiclass.h). */
#define _GNU_SOURCE
#include <string.h>
#include <strings.h>

#include "trace/mpiclass.h"

static int among(const char *n, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(n, *list))
			return 1;
	return 0;
}

struct mpiclass mpiclass_of(const char *name)
{
	static const char *const blocking_sends[] = {"MPI_Send", "MPI_Ssend", "MPI_Rsend",
	                                             "MPI_Sendrecv", "MPI_Sendrecv_replace", NULL};
	static const char *const posting_recvs[] = {"MPI_Recv", "MPI_Sendrecv",
	                                            "MPI_Sendrecv_replace", NULL};
	static const struct {
		const char *name;
		enum waits_coll_kind kind;
	} colls[] = {{"allreduce", WAITS_COLL_NXN}, {"alltoall", WAITS_COLL_NXN},
	             {"alltoallv", WAITS_COLL_NXN}, {"alltoallw", WAITS_COLL_NXN},
	             {"allgather", WAITS_COLL_NXN}, {"allgatherv", WAITS_COLL_NXN},
	             {"reduce_scatter", WAITS_COLL_NXN}, {"reduce_scatter_block", WAITS_COLL_NXN},
	             {"barrier", WAITS_COLL_BARRIER}, {"bcast", WAITS_COLL_1TON},
	             {"scatter", WAITS_COLL_1TON}, {"scatterv", WAITS_COLL_1TON},
	             {"reduce", WAITS_COLL_NTO1}, {"gather", WAITS_COLL_NTO1},
	             {"gatherv", WAITS_COLL_NTO1}};
	struct mpiclass c = {.blocking_send = among(name, blocking_sends),
	                     .synchronous = !strcmp(name, "MPI_Ssend"),
	                     .posting_recv = among(name, posting_recvs),
	                     .coll = WAITS_COLL_OTHER};
	if (!strncmp(name, "MPI_", 4)) {
		const char *n = name + 4;
		for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++) {
			if (!strcasecmp(n, colls[i].name))
				c.coll = colls[i].kind;
			else if ((n[0] == 'I' || n[0] == 'i') && !strcasecmp(n + 1, colls[i].name))
				c.coll = colls[i].kind, c.istart = 1; /* MPI_Iallreduce */
		}
		c.bounds = c.coll != WAITS_COLL_OTHER || strcasestr(n, "send") ||
		           strcasestr(n, "recv") || !strncmp(n, "Wait", 4) || !strncmp(n, "Test", 4) ||
		           !strncmp(n, "Start", 5);
	}
	return c;
}
