/*
 * roundtime.c - scheme "roundtime": Round-Time, Alg. 5 of Hunold & Carpen-Amarie's HCA3
 * paper (Sec. V.A). Before every repetition the reference picks a start time slack
 * (B x the MPI_Bcast latency) after its now and broadcasts it; every process waits for it
 * on the global clock (hclock_harmonize). A process that learns the start time after it
 * has passed flags the repetition invalid. After the call, the flags, the exit times and
 * each process's out-of-time flag are allreduced, so every process knows whether the
 * repetition counts, its latency (last exit minus the common start), and whether to stop.
 * The repetitions therefore never overlap, and no barrier is involved.
 * Beyond Alg. 5, the latency the slack is made of is measured again before each
 * (op, size) and the smaller figure kept (bench_slack_latency, by the tool: the launch's
 * may have met a stall), and the slack adapts to late rounds (struct bench_slack) so that a loaded or
 * oversubscribed machine does not make every round late; "roundtime/fixed" keeps it at
 * B x the launch's latency, as Alg. 5 has it.
 */
#include <stdlib.h>
#include <time.h>

#include "bench/buf.h"
#include "bench/scheme.h"
#include "hclock_api.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

struct roundtime {
	struct bench_scheme base;
	int fixed; /* 1: the slack never adapts */
};

/*
 * The test hook HCLOCK_FAULT=rank=R|all,at=late,k=K (util/fault.h): the named process then
 * sleeps the slack plus 10 ms before every K-th round (K-1, 2K-1, ...), so it learns that
 * round's start time late (unless the reference itself is held up longer, which 10 ms makes
 * unlikely even on an oversubscribed machine), and a test can check that those repetitions
 * are invalid.
 */
static void force_late(size_t round, int64_t slack_ns)
{
	if (!fault_armed || !fault_mode(FAULT_LATE))
		return;
	size_t k = (size_t)fault_period();
	if (round % k == k - 1)
		real_sleep_ns(slack_ns + 10000000);
}

static int roundtime_measure(struct bench_scheme *s, const struct bench_params *p,
                             struct bench_buf *b, struct bench_series *out)
{
	const struct roundtime *r = container_of(s, struct roundtime, base);
	struct bench_stop stop;
	struct bench_slack slack;
	int64_t base = scheme_slack_base(p, !r->fixed);
	/* after a failure this rank goes on to the next agreement, where all stop */
	int rc = scheme_warmup(p, b), arc;
	slack_init(&slack, base, r->fixed ? base : p->time_slice_ns / 10);
	stop_begin(&stop, p);
	for (int done = 0; !done;) {
		int64_t common = 0, late = 0, t0, t1, inv, first, last;
		int prc = bench_buf_prepare(b); /* --buffers offcache, before the start is set */
		force_late(out->n, slack.cur_ns);
		int hrc = hclock_harmonize(p->comm, p->clk, slack.cur_ns, &common, &late);
		hrc = hrc ? hrc : prc;
		t0 = hclock_now(p->clk);
		int c = bench_op_call(b);
		t1 = hclock_now(p->clk);
		rc = rc ? rc : hrc ? hrc : c;
		int64_t flag = late > 0 || hrc != 0;
		int oot = stop_out_of_time(&stop, p->clk) || rc;
		if ((arc = scheme_agree(p->comm, 1, &flag, &t0, &t1, oot, &inv, &first, &last, &done)))
			return rc ? rc : arc;
		slack_update(&slack, inv != 0);
		if (!rc)
			rc = bench_series_add(out, common, t0, t1, !inv);
		if (!inv && stop_add_valid(&stop, (double)(last - common)))
			done = 1;
	}
	out->slack_ns = slack.cur_ns;
	return rc;
}

static int roundtime_create(const struct scheme_type *t, const char *args,
                            struct bench_scheme **out)
{
	struct scheme_arg a;
	int fixed = 0;
	while (scheme_arg_next(&args, &a)) {
		if (scheme_arg_is(&a, "fixed") && !a.val)
			fixed = 1;
		else
			return scheme_arg_bad(t, &a, "unknown");
	}
	struct roundtime *r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(HCLOCK_ENOMEM, "out of memory for scheme %s", t->name);
	r->base.type = t;
	r->fixed = fixed;
	*out = &r->base;
	return 0;
}

const struct scheme_type scheme_type_roundtime = {
	.name = "roundtime",
	.usage = "roundtime[/fixed]",
	.help = "Round-Time (Alg. 5), a start time broadcast before every repetition; "
	        "fixed: the start slack never adapts",
	.common_start = 1,
	.create = roundtime_create,
	.measure = roundtime_measure,
};
