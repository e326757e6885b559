/*
 * skampi.c - SKaMPI's synchronization (Worsch et al.): rank 0 measures the offset of every
 * process in turn; each process keeps an offset-only model (no drift), so the global clock
 * degrades as the clocks' rates differ. O(p) rounds.
 */
#include <stdlib.h>

#include "sync/sync.h"
#include "util/err.h"

struct skampi_sync {
	struct hclock_sync s;
	struct offset_alg *oa;
};

static int skampi_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct skampi_sync *k = (struct skampi_sync *)s;
	struct offset_sample smp = {0};
	int p, r, rc;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	offset_reset(k->oa);
	s->rounds = (uint64_t)(p - 1);
	if ((rc = measure_all(s, k->oa, comm, clk, &smp)))
		return rc;
	if (r == 0) {
		*out = hclock_clock_ref(clk);
		return 0;
	}
	return hclock_model_offset(clk, smp.offset_ns, out);
}

static void skampi_destroy(struct hclock_sync *s)
{
	struct skampi_sync *k = (struct skampi_sync *)s;
	offset_destroy(k->oa);
	free(k);
}

static const struct sync_ops skampi_ops = {
	.name = "skampi", .run = skampi_run, .destroy = skampi_destroy,
};

int sync_skampi_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	struct skampi_sync *k = calloc(1, sizeof(*k));
	if (!k)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	k->s.ops = &skampi_ops;
	int rc = offset_create(sp->offalg, sp->npingpongs, &k->oa);
	if (rc) {
		free(k);
		return rc;
	}
	*out = &k->s;
	return 0;
}
