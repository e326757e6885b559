/*
 * none.c - scheme "none": repetitions back to back with no synchronization between them,
 * so successive calls may overlap across processes (pipelining).
 */
#include "bench/scheme.h"

static int none_measure(struct bench_scheme *s, const struct bench_params *p,
                        struct bench_buf *b, struct bench_series *out)
{
	return scheme_local_batches(s, p, b, out, NULL);
}

const struct scheme_type scheme_type_none = {
	.name = "none",
	.usage = "none",
	.help = "back to back; calls may overlap across processes",
	.common_start = 0,
	.create = scheme_create_plain,
	.measure = none_measure,
};
