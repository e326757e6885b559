/* offset.c - offset-only clock model: t_out = t_in + offset_ns (SKaMPI's model: no drift). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock/clock.h"
#include "util/err.h"
#include "util/fault.h"

struct offset_model {
	struct hclock_clock c;
	double offset_ns; /* reference minus inner, ns */
};

static void offset_flatten(const struct hclock_clock *c, struct wbuf *w)
{
	wbuf_put_f64(w, ((const struct offset_model *)c)->offset_ns);
}

static int offset_describe(const struct hclock_clock *c, char *buf, size_t len)
{
	return snprintf(buf, len, "offset(%.1fns)", ((const struct offset_model *)c)->offset_ns);
}

static const struct clock_ops offset_ops = {
	.name = "offset", .type = CLOCK_T_OFFSET, .flatten = offset_flatten,
	.describe = offset_describe,
};

int hclock_model_offset(hclock_clock *inner, double offset_ns, hclock_clock **out)
{
	*out = NULL;
	if (!inner || !(fabs(offset_ns) < COMP_MAX_INTERCEPT_NS))
		return err_set(HCLOCK_EINVAL, "offset model needs an inner clock and |offset| < 4e18 ns "
		                              "(got %g)", offset_ns);
	struct offset_model *m = fault_calloc(1, sizeof(*m));
	if (!m)
		return err_set(HCLOCK_ENOMEM, "out of memory creating a clock model");
	clock_init(&m->c, &offset_ops, inner);
	m->offset_ns = offset_ns;
	int rc = clock_set_layer(&m->c, &(struct lm){0, offset_ns, 0});
	if (rc) {
		hclock_clock_free(&m->c);
		return rc;
	}
	*out = &m->c;
	return 0;
}

static int offset_unflatten(struct rbuf *r, const struct clock_ctx *ctx, struct hclock_clock *inner,
                            struct hclock_clock **out)
{
	(void)ctx;
	double o;
	if (rbuf_f64(r, &o))
		return err_set(HCLOCK_EINVAL, "serialized offset model is truncated");
	return hclock_model_offset(inner, o, out);
}

const struct clock_type clock_type_offset = {
	.name = "offset", .tag = CLOCK_T_OFFSET, .unflatten = offset_unflatten,
};
