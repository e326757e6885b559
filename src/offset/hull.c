/*
 * hull.c - the offset slot's "hull": SKaMPI-Offset's exchange (skampi.c) whose every
 * ping-pong the model learners keep, to fit them with convex hulls (numerics/hull_learner.h)
 * instead of a regression through per-measurement offsets: a strict bound of the offset at
 * any time, and a slope that converges faster where delays have a sharp minimum. As a plain
 * offset estimator (skampi sync, hca's intercept pass, the checker) it is SKaMPI-Offset.
 */
#include <stdlib.h>

#include "offset/offset.h"
#include "util/err.h"
#include "util/fault.h"

static const struct offset_ops hull_ops = {.measure = offset_skampi_measure};

static int hull_create(struct offset_alg **out)
{
	struct offset_alg *a = fault_calloc(1, sizeof(*a));
	if (!a)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	a->ops = &hull_ops;
	*out = a;
	return 0;
}

const struct offset_type offset_type_hull = {
	.name = "hull",
	.help = "SKaMPI's exchange, every ping-pong kept: models from convex hulls with strict "
	        "bounds",
	.create = hull_create,
	.hull = 1,
};
