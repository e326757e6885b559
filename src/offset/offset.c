/* offset.c - the offset estimator family's factory and the ping-pong message primitives. */
#include <stdlib.h>
#include <string.h>

#include "emulate/emu.h"
#include "mpi/yield.h"
#include "offset/offset.h"
#include "util/err.h"

int offset_create(const char *name, int nexchanges, struct offset_alg **out)
{
	int rc;
	*out = NULL;
	if (nexchanges < 1)
		return err_set(HCLOCK_EINVAL, "offset algorithm needs at least 1 ping-pong, got %d",
		               nexchanges);
	if (!strcmp(name, "skampi"))
		rc = offset_skampi_create(out);
	else if (!strcmp(name, "rtt"))
		rc = offset_rtt_create(out);
	else if (!strcmp(name, "min"))
		rc = offset_min_create(out);
	else
		return err_set(HCLOCK_EINVAL, "unknown offset algorithm '%s'; expected skampi, rtt or min",
		               name);
	if (!rc)
		(*out)->nexchanges = nexchanges;
	return rc;
}

void offset_reset(struct offset_alg *a)
{
	if (a && a->ops->reset)
		a->ops->reset(a);
}

void offset_destroy(struct offset_alg *a)
{
	if (!a)
		return;
	if (a->ops->destroy)
		a->ops->destroy(a);
	else
		free(a);
}

void pp_link_init(struct pp_link *l, MPI_Comm comm, int ref, int client, hclock_clock *clk,
                  uint64_t *pingpongs)
{
	l->comm = comm;
	l->ref = ref;
	l->client = client;
	MPI_Comm_rank(comm, &l->me);
	l->clk = clk;
	l->emu = emu_of_clock(clk);
	l->pingpongs = pingpongs;
}

void pp_send(const struct pp_link *l, int64_t t, int dest)
{
	emu_jitter(l->emu);
	MPI_Send(&t, 1, MPI_INT64_T, dest, HCLOCK_TAG, l->comm);
}

void pp_ssend(const struct pp_link *l, int64_t t, int dest)
{
	emu_jitter(l->emu);
	yield_ssend(&t, 1, MPI_INT64_T, dest, HCLOCK_TAG, l->comm);
}

int64_t pp_recv(const struct pp_link *l, int src)
{
	int64_t t;
	yield_recv(&t, 1, MPI_INT64_T, src, HCLOCK_TAG, l->comm);
	return t;
}

void pp_serve(const struct pp_link *l, int n)
{
	for (int i = 0; i < n; i++) {
		pp_recv(l, l->client);
		pp_send(l, hclock_now(l->clk), l->client);
	}
}
