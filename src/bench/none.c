/*
 * none.c - scheme "none": repetitions back to back with no synchronization between them,
 * so successive calls may overlap across processes (pipelining).
 */
#include "bench/scheme.h"

static int none_measure(struct bench_scheme *s, const struct bench_params *p,
                        struct bench_buf *b, struct bench_series *out)
{
	(void)s;
	return scheme_local_batches(p, b, out, NULL);
}

static const struct scheme_ops none_ops = {
	.name = "none", .measure = none_measure, .destroy = NULL,
};

int scheme_none_create(struct bench_scheme **out)
{
	return scheme_new(&none_ops, out);
}
