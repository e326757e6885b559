/*
 * hca.c - HCA (Hunold & Carpen-Amarie 2016): HCA2's tree for the slopes, then rank 0
 * measures a fresh offset to every process in turn and each process re-anchors its model's
 * intercept on it (COMPUTE_AND_SET_INTERCEPT). The extra pass makes it O(p).
 */
#include "sync/sync.h"

static int hca_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct learner *L = LEARNER(s);
	struct lm lm;
	struct offset_sample smp;
	int p;
	MPI_Comm_size(comm, &p);
	offset_reset(L->oa);
	int rc = hca2_tree(s, L, comm, clk, &lm), m;
	s->rounds += (uint64_t)(p - 1);
	m = measure_all(s, L->oa, comm, clk, &smp);
	if (rc || (rc = m))
		return rc;
	lm.x0_ns = smp.local_ns; /* keep the tree's slope, re-anchor the intercept */
	lm.intercept_ns = smp.offset_ns;
	return finish_lm(comm, clk, &lm, out);
}

static const struct sync_ops hca_ops = {.name = "hca", .run = hca_run, .destroy = learning_sync_destroy};

int sync_hca_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	return learning_sync_create(sp, &hca_ops, out);
}
