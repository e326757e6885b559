/*
 * min.c - Cristian's offset estimate with Dunigan's minimum filter (Dunigan, Sec. 2):
 * of k exchanges keep the one with the smallest round trip; the reference's timestamp is
 * then taken to be the client's midpoint of that exchange:
 *   offset = t_ref - (t0 + t1) / 2,  error within +-(t1 - t0) / 2.
 */
#include "offset/offset.h"

static int min_measure(struct offset_alg *a, struct pp_link *l, struct offset_sample *out)
{
	int n = a->nexchanges;
	if (l->me == l->ref) {
		pp_serve(l, n);
	} else if (l->me == l->client) {
		int64_t best_rtt = INT64_MAX;
		for (int i = 0; i < n; i++) {
			int64_t t0 = hclock_now(l->clk);
			pp_send(l, t0, l->ref);
			int64_t tr = pp_recv(l, l->ref);
			int64_t t1 = hclock_now(l->clk);
			if (t1 - t0 < best_rtt) {
				best_rtt = t1 - t0;
				out->local_ns = t0 + (t1 - t0) / 2;
				out->offset_ns = (double)(tr - t0) - (double)(t1 - t0) / 2;
				out->rtt_ns = (double)(t1 - t0);
			}
		}
	}
	pp_count(l, n);
	return l->rc;
}

static const struct offset_ops min_ops = {.measure = min_measure};

const struct offset_type offset_type_min = {
	.name = "min",
	.help = "Cristian's estimate from the exchange with the smallest round trip (Dunigan)",
	.ops = &min_ops,
};
