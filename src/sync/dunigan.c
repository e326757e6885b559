/*
 * dunigan.c - Dunigan's master-slave synchronization (Dunigan, Sec. 2-3): the master takes
 * a minimum-filtered (k tries) Cristian offset to every slave, waits until S seconds have
 * passed, and takes a second one; the two give each slave's frequency correction
 *   slope = (o2 - o1) / (t2 - t1)
 * and the second offset its intercept. 2 (p - 1) rounds plus the wait.
 * Not done here: Dunigan's slewing of a running clock (the model is applied from t2 on).
 */
#include <stdlib.h>

#include "sync/sync.h"
#include "util/err.h"
#include "util/timeutil.h"

struct dunigan {
	struct hclock_sync s;
	struct offset_alg *oa; /* min, k tries */
	double interval_s;     /* S, s */
};

static int dunigan_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct dunigan *d = (struct dunigan *)s;
	struct offset_sample first = {0}, second = {0};
	int p, r, rc;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	s->rounds = 2 * (uint64_t)(p - 1);
	int64_t t_start = real_now_ns();
	if ((rc = measure_all(s, d->oa, comm, clk, &first)))
		return rc;
	if (r == 0)
		real_delay_ns(t_start + (int64_t)(d->interval_s * 1e9) - real_now_ns());
	if ((rc = measure_all(s, d->oa, comm, clk, &second)))
		return rc;
	double dt = (double)(second.local_ns - first.local_ns);
	struct lm lm = {second.local_ns, second.offset_ns,
	                dt > 0 ? (second.offset_ns - first.offset_ns) / dt : 0};
	return finish_lm(comm, clk, &lm, out);
}

static void dunigan_destroy(struct hclock_sync *s)
{
	struct dunigan *d = (struct dunigan *)s;
	offset_destroy(d->oa);
	free(d);
}

static const struct sync_ops dunigan_ops = {
	.name = "dunigan", .run = dunigan_run, .destroy = dunigan_destroy,
};

int sync_dunigan_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	struct dunigan *d = calloc(1, sizeof(*d));
	if (!d)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	d->s.ops = &dunigan_ops;
	d->interval_s = sp->interval_s;
	int rc = offset_create("min", sp->tries, &d->oa);
	if (rc) {
		free(d);
		return rc;
	}
	*out = &d->s;
	return 0;
}
