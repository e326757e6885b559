/*
 * hca3.c - HCA3 (Hunold & Carpen-Amarie, Alg. 1): push the reference time down a binomial
 * tree in ceil(log2 p) rounds. In round i (i = nrounds..1) every process r with
 * r mod 2^i == 0 is a reference for r + 2^(i-1), timestamping with its already learned
 * global clock (PulseSync's idea); the client learns a linear model against it and uses it
 * from then on. Ranks beyond the largest power of two learn from r - 2^nrounds at the end.
 * A process that fails goes on serving its later clients with its unsynchronized clock.
 */
#include "sync/learn.h"
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

int hca3_pairs(int p, int r, int (*pair)(void *ctx, int ref, int client), void *ctx)
{
	int nrounds = ilog2(p), max_power = 1 << nrounds, rc = 0;
	for (int i = nrounds; i >= 1 && r < max_power; i--) {
		int running = 1 << i, next = 1 << (i - 1);
		if (r % running == 0)
			rc = first_err(rc, pair(ctx, r, r + next));
		else if (r % running == next)
			rc = first_err(rc, pair(ctx, r - next, r));
	}
	if (r >= max_power)
		rc = first_err(rc, pair(ctx, r - max_power, r));
	else if (r < p - max_power)
		rc = first_err(rc, pair(ctx, r, r + max_power));
	return rc;
}

int hca3_rounds(int p)
{
	int nrounds = ilog2(p);
	return nrounds + (p > 1 << nrounds);
}

struct hca3_run {
	struct hclock_sync *s;
	MPI_Comm comm;
	hclock_clock *clk, *my_clk;
	int me;
};

/* one pair of the schedule: serve the client with the global clock so far, or learn */
static int hca3_pair(void *ctx, int ref, int client)
{
	struct hca3_run *h = ctx;
	if (ref == h->me)
		return learn_model(h->s, LEARNER(h->s), h->comm, ref, client, h->my_clk, 1, NULL,
		                   NULL);
	return learn_from(h->s, h->comm, ref, client, h->clk, &h->my_clk);
}

static int hca3_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	int p, r;
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &r);
	struct hca3_run h = {s, comm, clk, hclock_clock_ref(clk), r};
	offset_reset(LEARNER(s)->oa);
	s->rounds = (uint64_t)hca3_rounds(p);
	int rc = hca3_pairs(p, r, hca3_pair, &h);
	*out = h.my_clk;
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
