#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "numerics/linreg.h"
#include "numerics/plan.h"
#include "numerics/stats.h"
#include "util/err.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int plan_net_measure(const double *rtt_ns, size_t m, struct plan_net *net)
{
	if (m < 16)
		return 1;
	double *s = malloc(m * sizeof(*s)), sum = 0;
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	memcpy(s, rtt_ns, m * sizeof(*s));
	qsort(s, m, sizeof(*s), cmp_double);
	for (size_t i = 0; i < m; i++)
		sum += s[i];
	net->floor_ns = s[0];
	net->spread_ns = stats_quantile_sorted(s, m, 0.5) - s[0];
	net->tail_ns = stats_quantile_sorted(s, m, 0.99) - s[0];
	net->mean_ns = sum / (double)m;
	net->sharp = stats_quantile_sorted(s, m, 0.10) <= 2 * s[0];
	free(s);
	return 0;
}

int plan_stalled_groups(const double *gmin_ns, const double *gtime_ns, int n,
                        unsigned char *stalled)
{
	if (n < 1 || n > PLAN_TAKE_MAX)
		return -1;
	double fl = gmin_ns[0], tfl = gtime_ns[0];
	int k = 0;
	for (int g = 1; g < n; g++) {
		fl = fmin(fl, gmin_ns[g]);
		tfl = fmin(tfl, gtime_ns[g]);
	}
	for (int g = 0; g < n; g++) {
		stalled[g] = (gmin_ns[g] > PLAN_STALL_X * fl && gmin_ns[g] - fl > PLAN_STALL_MIN_NS) ||
		             (gtime_ns[g] > PLAN_STALL_X * tfl && gtime_ns[g] - tfl > PLAN_STALL_SLICE_NS);
		k += stalled[g];
	}
	return k;
}

/* the std of r[0..k-1] about 0, those beyond 4 robust sigmas left out as the learners' fit
 * leaves them out */
static double trimmed_std(double *r, size_t k)
{
	double *a = malloc(k * sizeof(*a));
	if (!a)
		return NAN;
	for (size_t i = 0; i < k; i++)
		a[i] = fabs(r[i]);
	qsort(a, k, sizeof(*a), cmp_double);
	double lim = 4 * 1.4826 * a[k / 2], s2 = 0;
	size_t kept = 0;
	for (size_t i = 0; i < k; i++)
		if (a[i] <= lim) {
			s2 += a[i] * a[i];
			kept++;
		}
	free(a);
	return kept > 2 ? sqrt(s2 / (double)(kept - 1)) : NAN;
}

double plan_point_sigma(const int64_t *local_ns, const double *off_ns, const double *rtt_ns,
                        int ngroups, int n)
{
	if (n < 1 || n > PLAN_GROUP || ngroups < PLAN_MIN_GROUPS || ngroups > PLAN_GROUPS)
		return NAN;
	struct lm lm;
	if (linreg_fit_robust(local_ns, off_ns, (size_t)ngroups * PLAN_GROUP, &lm, NULL))
		return NAN;
	double r[PLAN_GROUPS];
	for (int g = 0; g < ngroups; g++) {
		int k = g * PLAN_GROUP;
		for (int i = k + 1; i < g * PLAN_GROUP + n; i++)
			if (rtt_ns[i] < rtt_ns[k])
				k = i;
		r[g] = off_ns[k] - lm_offset(&lm, local_ns[k]);
	}
	return trimmed_std(r, (size_t)ngroups);
}

double plan_predict(double sigma_ns, int nfit, double span_ns, double horizon_ns)
{
	double off = sigma_ns / sqrt((double)nfit);
	double sxx_per = nfit > 1 ? sqrt((double)nfit * (nfit + 1) / (12.0 * (nfit - 1))) : 0;
	double slope = span_ns > 0 && sxx_per > 0 ? sigma_ns / (span_ns * sxx_per) : INFINITY;
	return hypot(off, slope * (horizon_ns + span_ns / 2));
}

int plan_choose(const int64_t *local_ns, const double *off_ns, const double *rtt_ns,
                int ngroups, const struct plan_net *net, double round_ns, double horizon_ns,
                struct plan_choice *out)
{
	struct plan_choice c[PLAN_MAX_N + 1];
	double best = INFINITY;
	for (int n = 1; n <= PLAN_MAX_N; n++) {
		double sigma = plan_point_sigma(local_ns, off_ns, rtt_ns, ngroups, n);
		double point_ns = n * net->mean_ns, span = round_ns - point_ns;
		double fit = span > 0 ? floor(span / (PLAN_DUTY * point_ns)) : 0;
		c[n].nfit = 0;
		if (!isfinite(sigma) || fit < PLAN_MIN_NFIT)
			continue;
		int nfit = fit > PLAN_MAX_NFIT ? PLAN_MAX_NFIT : (int)fit;
		c[n] = (struct plan_choice){nfit, n, span, sigma, plan_predict(sigma, nfit, span,
		                                                               horizon_ns)};
		if (c[n].predicted_error_ns < best)
			best = c[n].predicted_error_ns;
	}
	/* the most ping-pongs per point that predict within PLAN_SLACK of the best: the smallest
	 * round trip of more also keeps out the delays the burst did not see, and sigma is
	 * measured on one burst (the smallest of noisy estimates would choose by noise) */
	for (int n = PLAN_MAX_N; n >= 1 && isfinite(best); n--)
		if (c[n].nfit && c[n].predicted_error_ns <= PLAN_SLACK * best) {
			*out = c[n];
			return 0;
		}
	double sigma = plan_point_sigma(local_ns, off_ns, rtt_ns, ngroups, 1);
	double span = (PLAN_MIN_NFIT - 1) * net->mean_ns;
	*out = (struct plan_choice){PLAN_MIN_NFIT, 1, 0, sigma,
	                            plan_predict(sigma, PLAN_MIN_NFIT, span, horizon_ns)};
	return 1;
}
