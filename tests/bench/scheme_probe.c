/*
 * scheme_probe.c - scheme "probe", built only into the test tool hclock_bench_probe, and
 * added there exactly as docs/bench.md says a scheme is added: this one file, and one line
 * SCHEME_TYPE(probe) in src/bench/schemes.def (tests/bench/CMakeLists.txt appends it to a
 * copy that the hook build includes). bench_test.py (case tables) finds it in --help and in the
 * error line for an unknown scheme, and measures with it: nothing else was edited.
 * It measures like "none" and takes one argument, to show a scheme parsing its own.
 */
#include "bench/scheme.h"
#include "hclock_api.h"
#include "util/parse.h"

static int probe_measure(struct bench_scheme *s, const struct bench_params *p,
                         struct bench_buf *b, struct bench_series *out)
{
	return scheme_local_batches(s, p, b, out, NULL);
}

static int probe_create(const struct scheme_type *t, const char *args,
                        struct bench_scheme **out)
{
	struct scheme_arg a;
	long n;
	while (scheme_arg_next(&args, &a))
		if (!scheme_arg_is(&a, "n") || !a.val || parse_int(a.val, a.vlen, 0, 9, &n))
			return scheme_arg_bad(t, &a, "n=N needs an integer from 0 to 9");
	return scheme_new(t, out);
}

const struct scheme_type scheme_type_probe = {
	.name = "probe",
	.usage = "probe[/n=N]",
	.help = "test only: like none",
	.common_start = 0,
	.create = probe_create,
	.measure = probe_measure,
};
