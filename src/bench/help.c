/* help.c - help text from the operation and scheme tables. */
#include <string.h>

#include "bench/help.h"
#include "bench/scheme.h"

void bench_help_wrap(FILE *f, const char *text, int col, int indent, int width)
{
	int fresh = col <= indent; /* nothing on this line yet beyond the indentation */
	if (col < indent)
		col += fprintf(f, "%*s", indent - col, "");
	for (;;) {
		text += strspn(text, " ");
		int n = (int)strcspn(text, " ");
		if (!n)
			break;
		if (!fresh && col + 1 + n > width) {
			col = fprintf(f, "\n%*s", indent, "") - 1;
			fresh = 1;
		}
		col += fprintf(f, "%s%.*s", fresh ? "" : " ", n, text);
		fresh = 0;
		text += n;
	}
	fputc('\n', f);
}

void bench_help_schemes(FILE *f, int indent, int width)
{
	for (size_t i = 0; i < bench_scheme_count(); i++) {
		const struct scheme_type *t = bench_scheme_type(i);
		int col = fprintf(f, "%*s%s:", indent, "", t->usage);
		bench_help_wrap(f, t->help, col, indent + 2, width);
	}
}
