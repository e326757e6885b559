/*
 * test_tables.c - print the bench tables, one "scheme NAME" or "op NAME" per line, so that
 * bench_test.py (case tables) can check that --help and the error lines list every entry:
 * the names come from the tables themselves here, not from the texts under test.
 */
#include <stdio.h>

#include "bench/op.h"
#include "bench/scheme.h"

int main(void)
{
	for (size_t i = 0; i < bench_scheme_count(); i++)
		printf("scheme %s\n", bench_scheme_type(i)->name);
	for (size_t i = 0; i < bench_op_count(); i++)
		printf("op %s\n", bench_op_at(i)->name);
	return 0;
}
