/*
 * bench_pause.c - the worked example of docs/bench.md ("Adding a scheme or an operation"): a
 * bench scheme "pause" that leaves a pause of T (default 10 us) before every repetition and
 * takes the argument t=T. To add it to hclock, copy this file to src/bench/pause.c and add the
 * line SCHEME_TYPE(pause) to src/bench/schemes.def. The build compiles it here against the
 * internal headers; tests/tool/doc_blocks.py checks that the docs show this file's text.
 */
#include <stdlib.h>
#include <time.h>

#include "bench/scheme.h"
#include "hclock_api.h"
#include "util/err.h"
#include "util/parse.h"

struct pause {
	struct bench_scheme base; /* first: the family's base */
	int64_t t_ns;             /* the pause before every repetition, ns */
};

static int pause_before(struct bench_scheme *s, MPI_Comm comm)
{
	const struct pause *ps = container_of(s, struct pause, base);
	struct timespec ts = {(time_t)(ps->t_ns / 1000000000), (long)(ps->t_ns % 1000000000)};
	(void)comm;
	nanosleep(&ts, NULL);
	return 0;
}

static int pause_measure(struct bench_scheme *s, const struct bench_params *p,
                         struct bench_buf *b, struct bench_series *out)
{
	return scheme_local_batches(s, p, b, out, pause_before);
}

static int pause_create(const struct scheme_type *t, const char *args,
                        struct bench_scheme **out)
{
	struct scheme_arg a;
	int64_t t_ns = 10000;
	while (scheme_arg_next(&args, &a))
		if (!scheme_arg_is(&a, "t") || !a.val ||
		    parse_duration_ns(a.val, a.vlen, 0, 1000000000, &t_ns))
			return scheme_arg_bad(t, &a, "t=T needs a duration up to 1s, e.g. 50us");
	struct pause *ps = calloc(1, sizeof(*ps));
	if (!ps)
		return err_set(HCLOCK_ENOMEM, "out of memory for scheme %s", t->name);
	ps->base.type = t;
	ps->t_ns = t_ns;
	*out = &ps->base;
	return 0;
}

const struct scheme_type scheme_type_pause = {
	.name = "pause", .usage = "pause[/t=T]",
	.help = "a pause of T (10us) before every repetition",
	.common_start = 0, .create = pause_create, .measure = pause_measure,
};
