/*
 * hca3.c - HCA3 (Hunold & Carpen-Amarie, Alg. 1): push the reference time down a binomial
 * tree in ceil(log2 p) rounds. In round i (i = nrounds..1) every process r with
 * r mod 2^i == 0 is a reference for r + 2^(i-1), timestamping with its already learned
 * global clock (PulseSync's idea); the client learns a linear model against it and uses it
 * from then on. Ranks beyond the largest power of two learn from r - 2^nrounds at the end.
 */
#include <stdlib.h>

#include "sync/sync.h"
#include "util/err.h"

static int hca3_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct learner *L = LEARNER(s);
	int p, r, rc = 0;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	int nrounds = ilog2(p), max_power = 1 << nrounds;
	hclock_clock *my_clk = hclock_clock_ref(clk);
	struct lm lm;

	offset_reset(L->oa);
	s->rounds = (uint64_t)nrounds + (p > max_power);
	for (int i = nrounds; i >= 1 && r < max_power; i--) {
		int running = 1 << i, next = 1 << (i - 1);
		if (r % running == 0) {
			rc = learn_model(s, L, comm, r, r + next, my_clk, NULL);
		} else if (r % running == next) {
			rc = learn_model(s, L, comm, r - next, r, my_clk, &lm);
			hclock_clock_free(my_clk);
			my_clk = NULL;
			if (!rc)
				rc = clock_from_lm(clk, &lm, &my_clk);
		}
		if (rc)
			goto out;
	}
	if (r >= max_power) {
		rc = learn_model(s, L, comm, r - max_power, r, my_clk, &lm);
		hclock_clock_free(my_clk);
		my_clk = NULL;
		if (!rc)
			rc = clock_from_lm(clk, &lm, &my_clk);
	} else if (r < p - max_power) {
		rc = learn_model(s, L, comm, r, r + max_power, my_clk, NULL);
	}
out:
	if (rc) {
		hclock_clock_free(my_clk);
		return rc;
	}
	*out = my_clk;
	return 0;
}

static const struct sync_ops hca3_ops = {.name = "hca3", .run = hca3_run, .destroy = learning_sync_destroy};

int sync_hca3_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	return learning_sync_create(sp, &hca3_ops, out);
}
