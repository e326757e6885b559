/*
 * jk.c - JK (Jones & Koenig): the reference learns a linear model with every client in
 * turn, p - 1 sequential rounds (O(p)), each client against the reference's own clock.
 */
#include "sync/learn.h"
#include "sync/sync.h"

static int jk_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct learner *L = LEARNER(s);
	int p, r, rc = 0;
	struct lm lm = {0, 0, 0};
	struct bound bd = bound_unknown();
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &r);
	offset_reset(L->oa);
	s->rounds = (uint64_t)(p - 1);
	s->parent = r ? 0 : -1;
	for (int c = 1; c < p; c++) /* the root serves every client, whatever failed before */
		if (r == 0 || r == c)
			rc = first_err(rc, learn_model(s, L, comm, 0, c, clk, 1, &lm, &bd));
	return finish_lm(comm, clk, &lm, &bd, rc, out);
}

static const struct sync_ops jk_ops = {
	.run = jk_run, .destroy = learning_sync_destroy, .explain = learning_sync_explain};

static int jk_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	return learning_sync_parse(ps, "jk", &jk_ops, out);
}

const struct sync_type sync_type_jk = {
	.name = "jk",
	.usage = "jk" LEARNER_ARGS,
	.help = "Jones & Koenig: the root learns a model with every client in turn, O(p)",
	.parse = jk_parse,
};
