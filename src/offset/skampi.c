/*
 * skampi.c - SKaMPI-Offset (Hunold & Carpen-Amarie, Alg. 7; Worsch et al.).
 * The client bounds the offset from both sides with every exchange:
 *   t_ref - s_now  <= offset <= t_ref - s_last
 * keeps the tightest bounds over all exchanges (those with the smallest delays) and returns
 * their midpoint. No RTT estimate and no averaging: minima are robust to delay outliers.
 * Estimators built on the same exchange (hull) also hand every ping-pong to a sink.
 */
#include "offset/offset.h"
#include "util/err.h"

int offset_skampi_measure(struct offset_alg *a, struct pp_link *l, struct offset_sample *out)
{
	int n = a->nexchanges;
	if (l->me == l->ref) {
		pp_serve(l, n);
	} else if (l->me == l->client) {
		int64_t td_min = INT64_MIN, td_max = INT64_MAX, rtt = INT64_MAX;
		for (int i = 0; i < n; i++) {
			int64_t s_last = hclock_now(l->clk);
			pp_send(l, s_last, l->ref);
			int64_t t_last = pp_recv(l, l->ref);
			int64_t s_now = hclock_now(l->clk);
			if (s_now - s_last < rtt)
				rtt = s_now - s_last;
			if (t_last - s_now > td_min)
				td_min = t_last - s_now;
			if (t_last - s_last < td_max)
				td_max = t_last - s_last;
			/* t2 = t3: the reference answers with one timestamp. A failed link's dummy
			 * values, and reads that noise put out of order, are not fed. */
			if (a->sink && !l->rc && !a->sink_rc && s_now >= s_last &&
			    hull_learner_add(a->sink, s_last, t_last, t_last, s_now) == HCLOCK_ENOMEM)
				a->sink_rc = err_set(HCLOCK_ENOMEM, "out of memory in the hull learner");
		}
		out->offset_ns = ((double)td_min + (double)td_max) / 2;
		out->local_ns = hclock_now(l->clk);
		out->rtt_ns = (double)rtt;
	}
	pp_count(l, n);
	return l->rc;
}

static const struct offset_ops skampi_ops = {.measure = offset_skampi_measure};

const struct offset_type offset_type_skampi = {
	.name = "skampi",
	.help = "SKaMPI-Offset (Alg. 7): bounds from both sides, midpoint of the tightest",
	.ops = &skampi_ops,
};
