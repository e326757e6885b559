/* coll.c - the time the collective patterns wait for (coll.h). */
#include "waits/coll.h"

int coll_start(const struct waits_coll *m, size_t n, int last, int64_t skip,
               struct waits_stamp *out, int64_t *who)
{
	int64_t t = 0, lo = 0, hi = 0, tlo = 0, thi = 0;
	int any = 0, lo_inf = 0, hi_inf = 0, truth = 1;
	for (size_t i = 0; i < n; i++) {
		const struct waits_stamp *s = &m[i].start;
		if (m[i].call.proc == skip)
			continue;
		int l_inf = s->below_ns >= WAITS_NO_BOUND, h_inf = s->above_ns >= WAITS_NO_BOUND;
		int64_t l = waits_lo(s), h = waits_hi(s);
		/* the truth: the latest true start lies in [max true_lo, max true_hi], the
		   earliest in [min true_lo, min true_hi] */
		truth = truth && s->has_truth;
		if (!any) {
			t = s->t_ns, lo = l, hi = h, *who = m[i].call.proc;
			lo_inf = l_inf, hi_inf = h_inf, any = 1;
			tlo = s->true_lo_ns, thi = s->true_hi_ns;
			continue;
		}
		if (last ? s->true_lo_ns > tlo : s->true_lo_ns < tlo)
			tlo = s->true_lo_ns;
		if (last ? s->true_hi_ns > thi : s->true_hi_ns < thi)
			thi = s->true_hi_ns;
		if (last ? s->t_ns > t : s->t_ns < t)
			t = s->t_ns, *who = m[i].call.proc;
		/* the latest true start: above every lower bound; the earliest: below every upper */
		if (last) {
			if (!l_inf && (lo_inf || l > lo))
				lo = l, lo_inf = 0;
			if (h_inf)
				hi_inf = 1;
			else if (!hi_inf && h > hi)
				hi = h;
		} else {
			if (l_inf)
				lo_inf = 1;
			else if (!lo_inf && l < lo)
				lo = l;
			if (!h_inf && (hi_inf || h < hi))
				hi = h, hi_inf = 0;
		}
	}
	if (!any)
		return -1;
	out->t_ns = t;
	out->below_ns = lo_inf ? WAITS_NO_BOUND : t - lo;
	out->above_ns = hi_inf ? WAITS_NO_BOUND : hi - t;
	out->has_truth = truth;
	out->true_lo_ns = truth ? tlo : 0;
	out->true_hi_ns = truth ? thi : 0;
	return 0;
}

int coll_wait_for(waits *w, int self, const struct waits_coll *m, size_t n,
                  const struct waits_stamp *t, int64_t who, int64_t skip)
{
	for (size_t i = 0; i < n; i++) {
		if (m[i].call.proc == skip)
			continue;
		struct waits_instance in = {.pattern = self, .proc = m[i].call.proc, .peer = who,
		                            .func = m[i].call.func, .comm = m[i].comm};
		if (waits_interval(t, &m[i].call, &in)) {
			int rc = waits_emit(w, &in);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int coll_wait_last(waits *w, int self, const struct waits_coll *m, size_t n,
                   enum waits_coll_kind k)
{
	struct waits_stamp e;
	int64_t who;
	if (m[0].kind != k || coll_start(m, n, 1, -1, &e, &who))
		return 0;
	return coll_wait_for(w, self, m, n, &e, who, -1);
}
