/*
 * jk.c - JK (Jones & Koenig): the reference learns a linear model with every client in
 * turn, p - 1 sequential rounds (O(p)), each client against the reference's own clock.
 */
#include "sync/sync.h"

static int jk_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct learner *L = LEARNER(s);
	int p, r, rc = 0;
	struct lm lm;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	offset_reset(L->oa);
	s->rounds = (uint64_t)(p - 1);
	for (int c = 1; c < p && !rc; c++)
		if (r == 0 || r == c)
			rc = learn_model(s, L, comm, 0, c, clk, &lm);
	return rc ? rc : finish_lm(comm, clk, &lm, out);
}

static const struct sync_ops jk_ops = {.name = "jk", .run = jk_run, .destroy = learning_sync_destroy};

int sync_jk_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	return learning_sync_create(sp, &jk_ops, out);
}
