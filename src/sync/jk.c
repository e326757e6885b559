/*
 * jk.c - JK (Jones & Koenig): the reference learns a linear model with every client in
 * turn, p - 1 sequential rounds (O(p)), each client against the reference's own clock.
 */
#include <stdlib.h>

#include "sync/sync.h"
#include "util/err.h"

struct jk {
	struct hclock_sync s;
	struct learner L;
};

static int jk_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct jk *j = (struct jk *)s;
	int p, r, rc = 0;
	struct lm lm;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	offset_reset(j->L.oa);
	s->rounds = (uint64_t)(p - 1);
	if (r == 0) {
		for (int c = 1; c < p && !rc; c++)
			rc = learn_model(s, &j->L, comm, 0, c, clk, NULL);
		if (!rc)
			*out = hclock_clock_ref(clk);
		return rc;
	}
	rc = learn_model(s, &j->L, comm, 0, r, clk, &lm);
	return rc ? rc : clock_from_lm(clk, &lm, out);
}

static void jk_destroy(struct hclock_sync *s)
{
	struct jk *j = (struct jk *)s;
	learner_fini(&j->L);
	free(j);
}

static const struct sync_ops jk_ops = {.name = "jk", .run = jk_run, .destroy = jk_destroy};

int sync_jk_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	struct jk *j = calloc(1, sizeof(*j));
	if (!j)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	j->s.ops = &jk_ops;
	int rc = learner_init(&j->L, sp);
	if (rc) {
		free(j);
		return rc;
	}
	*out = &j->s;
	return 0;
}
