/*
 * hull.c - the offset slot's "hull": SKaMPI-Offset's exchange (skampi.c) whose every
 * ping-pong the model learners keep, to fit them with convex hulls (numerics/hull_learner.h)
 * instead of a regression through per-measurement offsets: a strict bound of the offset at
 * any time, and a slope that converges faster where delays have a sharp minimum. As a plain
 * offset estimator (the skampi sync, hca's intercept pass) it is SKaMPI-Offset.
 */
#include "offset/offset.h"

static const struct offset_ops hull_ops = {.measure = offset_skampi_measure};

const struct offset_type offset_type_hull = {
	.name = "hull",
	.help = "SKaMPI's exchange, every ping-pong kept: models from convex hulls with strict "
	        "bounds",
	.ops = &hull_ops,
	.hull = 1,
};
