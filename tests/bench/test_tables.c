/*
 * test_tables.c - print the bench tables, one "scheme NAME" or "op NAME" per line, so that
 * bench_test.py (case tables) can check that --help and the error lines list every entry:
 * the names come from the tables themselves here, not from the texts under test. Then
 * "counts MODE P N c_0 ... c_P-1", the v-variants' blocks (bench_vshare) for a few P and N,
 * which the case vcounts checks against the documented split.
 */
#include <stdio.h>

#include "bench/op.h"
#include "bench/scheme.h"

int main(void)
{
	static const int procs[] = {1, 2, 3, 4, 7, 16, 100};
	static const size_t ns[] = {0, 1, 5, 8, 1024, 1000003};
	for (size_t i = 0; i < bench_scheme_count(); i++)
		printf("scheme %s\n", bench_scheme_type(i)->name);
	for (size_t i = 0; i < bench_op_count(); i++)
		printf("op %s\n", bench_op_at(i)->name);
	for (int m = COUNTS_REGULAR; m <= COUNTS_SKEWED; m++)
		for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
			for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
				printf("counts %s %d %zu", bench_counts_name(m), procs[i], ns[k]);
				for (int r = 0; r < procs[i]; r++)
					printf(" %zu", bench_vshare(m, ns[k], procs[i], r));
				printf("\n");
			}
	return 0;
}
