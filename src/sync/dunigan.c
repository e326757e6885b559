/*
 * dunigan.c - Dunigan's master-slave synchronization (Dunigan, Sec. 2-3): the master takes
 * a minimum-filtered (k tries) Cristian offset to every slave, waits S seconds, and takes a
 * second one; the two give each slave's frequency correction
 *   slope = (o2 - o1) / (t2 - t1)
 * and the second offset its intercept. 2 (p - 1) rounds plus the wait.
 * Not done here: Dunigan's slewing of a running clock (the model is applied from t2 on).
 */
#include <math.h>
#include <stdlib.h>

#include "sync/sync.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

struct dunigan {
	struct hclock_sync s;
	struct offset_alg *oa; /* min, k tries */
	double interval_s;     /* S, s */
};

static int dunigan_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct dunigan *d = (struct dunigan *)s;
	struct offset_sample first = {0, 0, 0}, second = {0, 0, 0};
	int p, r, rc;
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &r);
	s->rounds = 2 * (uint64_t)(p - 1);
	s->parent = r ? 0 : -1;
	rc = measure_all(s, d->oa, comm, clk, &first);
	/* S from the end of the first pass, not from rank 0's start: a process that comes late
	 * (a busy machine, a slow start) had its first offset taken late, and the two offsets
	 * were once 25 us apart instead of 0.2 s (a slope of -0.8 %, dropped: 70 us off 1 s
	 * later) */
	if (r == 0)
		real_delay_ns((int64_t)(d->interval_s * 1e9));
	rc = first_err(rc, measure_all(s, d->oa, comm, clk, &second));
	if (r != 0 && fault_hit(FAULT_FIT))
		rc = first_err(rc, err_set(HCLOCK_EINJECTED, "injected fault (HCLOCK_FAULT) in the "
		                                             "frequency fit"));
	if (r != 0) {
		sync_note_rtt(s, first.rtt_ns);
		sync_note_rtt(s, second.rtt_ns);
	}
	double dt = (double)(second.local_ns - first.local_ns);
	if (r != 0 && !rc && dt > 0)
		sync_note_span(s, dt);
	struct lm lm = {second.local_ns, second.offset_ns,
	                dt > 0 ? (second.offset_ns - first.offset_ns) / dt : 0};
	if (!d->oa->paper && fabs(lm.slope) > MAX_PLAUSIBLE_SLOPE) /* stalls, not a clock */
		lm.slope = 0;
	return finish_lm(comm, clk, &lm, NULL, rc, out);
}

static void dunigan_destroy(struct hclock_sync *s)
{
	struct dunigan *d = (struct dunigan *)s;
	offset_destroy(d->oa);
	free(d);
}

static void dunigan_explain(const struct hclock_sync *s, struct sync_explain *e)
{
	const struct dunigan *d = (const struct dunigan *)s;
	sync_explain_line(e, "rank 0 measures each process in turn (%d tries, the fastest kept), "
	                  "again %g s later; the two offsets give the process's frequency",
	                  d->oa->nexchanges, d->interval_s);
	offset_explain_stalls(e, d->oa, d->oa->paper ? "" : "a frequency beyond 2e-3 is dropped");
}

static const struct sync_ops dunigan_ops = {
	.run = dunigan_run, .destroy = dunigan_destroy, .explain = dunigan_explain};

static int dunigan_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	int tries, rc = sync_alloc(sizeof(struct dunigan), &dunigan_ops, out);
	struct dunigan *d = (struct dunigan *)*out;
	if (rc || (rc = spec_expect(ps, '/', "dunigan/S/K[/paper]")) ||
	    (rc = spec_duration(ps, 0.001, 86400, "S, the time between the offsets", &d->interval_s)) ||
	    (rc = spec_expect(ps, '/', "dunigan/S/K[/paper]")) ||
	    (rc = spec_int(ps, 1, 1000000, "K, exchanges per offset", &tries)) ||
	    (rc = offset_create(offset_type_find("min", 3), tries, &d->oa)))
		return rc;
	offset_spec_paper(ps, d->oa);
	sync_set_spec(*out, "dunigan/%g/%d%s", d->interval_s, tries, d->oa->paper ? "/paper" : "");
	return 0;
}

const struct sync_type sync_type_dunigan = {
	.name = "dunigan",
	.usage = "dunigan/S/K[/paper]",
	.help = "Dunigan: min-filtered (K tries) offsets at the start and S seconds later give each "
	        "slave's frequency",
	.parse = dunigan_parse,
};
