/*
 * learn.c - what the model-learning algorithms (hca3, hca2, hca, jk) share: their spec
 * arguments "/NFIT/OFF/N[/ri][/span=S]" and LEARN_CLOCK_MODEL (Hunold & Carpen-Amarie,
 * Alg. 2): NFIT offset measurements, a robust linear fit of offset against local time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/stats.h"
#include "sync/sync.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/timeutil.h"

int offset_spec_parse(struct spec_parser *ps, const char *form, struct offset_alg **out)
{
	const char *t = ps->p;
	size_t n = spec_toklen(t);
	const struct offset_type *ot = offset_type_find(t, n);
	int np, rc;
	*out = NULL;
	if (!ot) {
		char want[200];
		snprintf(want, sizeof(want), "an offset estimator: %s", offset_type_names());
		return spec_bad(ps, t, n, want);
	}
	ps->p += n;
	if ((rc = spec_expect(ps, '/', form)) ||
	    (rc = spec_int(ps, 1, 1000000, "NPINGPONGS", &np)))
		return rc;
	return offset_create(ot, np, out);
}

int learning_sync_parse(struct spec_parser *ps, const char *name, const struct sync_ops *ops,
                        struct hclock_sync **out)
{
	struct hclock_sync *s;
	int rc = sync_alloc(sizeof(struct learning_sync), ops, out);
	if (rc)
		return rc;
	s = *out;
	struct learner *L = LEARNER(s);
	char form[64];
	snprintf(form, sizeof(form), "%s" LEARNER_ARGS, name);
	double span_s = 0;
	if ((rc = spec_expect(ps, '/', form)) ||
	    (rc = spec_int(ps, 2, 1000000, "NFIT, the fit points per model", &L->nfit)) ||
	    (rc = spec_expect(ps, '/', form)) || (rc = offset_spec_parse(ps, form, &L->oa)))
		return rc;
	while (*ps->p == '/') {
		ps->p++;
		const char *r = ps->p;
		size_t rn = spec_toklen(r);
		if (!L->ri && spec_word(ps, "ri")) {
			L->ri = 1;
		} else if (rn > 5 && !strncmp(r, "span=", 5) && !span_s) {
			ps->p += 5;
			if ((rc = spec_duration(ps, 1e-6, 3600, "span=S, the time the fit points are spread "
			                        "over", &span_s)))
				return rc;
		} else {
			return spec_bad(ps, r, rn, "'ri' (recompute intercept) or 'span=S' (spread the fit "
			                           "points over S), each at most once");
		}
	}
	L->span_ns = span_s * 1e9;
	char span[48] = "";
	if (span_s > 0)
		snprintf(span, sizeof(span), "/span=%g", span_s);
	sync_set_spec(s, "%s/%d/%s/%d%s%s", name, L->nfit, L->oa->type->name, L->oa->nexchanges,
	              L->ri ? "/ri" : "", span);
	return 0;
}

void learning_sync_destroy(struct hclock_sync *s)
{
	struct learning_sync *ls = container_of(s, struct learning_sync, s);
	offset_destroy(ls->L.oa);
	free(ls);
}

/* A slope within this many of its standard errors of zero is not kept: the fit points
 * cannot tell it from noise. Kept, its error grows with every second of extrapolation;
 * dropped, the error grows only with the true rate difference, which is then itself at
 * most about this many standard errors. (The standard error assumes independent fit
 * points; a bias that drifts across the fit tilts the slope further than it says, which
 * is what the limit above is for.) */
#define MIN_SLOPE_T 2.0

/* A fit point's offset is off by at most half its smallest round trip (skampi, min). On
 * shared cores whole bursts of exchanges wait for a scheduler time slice: measured under
 * load, up to 6 of 20 points with round trips of 0.06-3.5 ms against 2 us, off by up to
 * 1.2 ms, which tilt the slope beyond what the fit's outlier rejection can see (its first
 * line is the tilted one). Points whose round trip exceeds RTT_OUTLIER times the median of
 * the model's points are left out before the fit, unless fewer than half would remain.
 * (rtt reports its pair's mean round trip for every point: nothing is left out.) */
#define RTT_OUTLIER 4.0

static int keep_short_rtt(int64_t *x, double *y, const double *rtt, int n)
{
	struct stats_summary st;
	if (!rtt || stats_summarize(rtt, (size_t)n, &st))
		return n;
	int k = 0;
	for (int i = 0; i < n; i++)
		k += rtt[i] <= RTT_OUTLIER * st.median;
	if (k == n || 2 * k < n)
		return n;
	k = 0;
	for (int i = 0; i < n; i++)
		if (rtt[i] <= RTT_OUTLIER * st.median) {
			x[k] = x[i];
			y[k++] = y[i];
		}
	return k;
}

/* The model from the fit points; an offset alone (the median, at the last point) when the
 * points are all at one instant (coarse clock), or give a slope no clock has (stalled
 * exchanges), or one they cannot pin down. */
static void fit(int64_t *x, double *y, const double *rtt, int n, struct lm *lm)
{
	n = keep_short_rtt(x, y, rtt, n);
	struct linreg_info info;
	if (linreg_fit_robust(x, y, (size_t)n, lm, &info) || fabs(lm->slope) > MAX_PLAUSIBLE_SLOPE ||
	    fabs(lm->slope) < MIN_SLOPE_T * info.slope_se) {
		struct stats_summary st;
		lm->x0_ns = x[n - 1];
		lm->intercept_ns = stats_summarize(y, (size_t)n, &st) ? y[n - 1] : st.median;
		lm->slope = 0;
	}
}

/* The reference's side: serve every measurement of the schedule, whatever fails. */
static int serve_model(struct learner *L, struct pp_link *l)
{
	int rc = 0;
	for (int i = 0; i < L->nfit + L->ri; i++)
		rc = first_err(rc, offset_measure(L->oa, l, NULL));
	return rc;
}

int learn_model(struct hclock_sync *s, struct learner *L, MPI_Comm comm, int ref, int client,
                hclock_clock *clk, struct lm *lm)
{
	struct pp_link l;
	int rc = 0;
	pp_link_init(&l, comm, ref, client, clk, &s->pingpongs);
	if (l.me == ref)
		return serve_model(L, &l);
	if (l.me != client)
		return 0;
	*lm = (struct lm){0, 0, 0};
	int64_t *x = fault_malloc((size_t)L->nfit * sizeof(*x));
	double *y = fault_malloc((size_t)L->nfit * sizeof(*y));
	double *rtt = malloc((size_t)L->nfit * sizeof(*rtt)); /* optional: NULL fits them all */
	struct offset_sample smp = {0, 0, 0};
	if (!x || !y)
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	/* paced from the end of the first exchange: the reference may still be busy in an
	 * earlier round when this client starts waiting for it */
	int64_t t_start = 0;
	for (int i = 0; i < L->nfit; i++) {
		if (L->span_ns > 0 && i == 1)
			t_start = real_now_ns();
		if (L->span_ns > 0 && i > 1)
			real_delay_ns(t_start + (int64_t)(L->span_ns * (i - 1) / (L->nfit - 1)) -
			              real_now_ns());
		rc = first_err(rc, offset_measure(L->oa, &l, &smp));
		if (x && y) {
			x[i] = smp.local_ns;
			y[i] = smp.offset_ns;
		}
		if (rtt)
			rtt[i] = smp.rtt_ns;
	}
	if (fault_hit(FAULT_FIT))
		rc = first_err(rc, err_set(HCLOCK_EINJECTED, "injected fault (HCLOCK_FAULT) in a model "
		                                             "fit"));
	if (!rc)
		fit(x, y, rtt, L->nfit, lm);
	if (L->ri) {
		/* COMPUTE_AND_SET_INTERCEPT: keep the slope, re-anchor on a fresh offset */
		rc = first_err(rc, offset_measure(L->oa, &l, &smp));
		if (!rc) {
			lm->x0_ns = smp.local_ns;
			lm->intercept_ns = smp.offset_ns;
		}
	}
	free(x);
	free(y);
	free(rtt);
	if (rc)
		*lm = (struct lm){0, 0, 0};
	return rc;
}

int clock_from_lm(hclock_clock *clk, const struct lm *lm, hclock_clock **out)
{
	return hclock_model_linear(clk, lm->x0_ns, lm->intercept_ns, lm->slope, out);
}

int finish_lm(MPI_Comm comm, hclock_clock *clk, const struct lm *lm, int rc, hclock_clock **out)
{
	int r;
	MPI_Comm_rank(comm, &r);
	if (r == 0 || rc) {
		*out = hclock_clock_ref(clk);
		return rc;
	}
	return clock_from_lm(clk, lm, out);
}
