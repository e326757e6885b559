/*
 * hca3.c - HCA3 (Hunold & Carpen-Amarie, Alg. 1): push the reference time down a binomial
 * tree in ceil(log2 p) rounds. In round i (i = nrounds..1) every process r with
 * r mod 2^i == 0 is a reference for r + 2^(i-1), timestamping with its already learned
 * global clock (PulseSync's idea); the client learns a linear model against it and uses it
 * from then on. Ranks beyond the largest power of two learn from r - 2^nrounds at the end.
 * A process that fails goes on serving its later clients with its unsynchronized clock.
 */
#include "sync/sync.h"

/* learn against ref, then timestamp with the new global clock (clk itself after a failure) */
static int learn_from(struct hclock_sync *s, MPI_Comm comm, int ref, int me, hclock_clock *clk,
                      hclock_clock **my_clk)
{
	struct lm lm;
	struct bound bd;
	int rc = learn_model(s, LEARNER(s), comm, ref, me, *my_clk, 1, &lm, &bd);
	s->parent = ref;
	hclock_clock_free(*my_clk);
	*my_clk = NULL;
	if (!rc)
		rc = clock_from_lm(clk, &lm, &bd, my_clk);
	if (!*my_clk)
		*my_clk = hclock_clock_ref(clk);
	return rc;
}

static int hca3_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct learner *L = LEARNER(s);
	int p, r, rc = 0;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	int nrounds = ilog2(p), max_power = 1 << nrounds;
	hclock_clock *my_clk = hclock_clock_ref(clk);

	offset_reset(L->oa);
	s->rounds = (uint64_t)nrounds + (p > max_power);
	for (int i = nrounds; i >= 1 && r < max_power; i--) {
		int running = 1 << i, next = 1 << (i - 1);
		if (r % running == 0)
			rc = first_err(rc, learn_model(s, L, comm, r, r + next, my_clk, 1, NULL, NULL));
		else if (r % running == next)
			rc = first_err(rc, learn_from(s, comm, r - next, r, clk, &my_clk));
	}
	if (r >= max_power)
		rc = first_err(rc, learn_from(s, comm, r - max_power, r, clk, &my_clk));
	else if (r < p - max_power)
		rc = first_err(rc, learn_model(s, L, comm, r, r + max_power, my_clk, 1, NULL, NULL));
	*out = my_clk;
	return rc;
}

static const struct sync_ops hca3_ops = {
	.run = hca3_run, .destroy = learning_sync_destroy, .explain = learning_sync_explain};

static int hca3_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	return learning_sync_parse(ps, "hca3", &hca3_ops, out);
}

const struct sync_type sync_type_hca3 = {
	.name = "hca3",
	.usage = "hca3" LEARNER_ARGS,
	.help = "HCA3 (Alg. 1, 2): reference time pushed down a binomial tree, ceil(log2 p) rounds",
	.parse = hca3_parse,
};
