/*
 * linear.c - linear clock model (GLOBALCLOCKLM of Hunold & Carpen-Amarie, Alg. 1):
 *   t_out = t_in + intercept_ns + slope * (t_in - x0_ns)
 * Kept relative to x0 so that only a difference of timestamps becomes a double.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock/clock.h"
#include "util/err.h"
#include "util/fault.h"

struct linear_model {
	struct hclock_clock c;
	int64_t x0_ns;       /* inner-clock time where the offset is intercept_ns, ns */
	double intercept_ns; /* offset (reference minus inner) at x0_ns, ns */
	double slope;        /* d(offset)/d(inner time), dimensionless */
};

static void linear_flatten(const struct hclock_clock *c, struct wbuf *w)
{
	const struct linear_model *m = (const struct linear_model *)c;
	wbuf_put_i64(w, m->x0_ns);
	wbuf_put_f64(w, m->intercept_ns);
	wbuf_put_f64(w, m->slope);
	/* serialized form 2: the bound, if known (a copy under prop shares the time source, so
	 * the same readings have the same bound) */
	int known = bound_known(&c->bound);
	wbuf_put_u8(w, (uint8_t)known);
	if (known) {
		wbuf_put_i64(w, c->bound.at_ns);
		wbuf_put_f64(w, c->bound.lo_ns);
		wbuf_put_f64(w, c->bound.hi_ns);
		wbuf_put_f64(w, c->bound.rate);
	}
}

static int linear_describe(const struct hclock_clock *c, char *buf, size_t len)
{
	const struct linear_model *m = (const struct linear_model *)c;
	return snprintf(buf, len, "linear(slope=%.4e,offset=%.1fns@%lld)", m->slope, m->intercept_ns,
	                (long long)m->x0_ns);
}

static const struct clock_ops linear_ops = {
	.name = "linear", .type = CLOCK_T_LINEAR, .flatten = linear_flatten,
	.describe = linear_describe,
};

int hclock_model_linear(hclock_clock *inner, int64_t x0_ns, double intercept_ns, double slope,
                        hclock_clock **out)
{
	*out = NULL;
	if (!inner || !(fabs(intercept_ns) < COMP_MAX_INTERCEPT_NS) || !(fabs(slope) < COMP_MAX_SLOPE))
		return err_set(HCLOCK_EINVAL, "linear model needs an inner clock, |intercept| < 4e18 ns "
		                              "and |slope| < 0.5 (got %g ns, %g)", intercept_ns, slope);
	struct linear_model *m = fault_calloc(1, sizeof(*m));
	if (!m)
		return err_set(HCLOCK_ENOMEM, "out of memory creating a clock model");
	clock_init(&m->c, &linear_ops, inner);
	m->x0_ns = x0_ns;
	m->intercept_ns = intercept_ns;
	m->slope = slope;
	int rc = clock_set_layer(&m->c, &(struct lm){x0_ns, intercept_ns, slope});
	if (rc) {
		hclock_clock_free(&m->c);
		return rc;
	}
	*out = &m->c;
	return 0;
}

static int linear_unflatten(struct rbuf *r, const struct clock_ctx *ctx, struct hclock_clock *inner,
                            struct hclock_clock **out)
{
	(void)ctx;
	int64_t x0;
	double b, s;
	uint8_t known = 0;
	struct bound bd = bound_unknown();
	if (rbuf_i64(r, &x0) || rbuf_f64(r, &b) || rbuf_f64(r, &s) ||
	    (r->pos < r->len && rbuf_u8(r, &known)) ||
	    (known && (rbuf_i64(r, &bd.at_ns) || rbuf_f64(r, &bd.lo_ns) || rbuf_f64(r, &bd.hi_ns) ||
	               rbuf_f64(r, &bd.rate))))
		return err_set(HCLOCK_EINVAL, "serialized linear model is truncated");
	if (known > 1 || (known && !bound_known(&bd)))
		return err_set(HCLOCK_EINVAL, "serialized linear model has a malformed bound");
	int rc = hclock_model_linear(inner, x0, b, s, out);
	if (!rc)
		clock_set_bound(*out, &bd);
	return rc;
}

const struct clock_type clock_type_linear = {
	.name = "linear", .tag = CLOCK_T_LINEAR, .unflatten = linear_unflatten,
};
