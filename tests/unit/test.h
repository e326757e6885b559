/* test.h - the unit tests' few macros (chrony's test/unit style): a failing check prints
 * where, what, and the seed, and the test exits non-zero at the end. */
#ifndef HCLOCK_TEST_H
#define HCLOCK_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int test_failures;
static unsigned long long test_seed;

#define TEST_CHECK(cond, ...)                                                            \
	do {                                                                                 \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s (seed %llu): ", __FILE__, __LINE__, \
			        #cond, test_seed);                                                   \
			fprintf(stderr, __VA_ARGS__);                                                \
			fputc('\n', stderr);                                                         \
			test_failures++;                                                             \
		}                                                                                \
	} while (0)

static inline int test_end(const char *name)
{
	if (test_failures)
		fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
	else
		printf("%s: all checks passed\n", name);
	return test_failures ? 1 : 0;
}

#endif
