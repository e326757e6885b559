/* link.c - the ping-pong link over MPI (link.h). */
#include <unistd.h>

#include "clock/clock.h"
#include "transport/comm.h"
#include "transport/link.h"
#include "transport/yield.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

static int mpi_send(struct pp_link *l, int64_t t, int dest, int sync)
{
	if (sync)
		return comm_check(yield_ssend(&t, 1, MPI_INT64_T, dest, HCLOCK_TAG, l->comm),
		                  "MPI_Ssend (ping-pong)");
	return comm_check(PMPI_Send(&t, 1, MPI_INT64_T, dest, HCLOCK_TAG, l->comm),
	                  "MPI_Send (ping-pong)");
}

static int mpi_recv(struct pp_link *l, int src, int64_t *t)
{
	if (fault_hit(FAULT_FREEZE))
		for (;;) /* test hook: a peer that never answers */
			pause();
	return comm_check(yield_recv(t, 1, MPI_INT64_T, src, HCLOCK_TAG, l->comm),
	                  "MPI_Recv (ping-pong)");
}

static const struct link_ops mpi_link_ops = {.send = mpi_send, .recv = mpi_recv};

void pp_link_init(struct pp_link *l, MPI_Comm comm, int ref, int client, hclock_clock *clk,
                  uint64_t *pingpongs)
{
	l->ops = &mpi_link_ops;
	l->ctx = NULL;
	l->comm = comm;
	l->ref = ref;
	l->client = client;
	PMPI_Comm_rank(comm, &l->me);
	l->clk = clk;
	l->pingpongs = pingpongs;
	l->retakes = NULL;
	l->stall_ns = 0;
	l->rc = 0;
}

static void keep(struct pp_link *l, int rc)
{
	if (rc && !l->rc)
		l->rc = rc;
}

void pp_send(struct pp_link *l, int64_t t, int dest)
{
	clock_before_send(l->clk);
	keep(l, l->ops->send(l, t, dest, 0));
}

void pp_ssend(struct pp_link *l, int64_t t, int dest)
{
	clock_before_send(l->clk);
	keep(l, l->ops->send(l, t, dest, 1));
}

int64_t pp_recv(struct pp_link *l, int src)
{
	int64_t t = 0;
	int rc = l->ops->recv(l, src, &t);
	if (rc)
		t = 0;
	if (l->stall_ns > 0)
		real_sleep_ns(l->stall_ns);
	if (fault_hit(FAULT_EXCHANGE))
		rc = err_set(HCLOCK_EINJECTED, "injected fault (HCLOCK_FAULT) in a ping-pong with "
		             "rank %d", src);
	keep(l, rc);
	return t;
}

void pp_serve(struct pp_link *l, int n)
{
	for (int i = 0; i < n; i++) {
		pp_recv(l, l->client);
		pp_send(l, hclock_now(l->clk), l->client);
	}
}

void pp_count(struct pp_link *l, int n)
{
	if (l->pingpongs)
		*l->pingpongs += (uint64_t)n;
}
