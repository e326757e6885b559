/*
 * linreg.h - least-squares line through fit points, and linear offset models.
 * Knows nothing of MPI or clocks: x are int64 ns timestamps, y offsets in ns.
 */
#ifndef HCLOCK_NUMERICS_LINREG_H
#define HCLOCK_NUMERICS_LINREG_H

#include <stddef.h>
#include <stdint.h>

/* a - b in ns, wrapping instead of overflowing (well defined for any input; exact whenever
 * the true difference fits, i.e. for any two timestamps of one clock) */
static inline int64_t diff_ns(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* offset(x) = intercept_ns + slope * (x - x0_ns); maps x to x + offset(x). */
struct lm {
	int64_t x0_ns;       /* where the offset equals intercept_ns, ns */
	double intercept_ns; /* ns */
	double slope;        /* dimensionless */
};

/* What a fit returns (the numerics convention, docs/architecture.md#errors): a result, or
 * none yet (too little data is a status, never an error). */
enum linreg_status {
	LINREG_OK = 0,      /* *out holds the line */
	LINREG_TOO_FEW = 1, /* fewer than 2 points, or all x equal: no line, *out unchanged */
};

/*
 * Ordinary least squares of y on x. The fit is done on x - x0 with x0 the (rounded) mean
 * of x, so only differences of timestamps become doubles; out->x0_ns is that mean.
 * Returns LINREG_OK or LINREG_TOO_FEW.
 */
int linreg_fit(const int64_t *x_ns, const double *y_ns, size_t n, struct lm *out);

/* What a robust fit kept and how well it pins the slope. */
struct linreg_info {
	size_t kept;     /* points in the final fit */
	double slope_se; /* standard error of the slope (dimensionless): the residuals' standard
	                  * deviation over sqrt(sum of squared x deviations); NAN with fewer
	                  * than 3 points, where residuals say nothing */
};

/*
 * Least squares with one round of outlier rejection: after a first fit, points whose
 * residual exceeds k * 1.4826 * MAD (k = 4, a robust 4-sigma) are dropped and the line is
 * fitted again, if at least half of the points remain. A fit point hit by a delayed
 * exchange (a descheduled process, an interrupt) otherwise tilts the slope, and the error
 * grows with every second the model is extrapolated (without memory for the second round
 * the first fit is kept). Returns as linreg_fit; *info (if not NULL) describes the final
 * fit.
 */
int linreg_fit_robust(const int64_t *x_ns, const double *y_ns, size_t n, struct lm *out,
                      struct linreg_info *info);

/*
 * Shrink m's slope toward 0 by w = s^2 / (s^2 + se^2), s the slope, se its standard error
 * (the Wiener / empirical-Bayes weight with the slope's own square as the prior variance),
 * pivoting at m->x0_ns: a fit's x0 is the mean x of its points, so the offset where the data
 * are stays as fitted. A slope many standard errors from 0 is kept (w -> 1), one within a
 * standard error is halved or less; none is dropped. se not finite and > 0 (fewer than 3
 * points, an exact fit) leaves m unchanged. Returns w (1 when unchanged).
 */
double lm_shrink_slope(struct lm *m, double slope_se);

/* Offset of model m at x, ns. */
double lm_offset(const struct lm *m, int64_t x_ns);

/*
 * Compose two models: inner maps clock A to clock B, outer maps B to C; the result maps A
 * to C directly (HCA/HCA2 merging, with no loss from rounding to ns). x0 stays inner's.
 */
struct lm lm_compose(const struct lm *outer, const struct lm *inner);

/* m applied to x: x + offset(x) rounded to the nearest ns. */
int64_t lm_map(const struct lm *m, int64_t x_ns);
/* The x that m maps to y (the nearest ns; m's slope must be > -1). */
int64_t lm_unmap(const struct lm *m, int64_t y_ns);

#endif
