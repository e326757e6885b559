/*
 * hier.c - hierarchical sync H2HCA / H3HCA (Hunold & Carpen-Amarie, Alg. 4 and Sec. IV-D).
 * h2(INTER,INTRA): one process per node synchronizes with INTER; then each node's other
 * processes synchronize to it with INTRA, whose input clock is the node leader's global
 * clock (the models nest). h3(INTER,SOCKET,INTRA) adds a level of one process per socket.
 * The level communicators are created once per run, before the first level, and freed at
 * its end: their cost counts in the sync duration, as in the paper, and nothing of size p
 * stays allocated between runs (at 16,384 simulated ranks a kept communicator costs GiBs).
 * After every level all ranks agree on success, so a failing level (e.g. prop refused)
 * makes every rank return the error and none waits for a leader that gave up.
 */
#include <stdlib.h>

#include "emulate/emu.h"
#include "mpi/topo.h"
#include "mpi/yield.h"
#include "sync/sync.h"
#include "util/err.h"

struct hier {
	struct hclock_sync s;
	int nlevels;
	struct hclock_sync *level[3]; /* outermost (inter-node) first */
	MPI_Comm comm[3];             /* per level; MPI_COMM_NULL where this process is absent */
	MPI_Comm node, socket;        /* kept to be freed */
};

static void free_comms(struct hier *h)
{
	MPI_Comm *all[] = {&h->comm[0], &h->comm[1], &h->comm[2], &h->node, &h->socket};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (*all[i] != MPI_COMM_NULL) {
			int fin;
			MPI_Finalized(&fin);
			if (!fin)
				MPI_Comm_free(all[i]);
			*all[i] = MPI_COMM_NULL;
		}
}

static int make_comms(struct hier *h, MPI_Comm comm, hclock_emu *emu)
{
	int rc;
	if ((rc = topo_split_node(comm, emu, &h->node)))
		return rc;
	if ((rc = topo_leaders(comm, h->node, &h->comm[0])))
		return rc;
	if (h->nlevels == 2) { /* the intra level is the node communicator itself */
		h->comm[1] = h->node;
		h->node = MPI_COMM_NULL;
		return 0;
	}
	if ((rc = topo_split_socket(h->node, emu, &h->socket)))
		return rc;
	if ((rc = topo_leaders(h->node, h->socket, &h->comm[1])))
		return rc;
	h->comm[2] = h->socket;
	h->socket = MPI_COMM_NULL;
	return 0;
}

static int hier_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct hier *h = (struct hier *)s;
	hclock_clock *g = hclock_clock_ref(clk);
	int rc = make_comms(h, comm, emu_of_clock(clk)), all;
	yield_allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
	for (int i = 0; i < h->nlevels && !all; i++) {
		int size = 0;
		uint64_t rounds = 0;
		if (h->comm[i] != MPI_COMM_NULL)
			MPI_Comm_size(h->comm[i], &size);
		if (size > 1) {
			hclock_clock *next = NULL;
			rc = sync_run(h->level[i], h->comm[i], g, &next);
			s->pingpongs += h->level[i]->pingpongs;
			rounds = h->level[i]->rounds;
			hclock_clock_free(g);
			g = next;
		}
		/* one collective: the level's schedule length (the longest among its groups) and
		 * the worst error code of any rank */
		int64_t mine[2] = {(int64_t)rounds, -(int64_t)rc}, worst[2];
		yield_allreduce(mine, worst, 2, MPI_INT64_T, MPI_MAX, comm);
		s->rounds += (uint64_t)worst[0];
		all = -(int)worst[1];
	}
	free_comms(h);
	if (all) {
		if (!rc && all != HCLOCK_ESHARE) /* prop set the same message on every rank */
			err_set(all, "hierarchical sync failed on another rank: %s", hclock_strerror(all));
		hclock_clock_free(g);
		return all;
	}
	*out = g;
	return 0;
}

static void hier_destroy(struct hclock_sync *s)
{
	struct hier *h = (struct hier *)s;
	for (int i = 0; i < h->nlevels; i++)
		hclock_sync_free(h->level[i]);
	free_comms(h);
	free(h);
}

static const struct sync_ops hier_ops = {.name = "hier", .run = hier_run, .destroy = hier_destroy};

int sync_hier_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	struct hier *h = calloc(1, sizeof(*h));
	if (!h)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	h->s.ops = &hier_ops;
	h->nlevels = sp->nlevels;
	h->node = h->socket = MPI_COMM_NULL;
	for (int i = 0; i < 3; i++)
		h->comm[i] = MPI_COMM_NULL;
	if (sp->level[0]->kind == SYNC_PROP) {
		free(h);
		return err_set(HCLOCK_EINVAL, "sync spec: prop cannot be the inter-node level of %s(...): "
		               "the node leaders do not share a clock; use e.g. hca3/100/skampi/20 there",
		               sp->kind == SYNC_H2 ? "h2" : "h3");
	}
	for (int i = 0; i < h->nlevels; i++) {
		int rc = sync_create(sp->level[i], &h->level[i]);
		if (rc) {
			hier_destroy(&h->s);
			return rc;
		}
	}
	*out = &h->s;
	return 0;
}
