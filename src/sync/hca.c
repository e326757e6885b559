/*
 * hca.c - HCA (Hunold & Carpen-Amarie 2016): HCA2's tree for the slopes, then rank 0
 * measures a fresh offset to every process in turn and each process re-anchors its model's
 * intercept on it (COMPUTE_AND_SET_INTERCEPT). The extra pass makes it O(p).
 */
#include <stdlib.h>

#include "sync/sync.h"
#include "util/err.h"

struct hca {
	struct hclock_sync s;
	struct learner L;
};

static int hca_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct hca *h = (struct hca *)s;
	struct lm lm;
	struct offset_sample smp;
	int p, r;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	offset_reset(h->L.oa);
	int rc = hca2_tree(s, &h->L, comm, clk, &lm);
	s->rounds += (uint64_t)(p - 1);
	for (int c = 1; c < p; c++) {
		if (r != 0 && r != c)
			continue;
		int m = measure_pair(s, h->L.oa, comm, 0, c, clk, &smp);
		if (!rc)
			rc = m;
		if (r == c) {
			lm.x0_ns = smp.local_ns;
			lm.intercept_ns = smp.offset_ns;
		}
	}
	if (rc)
		return rc;
	if (r == 0) {
		*out = hclock_clock_ref(clk);
		return 0;
	}
	return clock_from_lm(clk, &lm, out);
}

static void hca_destroy(struct hclock_sync *s)
{
	struct hca *h = (struct hca *)s;
	learner_fini(&h->L);
	free(h);
}

static const struct sync_ops hca_ops = {.name = "hca", .run = hca_run, .destroy = hca_destroy};

int sync_hca_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	struct hca *h = calloc(1, sizeof(*h));
	if (!h)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	h->s.ops = &hca_ops;
	int rc = learner_init(&h->L, sp);
	if (rc) {
		free(h);
		return rc;
	}
	*out = &h->s;
	return 0;
}
