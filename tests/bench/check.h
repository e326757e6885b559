/* check.h - the bench tests' checking macro: a failing check prints where, what and the
 * seed; the test exits non-zero at the end. */
#ifndef HCLOCK_TESTS_BENCH_CHECK_H
#define HCLOCK_TESTS_BENCH_CHECK_H

#include <stdio.h>

static int check_failures;
static unsigned long long check_seed;

#define CHECK(cond, ...)                                                                 \
	do {                                                                                 \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s (seed %llu): ", __FILE__, __LINE__, \
			        #cond, check_seed);                                                  \
			fprintf(stderr, __VA_ARGS__);                                                \
			fputc('\n', stderr);                                                         \
			check_failures++;                                                            \
		}                                                                                \
	} while (0)

static inline int check_end(const char *name)
{
	if (check_failures)
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
	else
		printf("%s: all checks passed\n", name);
	return check_failures ? 1 : 0;
}

#endif
