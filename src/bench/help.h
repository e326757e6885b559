/*
 * help.h - the parts of hclock bench's and hclock imbalance's --help that come from the
 * tables (operations in op.c, schemes in scheme.c), so that a new table entry shows up in
 * the help without another edit. No MPI.
 */
#ifndef HCLOCK_BENCH_HELP_H
#define HCLOCK_BENCH_HELP_H

#include <stdio.h>

/* Text broken into lines of at most width columns (words are never split) and ended with a
 * newline: the first line continues at column col of a line already begun (padded to
 * indent if col is less), the next ones are indented by indent spaces. */
void bench_help_wrap(FILE *f, const char *text, int col, int indent, int width);
/* One entry per scheme, in table order: "NAME[ARGS]: help" at indent, wrapped at width
 * with the continuation lines indented by two more. */
void bench_help_schemes(FILE *f, int indent, int width);

#endif
