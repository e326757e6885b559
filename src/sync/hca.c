/*
 * hca.c - HCA (Hunold & Carpen-Amarie 2016): HCA2's tree for the slopes, then rank 0
 * measures a fresh offset to every process in turn and each process re-anchors its model's
 * intercept on it (COMPUTE_AND_SET_INTERCEPT). The extra pass makes it O(p).
 */
#include "sync/learn.h"
#include "sync/sync.h"

static int hca_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct learner *L = LEARNER(s);
	struct lm lm;
	struct bound bd;
	struct offset_sample smp = {0, 0, 0};
	int p;
	PMPI_Comm_size(comm, &p);
	offset_reset(L->oa);
	int rc = hca2_tree(s, L, comm, clk, &lm, &bd);
	s->rounds += (uint64_t)(p - 1);
	rc = first_err(rc, measure_all(s, L->oa, comm, clk, &smp));
	if (smp.rtt_ns > 0)
		sync_note_rtt(s, smp.rtt_ns);
	/* keep the tree's slope, re-anchor the intercept; the tree's bound moves with the line
	 * (the new line is the tree's shifted by delta at every time) */
	double delta = smp.offset_ns - (lm.intercept_ns +
	                                lm.slope * (double)diff_ns(smp.local_ns, lm.x0_ns));
	bd = bound_shift(&bd, delta);
	lm.x0_ns = smp.local_ns;
	lm.intercept_ns = smp.offset_ns;
	return finish_lm(comm, clk, &lm, &bd, rc, out);
}

static const struct sync_ops hca_ops = {
	.run = hca_run, .destroy = learning_sync_destroy, .explain = learning_sync_explain};

static int hca_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	return learning_sync_parse(ps, "hca", &hca_ops, out);
}

const struct sync_type sync_type_hca = {
	.name = "hca",
	.usage = "hca" LEARNER_ARGS,
	.help = "HCA: HCA2 plus an O(p) pass re-measuring every intercept",
	.parse = hca_parse,
};
